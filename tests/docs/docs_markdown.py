"""Find the fenced Python code blocks of a Markdown file, and the conventions the docs tests honour.

A block is a fenced code block (CommonMark: three or more backticks or tildes, indented at most three spaces,
closed by a fence of the same character at least as long) whose info string's first word is ``python``,
``py`` or ``python3``.

Conventions, both visible in the rendered Markdown source:

- ``<!-- not-run: REASON -->`` on the last non-blank line before a block: the block is not executed (it needs
  something an offline test cannot have, and REASON says what). It is still parsed, and every name it imports
  from ``hookloop`` must exist.
- ``# prints: TEXT`` comments inside a block: the output must contain a line containing TEXT, in the order the
  comments appear (a later comment matches a later line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PYTHON_INFO = frozenset({"python", "py", "python3"})
_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.*?)\s*-->$")
_PRINTS = re.compile(r"#\s*prints:\s*(.+?)\s*$")


@dataclass(frozen=True)
class CodeBlock:
    path: Path
    line: int  # 1-based line of the opening fence
    info: str
    code: str
    not_run: str | None  # the reason given by a not-run marker, "" for a marker without one

    @property
    def is_python(self) -> bool:
        return self.info.lower() in PYTHON_INFO

    @property
    def expected_lines(self) -> list[str]:
        return [m.group(1) for line in self.code.splitlines() if (m := _PRINTS.search(line))]

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


class MarkdownError(ValueError):
    """The Markdown cannot be split into blocks safely (an unclosed fence, a marker before no block)."""


def code_blocks(path: Path) -> list[CodeBlock]:
    """Every fenced code block of ``path`` in order (all languages; filter with :attr:`CodeBlock.is_python`)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[CodeBlock] = []
    marker: re.Match[str] | None = None  # a not-run marker waiting for its block
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = _OPEN.match(line)
        if opened is None:
            if line.strip():
                if marker is not None:
                    raise MarkdownError(f"{path.name}:{index}: a not-run marker must come right before a code block")
                marker = _NOT_RUN.match(line.strip())
            index += 1
            continue
        start, (indent, fence, info) = index, opened.groups()
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = lines[index].strip()
            if closing.startswith(fence) and not closing.strip(fence[0]):
                break
            text = lines[index]
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip(" "))
            index += 1
        else:
            raise MarkdownError(f"{path.name}:{start + 1}: the code fence opened here is never closed")
        reason = marker.group(1) if marker is not None else None
        blocks.append(CodeBlock(path=path, line=start + 1, info=info, code="\n".join(body) + "\n", not_run=reason))
        marker = None
        index += 1
    if marker is not None:
        raise MarkdownError(f"{path.name}: the last not-run marker comes before no code block")
    return blocks


def missing_lines(expected: list[str], output: str) -> list[str]:
    """The ``# prints:`` expectations not found in ``output`` (each must match a line after the previous one's)."""
    out = output.splitlines()
    position = 0
    missing: list[str] = []
    for want in expected:
        for offset, line in enumerate(out[position:]):
            if want in line:
                position += offset + 1
                break
        else:
            missing.append(want)
    return missing
