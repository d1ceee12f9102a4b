"""End to end (issue 10 items 2-4): the real Bash tool in a real Worker never runs what the rules deny.

Each case is a command that creates a marker file in the workspace through one evasion class. It runs twice
through a Worker driven by the scripted model, with the built-in ``BashTool`` executing in real bash:

1. under a policy that lets it through (a whole-tool allow, or bypassPermissions with no rule against it) —
   the marker appears, which proves the command really runs the program the rules are about;
2. under the policy of the case (a deny rule for the program, or a narrower allow rule that must not cover
   code that runs code) — the call ends in an error result or a pause and the marker never appears.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hookloop import Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Allow
from hookloop.permissions import PermissionMode, PermissionPolicy
from hookloop.tools.builtin import BashTool, Workspace

pytestmark = pytest.mark.anyio

PYTHON = Path(sys.executable).name if shutil.which(Path(sys.executable).name) else "python3"


@dataclass(frozen=True)
class Attack:
    name: str
    command: str
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    ask: tuple[str, ...]
    mode: PermissionMode
    hook_allow: bool = False


TOUCH = ("Bash(touch:*)",)
ATTACKS = [
    # item 2: program names assembled at run time, shells reading standard input
    Attack("assembled-name", "x=ouch; t$x marker", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("expansion-default", "${x:-touch} marker", ("Bash",), TOUCH, (), "bypassPermissions", True),
    Attack("backticks-in-name", "t`:`ouch marker", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("positional-in-name", "set -- o; t$@uch marker", ("Bash",), TOUCH, (), "default", True),
    Attack("printf-name", "\"$(printf '\\x74ouch')\" marker", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("glob-name", "/usr/bin/tou?h marker", ("Bash",), TOUCH, (), "acceptEdits", True),
    Attack("base64-pipe-sh", "echo dG91Y2ggbWFya2Vy | base64 -d | sh", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("bash-dev-stdin", "bash /dev/stdin <<< 'touch marker'", ("Bash",), TOUCH, (), "bypassPermissions", True),
    Attack("dot-dev-stdin", ". /dev/stdin <<< 'touch marker'", ("Bash",), TOUCH, (), "dontAsk"),
    Attack("sh-proc-fd", "echo 'touch marker' | sh /proc/self/fd/0", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("eval-runtime", 'eval "$(echo dG91Y2ggbWFya2Vy | base64 -d)"', ("Bash",), TOUCH, (), "plan", True),
    # item 3: options before a subcommand, git aliases and settings that are commands
    Attack(
        "git-alias-hides-subcommand",
        "git -c alias.p='!touch marker' p",
        ("Bash(git:*)",),
        ("Bash(git push:*)",),
        (),
        "bypassPermissions",
        True,
    ),
    Attack("git-alias-runs-denied", "git -c alias.t='!touch marker' t", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack(
        "git-global-option-ask",
        "git -C . -c alias.p='!touch marker' p",
        ("Bash(git:*)",),
        (),
        ("Bash(git push:*)",),
        "default",
        True,
    ),
    # item 4: code that runs code, behind narrower allow rules
    Attack("python-c", f"{PYTHON} -c \"open('marker', 'w')\"", (f"Bash({PYTHON}:*)",), (), (), "dontAsk"),
    Attack(
        "python-os-system",
        f"{PYTHON} -c \"import os; os.system('touch marker')\"",
        ("Bash",),
        TOUCH,
        (),
        "bypassPermissions",
    ),
    Attack("sed-w", "sed -n 'w marker' /dev/null", ("Bash(sed:*)",), (), (), "dontAsk"),
    Attack("sed-e", "echo x | sed '1e touch marker'", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("find-fprint", "find . -maxdepth 0 -fprint marker", ("Bash(find:*)",), (), (), "dontAsk"),
    Attack("find-exec", "find . -maxdepth 0 -exec touch marker \\;", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("awk-redirect", 'awk \'BEGIN{printf "" > "marker"}\'', ("Bash(awk:*)",), (), (), "plan"),
    Attack("awk-system", "awk 'BEGIN{system(\"touch marker\")}'", ("Bash",), TOUCH, (), "bypassPermissions"),
    Attack("xargs", "echo marker | xargs touch", ("Bash(echo:*)", "Bash(xargs:*)"), TOUCH, (), "bypassPermissions"),
    Attack(
        "git-diff-output",
        "git diff --no-index --output=marker /dev/null /dev/null",
        ("Bash(git:*)",),
        (),
        (),
        "dontAsk",
    ),
]


async def run_once(root: Path, attack: Attack, policy: PermissionPolicy, *, hook_allow: bool) -> ToolResult | None:
    worker = Worker(
        ScriptedClient([[ToolUse("Bash", {"command": attack.command}, call_id="b1")], [Text("done")]]),
        tools=[BashTool(Workspace(root))],
        permissions=policy,
        workspace=root,
    )
    if hook_allow:
        worker.add_pre_tool_call_hook(lambda info: Allow("the hook approves"))
    outcome = await worker.run("go")
    results = [item for item in worker.history if isinstance(item, ToolResult)]
    if isinstance(outcome, Paused):
        assert not results
        return None
    assert len(results) == 1
    return results[0]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.name)
async def test_the_denied_program_never_runs(tmp_path: Path, attack: Attack) -> None:
    marker_root = tmp_path / "control"
    marker_root.mkdir()
    control = await run_once(
        marker_root, attack, PermissionPolicy(allow=["Bash"], mode="bypassPermissions", workspace=marker_root),
        hook_allow=False,
    )  # fmt: skip
    assert control is not None
    assert (marker_root / "marker").exists(), f"the control run did not create the marker: {control.content}"

    root = tmp_path / "guarded"
    root.mkdir()
    policy = PermissionPolicy(allow=attack.allow, deny=attack.deny, ask=attack.ask, mode=attack.mode, workspace=root)
    result = await run_once(root, attack, policy, hook_allow=attack.hook_allow)
    assert not (root / "marker").exists(), "the denied program ran"
    if result is not None:
        assert result.is_error
        assert "denied" in result.content or "permission" in result.content, result.content
