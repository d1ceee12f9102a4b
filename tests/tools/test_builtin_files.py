"""Read, Write and Edit on a real filesystem: happy paths, and every refusal as a clear sentence naming the path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from builtin_helpers import fails, ok

from hookloop.tools.builtin import EditTool, ReadTool, Workspace, WriteTool

pytestmark = pytest.mark.anyio


# -- Read ---------------------------------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n\n# end")
    content = await ok(ReadTool(ws), {"file_path": "a.py"})
    assert content == "     1\tdef f():\n     2\t    return 1\n     3\t\n     4\t# end"


async def test_read_absolute_path_inside_the_workspace(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("x\n")
    assert await ok(ReadTool(ws), {"file_path": str(root / "a.txt")}) == "     1\tx"


async def test_read_offset_is_the_first_line_and_limit_the_count(ws: Workspace, root: Path) -> None:
    (root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    content = await ok(ReadTool(ws), {"file_path": "n.txt", "offset": 4, "limit": 2})
    assert content.splitlines()[:2] == ["     4\tline 4", "     5\tline 5"]
    assert content.endswith("(Showing lines 4-5 of 10. Use offset and limit to read other parts.)")
    assert await ok(ReadTool(ws), {"file_path": "n.txt", "offset": 0, "limit": 1}) == (
        "     1\tline 1\n\n(Showing lines 1-1 of 10. Use offset and limit to read other parts.)"
    )


async def test_read_defaults_to_2000_lines_and_cuts_long_lines(ws: Workspace, root: Path) -> None:
    (root / "big.txt").write_text("x" * 2500 + "\n" + "".join(f"{i}\n" for i in range(2, 2501)))
    content = await ok(ReadTool(ws), {"file_path": "big.txt"})
    lines = content.split("\n")
    assert lines[0] == "     1\t" + "x" * 2000 + "… [500 more characters]"
    assert lines[1999] == "  2000\t2000"
    assert lines[-1] == "(Showing lines 1-2000 of 2500. Use offset and limit to read other parts.)"


async def test_read_empty_file_and_offset_past_the_end_are_sentences(ws: Workspace, root: Path) -> None:
    (root / "empty.txt").write_text("")
    (root / "two.txt").write_text("a\nb")
    assert await ok(ReadTool(ws), {"file_path": "empty.txt"}) == f"(The file {root / 'empty.txt'} exists but is empty.)"
    assert await ok(ReadTool(ws), {"file_path": "two.txt", "offset": 5}) == (
        f"(The file {root / 'two.txt'} has 2 lines; offset 5 is past its end.)"
    )


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("missing", "Cannot read {path}: it does not exist."),
        ("dir", "Cannot read {path}: it is a directory, not a file."),
        ("nul", "Cannot read {path}: it looks like a binary file (it contains NUL bytes)."),
        ("latin1", "Cannot read {path}: line 1 is not valid UTF-8; it may be a binary file."),
        ("fifo", "Cannot read {path}: it is not a regular file."),
        ("missing_parent", "Cannot read {path}: it does not exist."),
    ],
)
async def test_read_errors_name_the_path_and_the_problem(ws: Workspace, root: Path, setup: str, expected: str) -> None:
    path = root / "target"
    if setup == "dir":
        path.mkdir()
    elif setup == "nul":
        path.write_bytes(b"\x89PNG\r\n\x00\x00")
    elif setup == "latin1":
        path.write_bytes("café\n".encode("latin-1"))
    elif setup == "fifo":
        os.mkfifo(path)  # opening it for reading must not hang
    elif setup == "missing_parent":
        path = root / "nodir" / "target"
    message = await fails(ReadTool(ws), {"file_path": str(path.relative_to(root))})
    assert message == expected.format(path=path)


# -- Write --------------------------------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_created(ws: Workspace, root: Path) -> None:
    content = await ok(WriteTool(ws), {"file_path": "src/pkg/mod.py", "content": "x = 1\ny = 2\n"})
    assert content == f"Created {root / 'src/pkg/mod.py'} (12 bytes, 2 lines)."
    assert (root / "src/pkg/mod.py").read_text() == "x = 1\ny = 2\n"


async def test_write_overwrites_in_place_and_keeps_the_mode(ws: Workspace, root: Path) -> None:
    target = root / "run.sh"
    target.write_text("old content that is longer\n")
    target.chmod(0o750)
    content = await ok(WriteTool(ws), {"file_path": "run.sh", "content": "écho\n"})
    assert content == f"Overwrote {target} (6 bytes, 1 line; it had 27 bytes)."
    assert target.read_text() == "écho\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


async def test_write_errors(ws: Workspace, root: Path) -> None:
    (root / "d").mkdir()
    (root / "file").write_text("")
    assert await fails(WriteTool(ws), {"file_path": "d", "content": "x"}) == (
        f"Cannot write {root / 'd'}: it is a directory, not a file."
    )
    message = await fails(WriteTool(ws), {"file_path": "file/child.txt", "content": "x"})
    assert message == f"Cannot write {root / 'file/child.txt'}: a part of the path is not a directory."
    message = await fails(WriteTool(ws), {"file_path": "bad.txt", "content": "\ud800"})
    assert message.startswith(f"Cannot write {root / 'bad.txt'}: content is not valid Unicode")
    assert not (root / "bad.txt").exists()


# -- Edit ---------------------------------------------------------------------------------------------------


async def test_edit_replaces_a_unique_string(ws: Workspace, root: Path) -> None:
    (root / "m.py").write_text("def old():\n    return 'old'\n")
    content = await ok(EditTool(ws), {"file_path": "m.py", "old_string": "def old", "new_string": "def new"})
    assert content == f"Edited {root / 'm.py'}: replaced 1 occurrence."
    assert (root / "m.py").read_text() == "def new():\n    return 'old'\n"


async def test_edit_replace_all_reports_the_count_and_can_shrink_the_file(ws: Workspace, root: Path) -> None:
    (root / "m.txt").write_text("aaa-b-aaa-b-aaa\n")
    arguments = {"file_path": "m.txt", "old_string": "aaa", "new_string": "c", "replace_all": True}
    assert await ok(EditTool(ws), arguments) == f"Edited {root / 'm.txt'}: replaced 3 occurrences."
    assert (root / "m.txt").read_text() == "c-b-c-b-c\n"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("nowhere", "x", "old_string was not found in the file"),
        ("b", "x", "old_string was found 2 times; add surrounding lines to make it unique, or set replace_all"),
        ("a", "a", "old_string and new_string are the same, so nothing would change."),
        ("", "x", "old_string is empty, which only creates a new file, and this file already has content"),
    ],
)
async def test_edit_refusals_leave_the_file_unchanged(
    ws: Workspace, root: Path, old: str, new: str, expected: str
) -> None:
    (root / "f.txt").write_text("a b b\n")
    message = await fails(EditTool(ws), {"file_path": "f.txt", "old_string": old, "new_string": new})
    assert message.startswith(f"Cannot edit {root / 'f.txt'}: ")
    assert expected in message
    assert (root / "f.txt").read_text() == "a b b\n"


async def test_edit_with_empty_old_string_creates_a_missing_file(ws: Workspace, root: Path) -> None:
    content = await ok(EditTool(ws), {"file_path": "new/f.txt", "old_string": "", "new_string": "hello\n"})
    assert content == f"Created {root / 'new/f.txt'} with new_string (6 bytes)."
    assert (root / "new/f.txt").read_text() == "hello\n"


async def test_edit_errors_for_missing_binary_and_directories(ws: Workspace, root: Path) -> None:
    (root / "bin").write_bytes(b"a\x00b")
    (root / "dir").mkdir()
    edit = EditTool(ws)
    arguments = {"old_string": "a", "new_string": "b"}
    assert await fails(edit, {"file_path": "nope", **arguments}) == f"Cannot edit {root / 'nope'}: it does not exist."
    assert "binary file" in await fails(edit, {"file_path": "bin", **arguments})
    assert await fails(edit, {"file_path": "dir", **arguments}) == (
        f"Cannot edit {root / 'dir'}: it is a directory, not a file."
    )
    assert (root / "bin").read_bytes() == b"a\x00b"
