"""Glob patterns as regular expressions (shared by Glob and Grep's pure-Python backend)."""

from __future__ import annotations

import pytest

from hookloop.tools.builtin._globmatch import compile_glob, expand_braces, split_globs


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py", ".hidden.py"], ["a.pyc", "src/a.py"]),
        ("**/*.py", ["a.py", "src/a.py", "src/deep/er/a.py"], ["a.txt", "src/a.pyx"]),
        ("src/**", ["src/a", "src/b/c"], ["src", "lib/a"]),
        ("src/**/test_*.py", ["src/test_a.py", "src/x/y/test_b.py"], ["test_a.py", "src/x/a_test.py"]),
        ("*.{ts,tsx}", ["a.ts", "b.tsx"], ["c.js", "d.t"]),
        ("{src,lib}/**/*.rs", ["src/a.rs", "lib/x/b.rs"], ["bin/c.rs"]),
        ("file?.txt", ["file1.txt"], ["file10.txt", "file/.txt"]),
        ("[ab]*.md", ["a.md", "b1.md"], ["c.md"]),
        ("[!ab]*.md", ["c.md"], ["a.md", "/x.md"]),
        ("literal[.txt", ["literal[.txt"], ["literalx.txt"]),
        (r"\*.txt", ["*.txt"], ["a.txt"]),
        ("a+b(c).txt", ["a+b(c).txt"], ["aab(c).txt"]),
    ],
)
def test_glob_patterns_match_paths(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = compile_glob(pattern)
    for path in matches:
        assert regex.fullmatch(path), (pattern, path)
    for path in misses:
        assert not regex.fullmatch(path), (pattern, path)


def test_brace_expansion_nests_and_keeps_braces_without_commas() -> None:
    assert sorted(expand_braces("a{b,c{d,e}}f")) == ["abf", "acdf", "acef"]
    assert expand_braces("{single}.txt") == ["{single}.txt"]
    with pytest.raises(ValueError, match="more than 1024 alternatives"):
        expand_braces("{a,b}" * 11)


def test_grep_glob_argument_splits_like_claude_code() -> None:
    assert split_globs("*.py *.md") == ["*.py", "*.md"]
    assert split_globs("*.py,*.md") == ["*.py", "*.md"]
    assert split_globs("*.{ts,tsx} !vendor") == ["*.{ts,tsx}", "!vendor"]
