"""Workspace confinement: `..`, absolute paths, symbolic links, and a symlink swapped in after the check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from builtin_helpers import fails, ok

from hookloop.tools.builtin import EditTool, ReadTool, Workspace, WorkspaceError, WriteTool

pytestmark = pytest.mark.anyio


def test_relative_paths_resolve_against_the_root_and_dotdot_is_normalised(ws: Workspace, root: Path) -> None:
    assert ws.resolve("a/b.txt") == root / "a" / "b.txt"
    assert ws.resolve("a/../b.txt") == root / "b.txt"
    assert ws.resolve(str(root / "x")) == root / "x"
    assert ws.resolve(".") == root


@pytest.mark.parametrize("path", ["../outside/secret.txt", "a/../../outside/secret.txt", "/etc/passwd", "/"])
def test_paths_outside_the_workspace_are_refused_with_a_sentence(ws: Workspace, outside: Path, path: str) -> None:
    with pytest.raises(WorkspaceError) as info:
        ws.resolve(path, field="file_path")
    message = str(info.value)
    assert f"file_path {path!r} is outside the workspace {ws.root}" in message


def test_empty_and_nul_paths_are_refused(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError, match="file_path is empty"):
        ws.resolve("", field="file_path")
    with pytest.raises(WorkspaceError, match="NUL byte"):
        ws.resolve("a\0b", field="file_path")


def test_a_symlink_leading_outside_is_refused_and_one_staying_inside_is_followed(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "real.txt").write_text("inside\n")
    (root / "inner").symlink_to(root / "real.txt")
    (root / "escape").symlink_to(outside / "secret.txt")
    (root / "dir_escape").symlink_to(outside)
    assert ws.resolve("inner") == root / "real.txt"
    with pytest.raises(WorkspaceError, match=f"resolves to {outside / 'secret.txt'}"):
        ws.resolve("escape")
    with pytest.raises(WorkspaceError, match="is outside the workspace"):
        ws.resolve("dir_escape/new.txt")


def test_additional_dirs_are_allowed_and_allow_outside_lifts_the_check(root: Path, outside: Path) -> None:
    secret = outside / "secret.txt"
    assert Workspace(root, additional_dirs=[outside]).resolve(str(secret)) == secret
    assert Workspace(root, allow_outside=True).resolve(str(secret)) == secret
    with pytest.raises(NotADirectoryError, match="is not an existing directory"):
        Workspace(root / "missing")


async def test_file_tools_refuse_symlink_escapes_and_write_nothing_outside(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "escape").symlink_to(outside / "secret.txt")
    (root / "dir_escape").symlink_to(outside)
    message = await fails(ReadTool(ws), {"file_path": "escape"})
    assert "outside the workspace" in message
    assert "TOP SECRET" not in message
    await fails(WriteTool(ws), {"file_path": "dir_escape/planted.txt", "content": "x"})
    await fails(EditTool(ws), {"file_path": "escape", "old_string": "TOP", "new_string": "NO"})
    assert os.listdir(outside) == ["secret.txt"]
    assert unchanged(outside / "secret.txt")


def unchanged(secret: Path) -> bool:
    return secret.read_text() == "TOP SECRET\n"


async def test_read_refuses_a_file_swapped_for_a_symlink_between_validate_and_execute(
    ws: Workspace, root: Path, outside: Path
) -> None:
    from builtin_helpers import CTX

    (root / "notes.txt").write_text("harmless\n")
    tool = ReadTool(ws)
    validated = tool.validate({"file_path": "notes.txt"})  # the check passes: a regular file inside
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(WorkspaceError) as info:
        await tool.execute(validated, CTX)
    assert "outside the workspace" in str(info.value)


async def test_write_refuses_a_parent_dir_swapped_for_a_symlink_between_validate_and_execute(
    ws: Workspace, root: Path, outside: Path
) -> None:
    from builtin_helpers import CTX

    (root / "out").mkdir()
    tool = WriteTool(ws)
    validated = tool.validate({"file_path": "out/report.txt", "content": "data"})
    (root / "out").rmdir()
    (root / "out").symlink_to(outside)
    with pytest.raises(WorkspaceError):
        await tool.execute(validated, CTX)
    assert not (outside / "report.txt").exists()


def test_open_file_refuses_a_final_component_swapped_after_resolve(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "f.txt").write_text("inside\n")
    real = ws.resolve("f.txt")  # checked: inside
    (root / "f.txt").unlink()
    (root / "f.txt").symlink_to(outside / "secret.txt")  # swapped before use
    with pytest.raises(WorkspaceError, match="changed into a symbolic link after it was checked"):
        ws.open_file(real, os.O_RDONLY)


def test_open_file_refuses_a_parent_dir_swapped_after_resolve(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "data").mkdir()
    (root / "data" / "secret.txt").write_text("inside\n")
    real = ws.resolve("data/secret.txt")
    (root / "data" / "secret.txt").unlink()
    (root / "data").rmdir()
    (root / "data").symlink_to(outside)  # data/secret.txt now names the outside secret
    with pytest.raises(WorkspaceError, match=f"{root / 'data'} is one now"):
        ws.open_file(real, os.O_RDONLY)
    with pytest.raises(WorkspaceError):
        ws.open_file(ws.root / "data" / "new.txt", os.O_WRONLY | os.O_CREAT, make_parents=True)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_open_file_creates_missing_parents_without_following_links(ws: Workspace, root: Path) -> None:
    fd = ws.open_file(ws.resolve("a/b/c.txt"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, make_parents=True)
    os.close(fd)
    assert (root / "a" / "b" / "c.txt").is_file()
    with pytest.raises(FileNotFoundError) as info:
        ws.open_file(ws.resolve("x/y.txt"), os.O_RDONLY)
    assert info.value.filename == str(root / "x" / "y.txt")


async def test_an_additional_directory_is_usable_by_the_tools(root: Path, outside: Path) -> None:
    ws = Workspace(root, additional_dirs=[outside])
    content = await ok(ReadTool(ws), {"file_path": str(outside / "secret.txt")})
    assert content == "     1\tTOP SECRET"
