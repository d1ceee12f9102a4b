"""Glob and Grep on a real tree. Grep runs on each backend available: pure Python always, ripgrep when `rg` is on
PATH; every expectation is exact, so both must produce the same output."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from builtin_helpers import fails, ok

from hookloop.tools.builtin import GlobTool, GrepTool, Workspace

pytestmark = pytest.mark.anyio

BACKENDS = ["python", *(["ripgrep"] if shutil.which("rg") else [])]


@pytest.fixture
def tree(root: Path, outside: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    print('Hello')\n    return 0\n",
        "src/util.py": "def helper():\n    return 'hello world'\n",
        "src/web/index.ts": "const hello = 1;\n",
        "docs/guide.md": "Say HELLO to the guide.\n",
        ".hidden/h.py": "hello hidden\n",
        ".git/config": "hello from git internals\n",
    }
    for offset, (name, text) in enumerate(files.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_700_000_000 + offset, 1_700_000_000 + offset))  # later in the dict = newer
    (root / "data.bin").write_bytes(b"hello\x00binary")
    (outside / "leak.py").write_text("hello from outside\n")
    (root / "link.py").symlink_to(outside / "leak.py")
    (root / "linkdir").symlink_to(outside)
    return root


@pytest.fixture(params=BACKENDS)
def grep(request: pytest.FixtureRequest, ws: Workspace, tree: Path) -> GrepTool:
    tool = GrepTool(ws, backend=request.param)
    assert tool.backend == request.param
    return tool


# -- Glob ---------------------------------------------------------------------------------------------------


async def test_glob_lists_absolute_paths_newest_first(ws: Workspace, tree: Path) -> None:
    content = await ok(GlobTool(ws), {"pattern": "**/*.py"})
    assert content.splitlines() == [str(tree / ".hidden/h.py"), str(tree / "src/util.py"), str(tree / "src/app.py")]


async def test_glob_without_double_star_stays_at_its_depth(ws: Workspace, tree: Path) -> None:
    assert await ok(GlobTool(ws), {"pattern": "*.py"}) == "No files found"  # link.py is a symlink: not listed
    assert await ok(GlobTool(ws), {"pattern": "*/*.py"}) == f"{tree / '.hidden/h.py'}\n{tree / 'src/util.py'}\n" + str(
        tree / "src/app.py"
    )


async def test_glob_braces_literal_prefix_and_path_argument(ws: Workspace, tree: Path) -> None:
    assert await ok(GlobTool(ws), {"pattern": "src/**/*.{ts,md}"}) == str(tree / "src/web/index.ts")
    assert await ok(GlobTool(ws), {"pattern": "*.md", "path": "docs"}) == str(tree / "docs/guide.md")
    assert await ok(GlobTool(ws), {"pattern": str(tree / "docs") + "/*"}) == str(tree / "docs/guide.md")


async def test_glob_skips_vcs_dirs_and_does_not_follow_symlinked_dirs(ws: Workspace, tree: Path) -> None:
    content = await ok(GlobTool(ws), {"pattern": "**/*"})
    assert ".git" not in content
    assert "leak" not in content
    assert "secret" not in content
    assert str(tree / "data.bin") in content


async def test_glob_caps_at_100_newest_with_a_note(ws: Workspace, root: Path) -> None:
    for i in range(105):
        path = root / f"f{i:03}.txt"
        path.write_text("")
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    lines = (await ok(GlobTool(ws), {"pattern": "*.txt"})).splitlines()
    assert lines[0] == str(root / "f104.txt")
    assert lines[99] == str(root / "f005.txt")
    assert lines[100] == (
        "(Results are truncated: showing the 100 most recently modified of 105 matching files. "
        "Use a more specific path or pattern.)"
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"pattern": "../*"}, "pattern '../*' is outside the workspace"),
        ({"pattern": "*", "path": "../outside"}, "path '../outside' is outside the workspace"),
        ({"pattern": "**/../*"}, "uses '..' after a wildcard"),
        ({"pattern": "*", "path": "nope"}, "Cannot search {root}/nope: it does not exist."),
        ({"pattern": "*", "path": "src/app.py"}, "Cannot search {root}/src/app.py: it is not a directory."),
    ],
)
async def test_glob_errors(ws: Workspace, tree: Path, arguments: dict[str, str], expected: str) -> None:
    assert expected.format(root=tree) in await fails(GlobTool(ws), arguments)


# -- Grep ---------------------------------------------------------------------------------------------------


async def test_grep_lists_files_newest_first_skipping_vcs_binary_and_symlinks(grep: GrepTool) -> None:
    assert await ok(grep, {"pattern": "hello"}) == "Found 3 files\n.hidden/h.py\nsrc/web/index.ts\nsrc/util.py"


async def test_grep_ignore_case(grep: GrepTool) -> None:
    content = await ok(grep, {"pattern": "hello", "-i": True})
    assert content == "Found 5 files\n.hidden/h.py\ndocs/guide.md\nsrc/web/index.ts\nsrc/util.py\nsrc/app.py"


async def test_grep_content_with_line_numbers_by_default(grep: GrepTool) -> None:
    content = await ok(grep, {"pattern": "hello", "-i": True, "path": "src", "output_mode": "content"})
    assert content == (
        "src/app.py:4:    print('Hello')\nsrc/util.py:2:    return 'hello world'\nsrc/web/index.ts:1:const hello = 1;"
    )
    content = await ok(grep, {"pattern": "Hello", "output_mode": "content", "-n": False})
    assert content == "src/app.py:    print('Hello')"


async def test_grep_context_lines_and_separators(grep: GrepTool) -> None:
    arguments = {"pattern": "^def|return", "path": "src", "output_mode": "content", "glob": "*.py"}
    assert await ok(grep, {**arguments, "-A": 1}) == (
        "src/app.py:3:def main():\nsrc/app.py-4-    print('Hello')\nsrc/app.py:5:    return 0\n"
        "--\nsrc/util.py:1:def helper():\nsrc/util.py:2:    return 'hello world'"
    )
    assert await ok(grep, {"pattern": "print", "output_mode": "content", "-B": 2, "-A": 0}) == (
        "src/app.py-2-\nsrc/app.py-3-def main():\nsrc/app.py:4:    print('Hello')"
    )
    assert await ok(grep, {"pattern": "print", "output_mode": "content", "-C": 1, "-B": 3}) == (
        "src/app.py-3-def main():\nsrc/app.py:4:    print('Hello')\nsrc/app.py-5-    return 0"
    )


async def test_grep_count_mode(grep: GrepTool) -> None:
    content = await ok(grep, {"pattern": "return|def", "output_mode": "count"})
    assert content == "src/app.py:2\nsrc/util.py:2\n\nFound 4 total occurrences across 2 files."


async def test_grep_glob_and_type_filters(grep: GrepTool) -> None:
    assert await ok(grep, {"pattern": "hello", "-i": True, "glob": "*.md"}) == "Found 1 file\ndocs/guide.md"
    assert await ok(grep, {"pattern": "hello", "-i": True, "glob": "*.{ts,md}"}) == (
        "Found 2 files\ndocs/guide.md\nsrc/web/index.ts"
    )
    assert await ok(grep, {"pattern": "hello", "-i": True, "type": "py"}) == (
        "Found 3 files\n.hidden/h.py\nsrc/util.py\nsrc/app.py"
    )
    assert await ok(grep, {"pattern": "hello", "-i": True, "type": "py", "glob": "!.hidden"}) == (
        "Found 2 files\nsrc/util.py\nsrc/app.py"
    )


async def test_grep_multiline(grep: GrepTool) -> None:
    arguments = {"pattern": r"def main\(\):\n\s+print", "output_mode": "content", "multiline": True}
    assert await ok(grep, arguments) == "src/app.py:3:def main():\nsrc/app.py:4:    print('Hello')"
    assert await ok(grep, {"pattern": r"main.*Hello"}) == "No files found"


async def test_grep_head_limit_and_offset_page_with_a_note(grep: GrepTool) -> None:
    content = await ok(grep, {"pattern": "hello", "head_limit": 1, "offset": 1})
    assert content == (
        "Found 3 files\nsrc/web/index.ts\n\n(Showing files 2-2 of 3; use head_limit and offset to see others.)"
    )
    content = await ok(grep, {"pattern": "[eo]", "output_mode": "content", "head_limit": 2, "path": "src/app.py"})
    assert content == (
        "src/app.py:1:import os\nsrc/app.py:3:def main():\n\n"
        "(Showing lines 1-2 of 4; use head_limit and offset to see others.)"
    )


async def test_grep_no_matches(grep: GrepTool) -> None:
    assert await ok(grep, {"pattern": "zzz"}) == "No files found"
    assert await ok(grep, {"pattern": "zzz", "output_mode": "content"}) == "No matches found"
    assert await ok(grep, {"pattern": "zzz", "output_mode": "count"}) == "No matches found"


async def test_grep_an_explicit_file_is_searched_whatever_the_filters(grep: GrepTool) -> None:
    assert await ok(grep, {"pattern": "hello", "path": "src/util.py", "glob": "*.md"}) == "Found 1 file\nsrc/util.py"


async def test_grep_errors(grep: GrepTool, tree: Path) -> None:
    assert (await fails(grep, {"pattern": "("})).startswith("Grep")
    assert "nosuchtype" in await fails(grep, {"pattern": "x", "type": "nosuchtype"})
    assert "path '../outside' is outside the workspace" in await fails(grep, {"pattern": "x", "path": "../outside"})
    assert (
        await fails(grep, {"pattern": "x", "path": "missing"})
        == f"Cannot search {tree / 'missing'}: it does not exist."
    )
    # a symlink to a file outside is refused when named explicitly, and never followed when walking
    assert "outside the workspace" in await fails(grep, {"pattern": "hello", "path": "link.py"})
    assert "outside" not in await ok(grep, {"pattern": "from outside|SECRET"})


async def test_grep_long_lines_are_cut(grep: GrepTool, root: Path) -> None:
    (root / "long.txt").write_text("needle " + "x" * 1000 + "\n")
    content = await ok(grep, {"pattern": "needle", "output_mode": "content", "path": "long.txt"})
    assert content == "long.txt:1:needle " + "x" * 493 + "… [507 more characters]"


def test_ripgrep_backend_requires_rg(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(ValueError, match="needs the rg executable"):
        GrepTool(ws, backend="ripgrep")
    assert GrepTool(ws).backend == "python"
