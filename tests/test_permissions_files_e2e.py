"""Issue 10 items 1, 5, 7, 8 end to end: the real Bash, Write and Edit tools in a real Worker driven by the
scripted model, with the most permissive setting a deny rule must survive (bypassPermissions and a hook that
allows everything). Marker files prove the denied writes and reads never happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookloop import AllowAlways, Finished, Paused, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.hooks import Allow
from hookloop.permissions import PermissionMode, PermissionPolicy
from hookloop.tools.builtin import builtin_tools

pytestmark = pytest.mark.anyio

DENY = ["Edit(./secrets/**)", "Read(./.env)"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "sub").mkdir()
    (ws / ".git").mkdir()
    (ws / ".claude").mkdir()
    (ws / "secrets" / "key").write_text("ORIGINAL")
    (ws / ".env").write_text("ENV_SECRET")
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".claude" / "settings.json").write_text("{}")
    return ws


def worker(
    root: Path, turns: list[list[Any]], *, mode: PermissionMode = "bypassPermissions", allow: list[str] | None = None
) -> Worker:
    w = Worker(
        ScriptedClient(turns),
        tools=builtin_tools(root, bash_env={"OLDPWD": str(root / "secrets")}),
        permissions=PermissionPolicy(allow=allow or [], deny=DENY, mode=mode, workspace=root),
        workspace=root,
    )
    w.add_pre_tool_call_hook(lambda info: Allow("the hook allows everything"))
    return w


def bash_turns(*commands: str) -> list[list[Any]]:
    return [[ToolUse("Bash", {"command": c}, call_id=f"b{i}")] for i, c in enumerate(commands)] + [[Text("done")]]


def results(w: Worker) -> list[ToolResult]:
    return [i for i in w.history if isinstance(i, ToolResult)]


def leaked(root: Path) -> list[Path]:
    """Files other than .env that hold its secret, or secrets/ files that changed."""
    found = [p for p in root.rglob("*") if p.is_file() and p.name != ".env" and "ENV_SECRET" in p.read_text()]
    if (root / "secrets" / "key").read_text() != "ORIGINAL":
        found.append(root / "secrets" / "key")
    return found + [p for p in (root / "secrets").iterdir() if p.name != "key"]


async def test_redirection_targets_expanded_by_bash_are_denied(root: Path) -> None:
    commands = [
        "echo PWNED > ~+/secrets/key",
        "echo PWNED > secre?s/key",
        "echo PWNED > secret{s..s}/key",
        "echo PWNED >| secret[s]/key",
        "echo PWNED | tee ~+/secrets/key",
        "echo PWNED >> ~-/planted",  # OLDPWD is secrets/ in the tool's environment
        "cat < .e?v > leak1.txt",
        "cat < ~+/.env > leak2.txt",
        "echo PWNED > /dev/fd/../..$PWD/secrets/key",
    ]
    w = worker(root, bash_turns(*commands, "echo fine > ~+/ok.txt"))
    outcome = await w.run("try")
    assert isinstance(outcome, Finished)
    denied, control = results(w)[:-1], results(w)[-1]
    assert all(r.is_error and "permission denied" in r.content for r in denied), [r.content for r in denied]
    assert not control.is_error, control.content
    assert (root / "ok.txt").read_text() == "fine\n"  # the tool really runs what is allowed
    assert leaked(root) == []
    assert not (root / "leak1.txt").exists()
    assert not (root / "leak2.txt").exists()


async def test_the_remembered_directory_and_cd_in_the_command_are_followed(root: Path) -> None:
    turns = bash_turns(
        "cd secrets",  # allowed: only changes directory
        "echo PWNED > key",  # runs in secrets/
        "cat < ../.env > ../leak.txt",
        "cd .. && cd secrets && echo PWNED > key",
        "pwd",
    )
    w = worker(root, turns)
    assert isinstance(await w.run("try"), Finished)
    contents = [(r.content, r.is_error) for r in results(w)]
    assert contents[0] == ("(no output)", False)
    assert all(error and "permission denied" in text for text, error in contents[1:4]), contents
    assert contents[4] == (str(root / "secrets"), False)  # the tool really is in secrets/
    assert leaked(root) == []
    assert not (root / "leak.txt").exists()


async def test_cd_then_write_in_one_command_is_denied(root: Path) -> None:
    w = worker(root, bash_turns("cd secrets && echo PWNED > key", "cd secrets; echo PWNED | tee key", "cd sub; pwd"))
    assert isinstance(await w.run("try"), Finished)
    first, second, third = results(w)
    assert first.is_error
    assert second.is_error
    assert third.content == str(root / "sub")
    assert leaked(root) == []


async def test_parallel_calls_start_in_the_same_directory_and_are_decided_there(root: Path) -> None:
    # Both calls of one batch start before either ends, so the second runs in the root, as it was decided.
    turns: list[list[Any]] = [
        [
            ToolUse("Bash", {"command": "cd secrets"}, call_id="p1"),
            ToolUse("Bash", {"command": "echo PARALLEL > key"}, call_id="p2"),
        ],
        [Text("done")],
    ]
    w = worker(root, turns)
    assert isinstance(await w.run("try"), Finished)
    one, two = results(w)
    assert not one.is_error
    assert not two.is_error
    assert (root / "key").read_text() == "PARALLEL\n"
    assert leaked(root) == []


async def test_after_a_parallel_batch_the_next_call_is_decided_where_it_runs(root: Path) -> None:
    # Which call of a parallel batch ends last decides where the tool is afterwards; the next decision follows it.
    turns: list[list[Any]] = [
        [
            ToolUse("Bash", {"command": "cd secrets"}, call_id="p1"),
            ToolUse("Bash", {"command": "cd sub"}, call_id="p2"),
        ],
        [ToolUse("Bash", {"command": "echo PWNED > key"}, call_id="p3")],
        [ToolUse("Bash", {"command": "pwd"}, call_id="p4")],
        [Text("done")],
    ]
    w = worker(root, turns)
    assert isinstance(await w.run("try"), Finished)
    third, fourth = results(w)[2:]
    if fourth.content == str(root / "secrets"):
        assert third.is_error
    else:
        assert fourth.content == str(root / "sub")
        assert (root / "sub" / "key").read_text() == "PWNED\n"
    assert leaked(root) == []


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
async def test_protected_paths_pause_for_approval_even_behind_a_hook_allow(root: Path, mode: PermissionMode) -> None:
    calls = [
        ToolUse("Write", {"file_path": ".git/config", "content": "PWNED"}),
        ToolUse("Edit", {"file_path": ".claude/settings.json", "old_string": "{}", "new_string": "PWNED"}),
        ToolUse("Bash", {"command": "echo PWNED > .git/hooks-planted"}),
        ToolUse("Bash", {"command": "cd .claude && echo PWNED >> settings.json"}),
        ToolUse("Write", {"file_path": ".mcp.json", "content": "PWNED"}),
    ]
    for call in calls:
        w = worker(root, [[call], [Text("done")]], mode=mode, allow=["Bash(echo:*)", "Bash(cd:*)"])
        outcome = await w.run("try")
        assert isinstance(outcome, Paused), (call, outcome)
        assert "protected path" in outcome.pending[0].asked_by
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert (root / ".claude" / "settings.json").read_text() == "{}"
    assert not (root / ".git" / "hooks-planted").exists()
    assert not (root / ".mcp.json").exists()


async def test_an_allow_rule_that_names_a_protected_path_lets_the_write_through(root: Path) -> None:
    w = worker(
        root, [[ToolUse("Write", {"file_path": ".claude/settings.json", "content": "{}\n"})], [Text("done")]],
        allow=["Edit(./.claude/settings.json)"],
    )  # fmt: skip
    assert isinstance(await w.run("write"), Finished)
    assert not results(w)[0].is_error
    assert (root / ".claude" / "settings.json").read_text() == "{}\n"


async def test_allow_always_adds_the_narrowest_rule_not_the_whole_tool(root: Path) -> None:
    turns = bash_turns("echo one > a.txt", "echo two > b.txt", "ls")
    w = Worker(
        ScriptedClient(turns),
        tools=builtin_tools(root),
        permissions=PermissionPolicy(mode="default", workspace=root),
        workspace=root,
    )
    outcome = await w.run("go")
    assert isinstance(outcome, Paused)
    outcome = await w.resume(outcome.checkpoint, {"b0": AllowAlways()})
    # `echo two` is covered by the session rule Bash(echo:*); `ls` is not, so the run asks again
    assert isinstance(outcome, Paused)
    assert [c.call_id for c in outcome.pending] == ["b2"]
    assert (root / "b.txt").read_text() == "two\n"
    assert w.permissions is not None
    assert w.permissions.check("Bash", {"command": "echo three"}) is not None
    assert w.permissions.check("Bash", {"command": "rm -rf /"}) is None


async def test_files_a_program_writes_through_its_arguments_are_checked_against_edit_rules(root: Path) -> None:
    """rm/cp/mv/touch/dd of=/sed -i/git --output …: a known operand inside an Edit-denied path is denied in
    bypassPermissions behind a hook's allow; the same programs elsewhere still run."""
    (root / "x").write_text("PWNED")
    commands = [
        "rm secrets/key",
        "rm -rf secrets",
        "cp x secrets/key",
        "cp -t secrets x",
        "mv x secrets/key",
        "touch secrets/planted",
        "dd if=x of=secrets/key",
        "sed -i s/ORIGINAL/PWNED/ secrets/key",
        "cd secrets && truncate -s 0 key",
        "ln -sf ../x secrets/planted",
        f"sudo -n true 2>/dev/null; rm {root}/secrets/key",
    ]
    w = worker(root, bash_turns(*commands, "cp x y && echo copied"))
    outcome = await w.run("try")
    assert isinstance(outcome, Finished)
    denied, control = results(w)[:-1], results(w)[-1]
    assert all(r.is_error and "Edit(./secrets/**)" in r.content for r in denied), [r.content for r in denied]
    assert leaked(root) == []
    assert control.content.strip() == "copied"
    assert (root / "y").read_text() == "PWNED"
