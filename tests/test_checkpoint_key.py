"""The per-user checkpoint key: created once (racing processes agree), private (0600 in a 0700 directory), and
refused when anyone else could read or replace it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hookloop import Checkpoint, CheckpointError, ScriptedClient, Text, Worker
from hookloop._checkpoint_auth import KEY_FILE, _read_key, default_key, key_id


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_key_is_created_private_once_and_reused(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "hookloop"
    key = default_key(home)
    assert len(key) == 32
    assert mode(home) == 0o700
    assert mode(home / KEY_FILE) == 0o600
    assert default_key(home) == key
    assert [p.name for p in home.iterdir()] == [KEY_FILE]  # no temp file left behind


def test_hookloop_home_decides_where_the_key_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKLOOP_HOME", str(tmp_path / "h"))
    key = default_key()
    assert (tmp_path / "h" / KEY_FILE).read_text().strip() == key.hex()


@pytest.mark.parametrize("bits", [0o640, 0o604, 0o620, 0o602, 0o660])
def test_a_key_others_could_read_or_change_is_refused(tmp_path: Path, bits: int) -> None:
    default_key(tmp_path)
    (tmp_path / KEY_FILE).chmod(bits)
    with pytest.raises(CheckpointError, match=f"mode {bits:o} lets other users read or change it"):
        default_key(tmp_path)


def test_a_symlinked_key_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    default_key(real)
    home = tmp_path / "home"
    home.mkdir()
    (home / KEY_FILE).symlink_to(real / KEY_FILE)
    with pytest.raises(CheckpointError, match="is a symlink"):
        default_key(home)


def test_a_key_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    default_key(tmp_path)
    path = tmp_path / KEY_FILE
    if os.geteuid() == 0:
        os.chown(path, 4242, 4242)
    else:  # only root can give a file away: read one root owns instead
        path = Path("/etc/passwd")
    with pytest.raises(CheckpointError, match="owned by another user"):
        _read_key(path)


@pytest.mark.parametrize("content", ["", "not hex\n", "abcd\n", "\x00" * 64])
def test_a_key_file_that_is_no_key_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / KEY_FILE
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(CheckpointError, match="not a hookloop key"):
        default_key(tmp_path)


def test_processes_racing_to_create_the_key_agree_on_one(tmp_path: Path) -> None:
    home = tmp_path / "raced"
    src = str(Path(__file__).resolve().parents[1] / "src")
    code = "import sys; from hookloop._checkpoint_auth import default_key; print(default_key(sys.argv[1]).hex())"
    env = {**os.environ, "PYTHONPATH": src}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(home)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(6)
    ]
    keys = {p.communicate(timeout=50)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(keys) == 1
    assert keys == {(home / KEY_FILE).read_text().strip()}


def test_an_explicit_key_must_be_bytes_of_some_length() -> None:
    checkpoint = Worker(ScriptedClient([[Text("x")]])).checkpoint()
    with pytest.raises(CheckpointError, match="at least 16 bytes"):
        checkpoint.dumps(key=b"short")
    with pytest.raises(CheckpointError, match="at least 16 bytes"):
        checkpoint.dumps(key="a string key of some length")  # type: ignore[arg-type]


def test_a_saved_checkpoint_is_private_and_names_its_key(tmp_path: Path) -> None:
    checkpoint = Worker(ScriptedClient([[Text("x")]])).checkpoint()
    path = checkpoint.save(tmp_path / "c.json")
    assert mode(path) == 0o600
    assert Checkpoint.load(path).to_json()["key_id"] == key_id(default_key())
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_an_unusable_key_is_a_checkpoint_error_when_saving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HOOKLOOP_HOME", str(blocker / "home"))
    with pytest.raises(CheckpointError, match=r"checkpoint key .*: cannot read it: Not a directory"):
        Worker(ScriptedClient([[Text("x")]])).checkpoint().dumps()
