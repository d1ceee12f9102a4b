"""Hook scripts shaped like the ones people publish (GitHub collections of Claude Code and Cline hooks), run
unmodified by a real Worker with the real built-in tools: what they read from stdin and what their answers do
must be what Claude Code (or Cline) gives them. Each test names the public pattern it stands for; the scripts
are our own."""

from __future__ import annotations

from typing import Any

import pytest

from hookloop import Finished, Text
from hookloop.items import Message

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import Env, group, worker_for

pytestmark = pytest.mark.anyio


def contexts(worker_history: tuple[Any, ...], event: str) -> list[str]:
    return [
        item.text
        for item in worker_history
        if isinstance(item, Message) and item.role == "user" and f'event="{event}"' in item.text
    ]


# --------------------------------------------------------------------------------------------------------------
# SessionStart: one-time set-up on "startup", context on every start
# --------------------------------------------------------------------------------------------------------------

# The "install what the project needs once" hook, registered with matcher "startup" (web-session set-up scripts).
SETUP_ONCE = """
cat > /dev/null
echo "set up" >> "$CLAUDE_PROJECT_DIR/setup.log"
"""

# The plugin style that injects a skill as context on "startup|resume|clear|compact" (JSON, printf-built).
INJECT = r"""
source=$(jq -r '.source')
echo "$source" >> "$CLAUDE_PROJECT_DIR/sources.log"
printf '{\n  "hookSpecificOutput": {\n    "hookEventName": "SessionStart",\n    "additionalContext": "%s"\n  }\n}\n' \
  "You have the house rules (source: $source)."
"""


async def test_a_run_that_continues_the_conversation_is_a_resume_so_startup_set_up_runs_once(env: Env) -> None:
    env.script("setup.sh", SETUP_ONCE)
    env.script("inject.sh", INJECT)
    env.settings(
        {
            "SessionStart": [
                *group('"$CLAUDE_PROJECT_DIR"/.claude/hooks/setup.sh', matcher="startup"),
                *group("${CLAUDE_PROJECT_DIR}/.claude/hooks/inject.sh", matcher="startup|resume|clear|compact"),
            ]
        }
    )
    worker, _, _ = worker_for(env, [[Text("one")], [Text("two")], [Text("three")]])
    for prompt in ("first", "second", "third"):
        assert isinstance(await worker.run(prompt), Finished)

    # Claude Code: the first prompt starts the session; a later one on the same conversation is `--continue`
    assert (env.project / "sources.log").read_text().split() == ["startup", "resume", "resume"]
    assert (env.project / "setup.log").read_text().splitlines() == ["set up"]
    injected = contexts(worker.history, "SessionStart")
    assert len(injected) == 3
    assert "You have the house rules (source: startup)." in injected[0]
    assert "(source: resume)" in injected[1]

    fresh, _, _ = worker_for(env, [[Text("hello")]])
    assert isinstance(await fresh.run("new session"), Finished)
    assert (env.project / "sources.log").read_text().split()[-1] == "startup"
    assert (env.project / "setup.log").read_text().splitlines() == ["set up", "set up"]
