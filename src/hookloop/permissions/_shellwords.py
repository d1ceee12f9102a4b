"""Words of a Bash command: quote removal, ``$'…'`` decoding, and the token scan for unanalysable commands."""

from __future__ import annotations

import codecs
import posixpath
import re
from functools import lru_cache
from typing import Final

import tree_sitter

from hookloop.permissions._text import OPAQUE

__all__ = [
    "decode_ansi_c",
    "has_unquoted_glob",
    "literal",
    "node_text",
    "split_assignment",
    "tokens",
    "word_has_glob",
    "word_literal",
]

_BRACE_EXPANSION: Final = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB_PARTS: Final = frozenset({"word", "concatenation"})
_ANSI_C: Final = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)


def unescape_unquoted(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_double_quoted(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def decode_ansi_c(body: str) -> str | None:
    # $'…' escapes; \c (control chars) and anything odd make the word opaque rather than guessed.
    if "\\c" in body:
        return None
    escaped = body.replace("\\e", "\\x1b").replace("\\E", "\\x1b")
    try:
        decoded = codecs.decode(_ESCAPE.sub(_accepted, escaped) if "\\" in escaped else escaped, "unicode_escape")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in decoded else decoded


_ESCAPE: Final = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)
_ESCAPES: Final = frozenset("\\'\"abfnrtv\nxuUN")


def _accepted(escape: re.Match[str]) -> str:
    # The escape as `unicode_escape` decodes it without a DeprecationWarning (an error where warnings are): an
    # unknown `\;` is kept as `\;` and an octal escape above 0o377 is that code point, as it decodes them.
    sequence = escape.group(1)
    if sequence[0] in "01234567":
        value = int(sequence, 8)
        return escape.group(0) if value <= 0o377 else f"\\u{value:04x}"
    return escape.group(0) if sequence in _ESCAPES else "\\\\" + sequence


def node_text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def literal(node: tree_sitter.Node) -> str | None:
    """The value of a word after quote removal, or ``None`` when it depends on run time (expansions, globs)."""
    kind = node.type
    if kind in {"word", "number"}:
        return word_literal(node_text(node))
    if kind == "raw_string":
        return node_text(node)[1:-1]
    if kind == "ansi_c_string":
        return decode_ansi_c(node_text(node)[2:-1])
    if kind in {"string", "translated_string"}:
        parts: list[str] = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(unescape_double_quoted(node_text(child)))
            elif child.is_named:
                return None
        return "".join(parts)
    if kind == "concatenation":
        text = node_text(node)
        if "{" in text and _BRACE_EXPANSION.search(text):
            return None
        parts = []
        for child in node.children:
            value = literal(child) if child.is_named else None
            if value is None:
                return None
            parts.append(value)
        return "".join(parts)
    if kind == "command_name" and node.named_child_count == 1:
        child = node.named_children[0]
        return literal(child)
    return None


def word_literal(raw: str) -> str | None:
    """:func:`literal` of an unquoted word whose text is ``raw`` (``None`` for a brace expansion)."""
    if "{" in raw and _BRACE_EXPANSION.search(raw):
        return None
    return unescape_unquoted(raw)


def word_has_glob(raw: str) -> bool:
    """Whether an unquoted word's text has a pattern character bash expands (``*``, ``?``, ``[``, ``(``), each
    backslash escaping the character after it."""
    if "*" not in raw and "?" not in raw and "[" not in raw and "(" not in raw:
        return False  # the common case, without the scan
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "*?[(":
            return True
        i += 1
    return False


def has_unquoted_glob(node: tree_sitter.Node) -> bool:
    kind = node.type
    if kind == "word":
        return word_has_glob(node_text(node))
    return any(child.type in _GLOB_PARTS and has_unquoted_glob(child) for child in node.named_children)


def split_assignment(word: str) -> tuple[str, str] | None:
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", word, re.DOTALL)
    return (match.group(1), match.group(2)) if match else None


_TOKEN_SPLIT: Final = re.compile(r"[\s;&|()<>`'\"$={},\\]+")
# A second, finer reading: code handed to other programs names commands after these too (vim's ``-c '!rm x'``,
# ``:!rm``, ``["rm", …]``, ``'r'+'m'`` pieces). Its tokens are added, never substituted, so rule words that
# contain these characters (``/:/host``) are still found whole.
_FINE_SPLIT: Final = re.compile(r"[!:\[\]+*?#@%^~]+")


@lru_cache(maxsize=512)
def tokens(command: str) -> frozenset[str]:
    """Every word-like token of ``command`` under several readings, for the conservative deny scan.

    Quotes and backslashes are read both as separators and as removed (``"r"m`` gives ``r``, ``m`` and ``rm``),
    ``$'…'`` strings are decoded, line continuations joined, and paths also give their basename.
    """
    readings = [command, command.replace("\\\n", "")]
    readings.append(re.sub(r"[\"'\\]", "", readings[1]))
    readings.extend(decoded for body in _ANSI_C.findall(command) if (decoded := decode_ansi_c(body)) is not None)
    found: set[str] = set()
    for reading in readings:
        for token in _TOKEN_SPLIT.split(reading):
            if token:
                found.add(token)
                if "/" in token.rstrip("/"):
                    found.add(posixpath.basename(token.rstrip("/")))
                found.update(piece for piece in _FINE_SPLIT.split(token) if piece)
    found.discard(OPAQUE)
    return frozenset(found)
