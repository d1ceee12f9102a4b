"""A directory swapped for a symbolic link (to a directory outside, or to a denied one) again and again while
Grep and Glob search: no outside or denied content ever reaches the output, on either Grep backend.

A child process swaps as fast as it can while a bounded number of searches run. No sleeps: the race is between
real system calls, so a search may or may not hit the window; the assertion holds on every one. (Before ripgrep
read only race-safely opened files, the first test showed outside content in a few of its searches.)"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from builtin_helpers import CTX, call

from hookloop.permissions import PermissionPolicy
from hookloop.tools import Tool, ToolContext
from hookloop.tools.builtin import GlobTool, GrepTool, Workspace

pytestmark = pytest.mark.anyio

BACKENDS = ["python", *(["ripgrep"] if shutil.which("rg") else [])]
SEARCHES = 40

SWAP = """
import ctypes, os, sys
directory, target = sys.argv[1], sys.argv[2]
link = directory + ".link"
os.symlink(target, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange():  # one atomic system call: the name is always the directory or the link, never missing
    if libc.renameat2(AT_FDCWD, directory.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
print("swapping", flush=True)
for _ in range(10_000_000):  # bounded; the test stops it long before
    exchange()
    exchange()
"""


@contextlib.contextmanager
def swapping(directory: Path, target: Path) -> Iterator[None]:
    """A child process swaps ``directory`` for a symbolic link to ``target`` and back, as fast as it can, until
    the block ends (it runs on the other core; a thread would wait for the GIL)."""
    proc = subprocess.Popen([sys.executable, "-c", SWAP, str(directory), str(target)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"swapping\n"
        yield
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close() if proc.stdout else None


async def search_while_swapping(
    tool: Tool, arguments: dict[str, object], directory: Path, target: Path, ctx: ToolContext = CTX
) -> list[str]:
    outputs: list[str] = []
    with swapping(directory, target):
        for _ in range(SEARCHES):
            content, _ = await call(tool, arguments, ctx)
            outputs.append(content)
    return outputs


def make_tree(root: Path, outside: Path) -> Path:
    for i in range(40):  # siblings, so the walk spends time between listing a directory and entering it
        (root / f"pad{i:02}").mkdir()
        (root / f"pad{i:02}" / "p.txt").write_text("padding\n")
    (root / "dir").mkdir()
    (root / "dir" / "x.txt").write_text("needle inside\n")
    (outside / "x.txt").write_text("needle OUTSIDE\n")
    return root / "dir"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_never_shows_content_from_a_directory_swapped_for_a_link_outside(
    root: Path, outside: Path, backend: str
) -> None:
    directory = make_tree(root, outside)
    grep = GrepTool(Workspace(root), backend=backend)  # type: ignore[arg-type]
    outputs = await search_while_swapping(grep, {"pattern": "needle", "output_mode": "content"}, directory, outside)
    assert outputs
    assert not [o for o in outputs if "OUTSIDE" in o]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_never_shows_denied_content_through_a_directory_swapped_for_a_link(
    root: Path, outside: Path, backend: str
) -> None:
    directory = make_tree(root, outside)
    (root / "secrets").mkdir()
    (root / "secrets" / "x.txt").write_text("needle DENIED\n")
    policy = PermissionPolicy(deny=["Read(./secrets/**)"], workspace=root)
    arguments: dict[str, object] = {"pattern": "needle", "output_mode": "content"}
    ctx = ToolContext(
        run_id="r",
        session_id="s",
        call_id="c",
        tool_name="Grep",
        turn=1,
        read_filter=policy.read_filter("Grep", arguments),
    )
    grep = GrepTool(Workspace(root), backend=backend)  # type: ignore[arg-type]
    outputs = await search_while_swapping(grep, arguments, directory, root / "secrets", ctx)
    assert outputs
    assert not [o for o in outputs if "DENIED" in o]


async def test_glob_never_lists_a_directory_swapped_for_a_link_outside(root: Path, outside: Path) -> None:
    directory = make_tree(root, outside)
    (outside / "only_outside.txt").write_text("x\n")
    outputs = await search_while_swapping(GlobTool(Workspace(root)), {"pattern": "**/*.txt"}, directory, outside)
    assert outputs
    assert not [o for o in outputs if "only_outside" in o]
