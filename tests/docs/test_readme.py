"""Every Python block of README.md runs as written: each in a fresh interpreter, a fresh directory, offline.

A block either runs (exit 0, no traceback, and every ``# prints:`` line it announces appears, in order) or is
marked ``<!-- not-run: REASON -->`` right before it, and is then still parsed and its hookloop imports checked.
The conventions are documented in ``docs_markdown.py``; ``test_markdown_parser`` pins the parser itself.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from docs_markdown import CodeBlock, MarkdownError, code_blocks, missing_lines
from docs_runner import REPO, run_python

README = REPO / "README.md"
BLOCKS = [b for b in code_blocks(README) if b.is_python]


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 8, "the README's Python blocks were not found: has the fence syntax changed?"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.not_run is None], ids=lambda b: b.where)
def test_block_runs_as_written(block: CodeBlock, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    ran = run_python([str(script)], cwd=work, root=tmp_path)
    assert ran.returncode == 0, f"README block at {block.where} failed\n{ran.describe()}"
    assert "Traceback (most recent call last)" not in ran.stderr, ran.describe()
    missing = missing_lines(block.expected_lines, ran.stdout + ran.stderr)
    assert not missing, f"README block at {block.where}: '# prints:' lines not printed: {missing}\n{ran.describe()}"


def test_not_run_blocks_are_justified_and_current() -> None:
    for block in (b for b in BLOCKS if b.not_run is not None):
        assert block.not_run, f"{block.where}: a not-run marker must say why: <!-- not-run: needs … -->"
        tree = ast.parse(block.code, filename=block.where)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "hookloop":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{block.where}: {node.module} has no {alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "hookloop":
                        importlib.import_module(alias.name)


def test_not_run_blocks_stay_rare() -> None:
    skipped = [b.where for b in BLOCKS if b.not_run is not None]
    assert len(skipped) <= 2, f"more README blocks are not run than the docs allow: {skipped}"


def test_markdown_parser(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "text\n\n```python\nprint(1)  # prints: 1\n```\n\n<!-- not-run: needs an API key -->\n"
        "````py title\n```\nnested\n```\n````\n\n  ~~~python3\n  x = 1\n  ~~~\n\n```bash\nls\n```\n",
        encoding="utf-8",
    )
    blocks = code_blocks(doc)
    assert [(b.line, b.info, b.is_python, b.not_run) for b in blocks] == [
        (3, "python", True, None),
        (8, "py", True, "needs an API key"),
        (14, "python3", True, None),
        (18, "bash", False, None),
    ]
    assert blocks[0].expected_lines == ["1"]
    assert blocks[1].code == "```\nnested\n```\n"
    assert blocks[2].code == "x = 1\n"
    assert missing_lines(["a", "b"], "b\na\n") == ["b"]  # order matters
    assert missing_lines(["a", "b"], "xa\nyb\n") == []

    doc.write_text("<!-- not-run: x -->\nprose\n```python\n```\n", encoding="utf-8")
    with pytest.raises(MarkdownError, match="right before a code block"):
        code_blocks(doc)
    doc.write_text("```python\nprint(1)\n", encoding="utf-8")
    with pytest.raises(MarkdownError, match="never closed"):
        code_blocks(doc)
