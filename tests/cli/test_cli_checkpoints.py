"""`hookloop resume` with checkpoints it must refuse — tampered, replayed, too big, too deep, old, from another
directory — each one line and exit code 2; and with one made under looser flags, the current flags decide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookloop._checkpoint_auth import KEY_FILE, key_id, mac

TOUCH = "touch cli.marker"
HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def hookloop(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HOOKLOOP, *args], capture_output=True, text=True, env=env, cwd=cwd, input="", timeout=60)


def bash_then_done(project: Path, command: str) -> Path:
    turns = [[{"text": "Touching."}, {"tool": "Bash", "arguments": {"command": command}}], [{"text": "All done."}]]
    path = project / "model.json"
    path.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return path


def paused(project: Path, env: dict[str, str], *flags: str) -> Path:
    model = bash_then_done(project, TOUCH)
    first = hookloop("run", "go", "--model", f"scripted:{model}", "--cwd", str(project), *flags, env=env, cwd=project)
    assert first.returncode == 3, first.stderr
    return next(Path(env["HOOKLOOP_HOME"], "checkpoints").glob("*.checkpoint.json"))


def refused(out: Any, message: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("hookloop: ")
    assert message in lines[0], lines[0]
    assert "Traceback" not in out.stderr


def forge(path: Path, env: dict[str, str], edit: Any) -> None:
    """An attacker who can read the user's key edits the checkpoint and signs it again."""
    key = bytes.fromhex(Path(env["HOOKLOOP_HOME"], KEY_FILE).read_text().strip())
    data = json.loads(path.read_text())
    edit(data)
    body = {k: v for k, v in data.items() if k != "mac"}
    body["key_id"] = key_id(key)
    body["mac"] = mac(key, body)
    path.write_text(json.dumps(body))


def test_resume_twice_is_refused_and_fork_resumes_again(project: Path, env: dict[str, str]) -> None:
    path = paused(project, env)
    first = hookloop("resume", str(path), "--yes", env=env, cwd=project)
    assert first.returncode == 0, first.stderr
    assert (project / "cli.marker").exists()
    (project / "cli.marker").unlink()
    refused(hookloop("resume", str(path), "--yes", env=env, cwd=project), "was already resumed at")
    assert not (project / "cli.marker").exists()
    forked = hookloop("resume", str(path), "--yes", "--fork", env=env, cwd=project)
    assert forked.returncode == 0, forked.stderr
    assert (project / "cli.marker").exists()


def test_a_tampered_checkpoint_is_refused(project: Path, env: dict[str, str]) -> None:
    path = paused(project, env)
    data = json.loads(path.read_text())
    data["batch"][0]["state"] = "ready"
    path.write_text(json.dumps(data))
    refused(hookloop("resume", str(path), env=env, cwd=project), "changed after it was written")
    data["options"]["permission_mode"] = "bypassPermissions"
    path.write_text(json.dumps(data))
    refused(hookloop("resume", str(path), env=env, cwd=project), "changed after it was written")
    assert not (project / "cli.marker").exists()


def test_a_checkpoint_from_another_machine_says_which_key_it_needs(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    path = paused(project, env)
    other = {**env, "HOOKLOOP_HOME": str(tmp_path / "other-machine")}
    refused(hookloop("resume", str(path), "--yes", env=other, cwd=project), "made with another key")


def test_looser_saved_options_do_not_loosen_the_current_flags(project: Path, env: dict[str, str]) -> None:
    path = paused(project, env)

    def loosen(data: dict[str, Any]) -> None:
        data["options"].update(permission_mode="bypassPermissions", trust_project_hooks=True)
        data["batch"][0]["state"] = "ready"

    forge(path, env, loosen)
    out = hookloop("resume", str(path), "--output-format", "json", env=env, cwd=project)
    assert out.returncode == 3, out.stderr  # the call asks again: no terminal, no --yes, so it pauses
    assert json.loads(out.stdout.splitlines()[-1])["pending"][0]["arguments"] == {"command": TOUCH}
    assert "the paused run used permission mode bypassPermissions" in out.stderr
    assert "trusted project hooks" in out.stderr
    assert not (project / "cli.marker").exists()


def test_the_mode_of_this_resume_decides(project: Path, env: dict[str, str]) -> None:
    path = paused(project, env)
    out = hookloop("resume", str(path), "--yes", "--permission-mode", "plan", env=env, cwd=project)
    assert out.returncode == 0, out.stderr
    assert not (project / "cli.marker").exists()  # plan mode denies Bash, --yes or not


def test_resume_from_another_directory_needs_cwd(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    path = paused(project, env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused(hookloop("resume", str(path), "--yes", env=env, cwd=elsewhere), "resume it from there, or pass --cwd")
    out = hookloop("resume", str(path), "--yes", "--cwd", str(elsewhere), env=env, cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    assert (elsewhere / "cli.marker").exists()
    assert not (project / "cli.marker").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"hookloop_cli": 1, "options": {}, "checkpoint": {"version": 1}}', "from an older hookloop"),
        ('{"version": 1, "digest": "x"}', "unauthenticated checkpoint from an older hookloop"),
        ('{"version": 2, "turn": []}', "checkpoint.mac: missing"),
    ],
)
def test_malformed_checkpoints_are_one_line(project: Path, env: dict[str, str], content: str, message: str) -> None:
    path = project / "bad.checkpoint.json"
    path.write_text(content)
    refused(hookloop("resume", str(path), env=env, cwd=project), message)


def test_a_200_mb_checkpoint_is_refused_before_it_is_read(project: Path, env: dict[str, str]) -> None:
    path = project / "big.checkpoint.json"
    with path.open("wb") as f:
        f.truncate(200 * 1024 * 1024)
    refused(hookloop("resume", str(path), env=env, cwd=project), "over the 67108864-byte limit; not read")


def test_wrong_option_types_signed_with_the_key_are_one_line(project: Path, env: dict[str, str]) -> None:
    path = paused(project, env)
    forge(path, env, lambda d: d["options"].update(max_turns="many"))
    refused(hookloop("resume", str(path), "--yes", env=env, cwd=project), "checkpoint.options.max_turns: expected")
