"""``_paths.realpath`` (the decision's memoised symlink resolution) equals ``os.path.realpath`` on a real tree.

The tree holds directories, files, relative and absolute symlinks, links to ``..``, dangling links and a link
loop; the paths are every combination of its names with ``.``, ``..``, empty segments and missing names, looked
up with one memo shared by all of them (as in one decision) and with a fresh memo each.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop.permissions._paths import Links, realpath

_NAMES = ["d", "f", "ln_d", "ln_abs", "ln_up", "ln_missing", "loop_a", "ln_f", "missing", ".", "..", ""]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("realpath")
    (root / "d" / "sub").mkdir(parents=True)
    (root / "f").write_text("x")
    (root / "d" / "f").write_text("x")
    os.symlink("d", root / "ln_d")
    os.symlink(root / "d" / "sub", root / "ln_abs")
    os.symlink("..", root / "d" / "ln_up")
    os.symlink("nowhere/x", root / "ln_missing")
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink("f", root / "ln_f")
    os.symlink("../ln_d", root / "d" / "sub" / "ln_back")
    return root


def _paths(root: Path) -> list[str]:
    found = [str(root), "/", "//", "/..", "/./", str(root) + "/"]
    for length in (1, 2, 3):
        for parts in itertools.product([*_NAMES, "sub", "ln_back"], repeat=length):
            found.append(str(root) + "/" + "/".join(parts))
    return found


def test_equal_to_the_standard_library_with_a_shared_memo(tree: Path) -> None:
    links: Links = {}
    paths = _paths(tree)
    assert len(paths) > 2000
    wrong = [path for path in paths if realpath(path, links) != os.path.realpath(path)]
    assert not wrong, wrong[:10]
    assert any(links.values())  # it did meet symlinks
    assert not all(links.values())  # and plain names


def test_equal_with_a_fresh_memo_and_for_relative_paths(tree: Path) -> None:
    for path in [*_paths(tree)[:400], "d/../f", "", ".", "ln_d/f"]:
        assert realpath(path, {}) == os.path.realpath(path), path


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_NAMES, "sub", "ln_back", "f/x"]), min_size=0, max_size=6))
def test_equal_on_random_paths(tree: Path, parts: list[str]) -> None:
    path = str(tree) + "/" + "/".join(parts)
    assert realpath(path, {}) == os.path.realpath(path)


def test_nothing_below_a_missing_directory_or_a_file_is_looked_up(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lstat can only fail below them; each failure cost an exception (a command's targets are often in a
    # directory it has not made yet). Each component is looked up once per memo.
    paths = [f"{tree}/missing/a/b", f"{tree}/f/x/y", f"{tree}/missing/a/../../d/sub", f"{tree}/missing/c"]
    expected = [os.path.realpath(path) for path in paths]
    looked_up: list[str] = []
    lstat = os.lstat

    def spy(path: str) -> os.stat_result:
        looked_up.append(path)
        return lstat(path)

    monkeypatch.setattr(os, "lstat", spy)
    links: Links = {}
    assert [realpath(path, links) for path in paths] == expected
    below = [path.removeprefix(str(tree)) for path in looked_up if path.startswith(f"{tree}/")]
    assert below == ["/missing", "/f", "/d", "/d/sub"]
    assert links[f"{tree}/missing"] is None
    assert links[f"{tree}/f"] is None
    assert links[f"{tree}/d"] is False
