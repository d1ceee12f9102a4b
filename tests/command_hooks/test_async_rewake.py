"""``asyncRewake``: a background hook that exits 2 wakes the model (issue 12, item 12). While the run is open the
turn end waits for it and the run continues with its message; after the run ended the next run starts with it.
Real background scripts in the public style ("run the tests after an edit, tell Claude if they fail")."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop import Finished, Text, ToolUse, tool
from hookloop.items import Message
from hookloop.tools import Tool

from .live_kit import env_fixture  # noqa: F401  (the env fixture)
from .test_worker_command_hooks import Env, group, request_text, results, worker_for

pytestmark = pytest.mark.anyio

# After an edit, "run the test suite" in the background (it waits until the test says the suite may finish,
# so the run provably goes on meanwhile) and wake Claude only when it fails.
BACKGROUND_TESTS = """
cat > /dev/null
while [ ! -f "$CLAUDE_PROJECT_DIR/suite-may-finish" ]; do sleep 0.02; done
if grep -q FAIL "$CLAUDE_PROJECT_DIR/result.txt"; then
  echo "Background test run failed: test_parser (expected 3, got 4)" >&2
  exit 2
fi
exit 0
"""


def release_tool(project: Path) -> Tool:
    @tool(name="finish_suite")
    def finish_suite() -> str:
        """Let the background test suite finish."""
        (project / "suite-may-finish").touch()
        return "released"

    return finish_suite


def settings_with_rewake(env: Env, **fields: str) -> None:
    env.script("bg-tests.sh", BACKGROUND_TESTS)
    env.settings({"PostToolUse": group(".claude/hooks/bg-tests.sh", matcher="Write", asyncRewake=True, **fields)})


@tool(name="Write")
def write(file_path: str, content: str) -> str:
    """Write a file (relative to the current directory)."""
    Path(file_path).write_text(content)
    return f"wrote {file_path}"


async def test_an_async_rewake_hook_that_fails_after_the_turn_wakes_the_model(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(env.project)
    settings_with_rewake(env)
    turns = [
        [ToolUse("Write", {"file_path": "result.txt", "content": "FAIL"})],
        [ToolUse("finish_suite", {})],  # the hook is still waiting: it did not block the run
        [Text("All done.")],
        [Text("Fixed the parser test.")],
    ]
    worker, client, _ = worker_for(env, turns, tools=[write, release_tool(env.project)])
    outcome = await worker.run("change the parser")
    assert isinstance(outcome, Finished)
    assert outcome.text == "Fixed the parser test."
    assert len(client.requests) == 4
    assert "Background test run failed: test_parser" in request_text(client, 3)
    woken = [m for m in worker.history if isinstance(m, Message) and m.meta.get("event") == "asyncRewake"]
    assert len(woken) == 1
    assert woken[0].text == (
        '<hook-context hook="command hooks" event="asyncRewake">\n'
        "Background test run failed: test_parser (expected 3, got 4)\n</hook-context>"
    )
    assert results(worker)[0].content == "wrote result.txt"  # the tool result was not held up by the hook


async def test_an_async_rewake_hook_that_passes_wakes_nobody(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(env.project)
    settings_with_rewake(env)
    turns = [
        [ToolUse("Write", {"file_path": "result.txt", "content": "ok"})],
        [ToolUse("finish_suite", {})],
        [Text("All done.")],
    ]
    worker, client, _ = worker_for(env, turns, tools=[write, release_tool(env.project)])
    outcome = await worker.run("change the parser")
    assert isinstance(outcome, Finished)
    assert outcome.text == "All done."
    assert len(client.requests) == 3


# A Stop hook that ends the session outright, and an asyncRewake UserPromptSubmit hook that only finishes once
# the session is ending: its message cannot wake this run, so the next run starts with it.
LATE_REWAKE = """
cat > /dev/null
while [ ! -f "$CLAUDE_PROJECT_DIR/session-ending" ]; do sleep 0.02; done
echo "Reminder from the nightly check: the staging deploy is red" >&2
exit 2
"""
END_SESSION = """
cat > /dev/null
touch "$CLAUDE_PROJECT_DIR/session-ending"
echo '{"continue": false, "stopReason": "done for today"}'
"""


async def test_a_rewake_message_after_the_run_ended_starts_the_next_run(env: Env) -> None:
    env.script("late.sh", LATE_REWAKE)
    env.script("end.sh", END_SESSION)
    env.settings(
        {
            "UserPromptSubmit": group(".claude/hooks/late.sh", asyncRewake=True),
            "Stop": group(".claude/hooks/end.sh"),
        }
    )
    worker, client, _ = worker_for(env, [[Text("first answer")], [Text("second answer")]], grace=30)
    first = await worker.run("first")
    assert isinstance(first, Finished)
    assert first.text == "first answer"
    assert len(client.requests) == 1  # continue: false: the run was not woken
    (env.project / "session-ending").unlink()
    second = await worker.run("second")
    assert isinstance(second, Finished)
    assert "the staging deploy is red" in request_text(client, 1)


def test_a_wake_up_message_is_stderr_else_stdout_and_capped() -> None:
    from hookloop.command_hooks.rewake import rewake_text

    assert rewake_text(0, "out", "err") is None
    assert rewake_text(1, "out", "err") is None
    assert rewake_text(2, "out", " err \n") == "err"
    assert rewake_text(2, "out\n", "") == "out"
    long = rewake_text(2, "", "x" * 20_000)
    assert long is not None
    assert len(long) <= 10_000
    assert "hook output truncated: 20000 characters, limit 10000" in long


async def test_rewake_message_prefixes_the_wake_up_message(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(env.project)
    settings_with_rewake(env, rewakeMessage="Background check findings — address and continue", rewakeSummary="tests")
    turns = [
        [ToolUse("Write", {"file_path": "result.txt", "content": "FAIL"})],
        [ToolUse("finish_suite", {})],
        [Text("All done.")],
        [Text("Fixed.")],
    ]
    worker, client, _ = worker_for(env, turns, tools=[write, release_tool(env.project)])
    assert not [d for d in env.load().diagnostics if "rewake" in d.path]  # both fields are known
    await worker.run("change the parser")
    assert "Background check findings — address and continue\n\nBackground test run failed" in request_text(client, 3)


def test_a_rewake_message_that_is_not_a_string_is_a_warning(env: Env) -> None:
    env.settings({"Stop": group("true", asyncRewake=True, rewakeMessage=42)})
    hooks = env.load()
    (warning,) = [d for d in hooks.diagnostics if d.path.endswith("rewakeMessage")]
    assert warning.severity == "warning"
    assert "non-empty string" in warning.message
    handler = hooks.hooks[0].handler
    assert getattr(handler, "rewake_message", "unset") is None


async def test_rewake_wait_bounds_how_long_a_turn_end_waits(env: Env) -> None:
    from hookloop import ScriptedClient, Worker

    env.settings({"UserPromptSubmit": group("cat >/dev/null; exec sleep 30", asyncRewake=True)})
    hooks = env.load(grace=0.2)
    hooks.rewake_wait = 0.3
    worker = Worker(ScriptedClient([[Text("answer")]]))
    env.workers.append(worker)
    hooks.install(worker)
    outcome = await worker.run("go")
    assert isinstance(outcome, Finished)
    assert outcome.text == "answer"  # not woken: the hook was still running when the wait ended
