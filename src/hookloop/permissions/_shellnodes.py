"""tree-sitter-bash's language for :mod:`hookloop.permissions._shell`: field and kind ids, one parser per
thread, and the by-position reading of a simple command's words (the walk's shortcut, see :func:`simple_words`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Final

import tree_sitter
import tree_sitter_bash

from hookloop.permissions._shellwords import literal, word_has_glob, word_literal

__all__ = ["ARGUMENT_KINDS", "LANGUAGE", "LEAF_IDS", "LEAVES", "field", "kinds", "parser", "simple_words"]

Words = tuple[str | None, ...]
"""A simple command's words; ``None`` stands for a word only known at run time (as in ``_shell``)."""

LANGUAGE: Final = tree_sitter.Language(tree_sitter_bash.language())


def field(name: str) -> int:
    # Looking a child up by field id is several times cheaper than by field name (which maps the name first).
    found = LANGUAGE.field_id_for_name(name)
    assert found is not None, f"tree-sitter-bash has no field {name!r}"
    return found


def kinds(*names: str) -> frozenset[int]:
    # The symbol ids whose type name is one of ``names``: ``node.kind_id in kinds(x)`` is ``node.type == x``
    # (the type is the name of the id), without making a string for the type.
    count = LANGUAGE.node_kind_count
    return frozenset(i for i in range(count) if LANGUAGE.node_kind_for_id(i) in names)


LEAVES: Final = frozenset({"word", "raw_string", "string_content", "comment", "number", "ansi_c_string"})

LEAF_IDS: Final = kinds(*LEAVES)
_COMMAND_NAME_IDS: Final = kinds("command_name")
_WORD_IDS: Final = kinds("word")
_SIMPLE_ARGUMENT_IDS: Final = kinds("word", "number", "raw_string")
ARGUMENT_KINDS: Final = frozenset(
    {"word", "number", "raw_string", "string", "translated_string", "concatenation", "simple_expansion",
     "expansion", "command_substitution", "process_substitution", "ansi_c_string", "arithmetic_expansion"}
)  # fmt: skip
"""Words tree-sitter-bash puts in a command's ``argument`` field (its ``_literal``s), read by position."""
_ARGUMENT_IDS: Final = kinds(*ARGUMENT_KINDS)
_RAW_STRING_IDS: Final = kinds("raw_string")

_PARSERS: Final = threading.local()


def parser() -> tree_sitter.Parser:
    # One parser per thread (a parser is not safe to share between threads; making one costs more than a word).
    found: tree_sitter.Parser | None = getattr(_PARSERS, "parser", None)
    if found is None:
        found = _PARSERS.parser = tree_sitter.Parser(LANGUAGE)
    return found


def simple_words(
    node: tree_sitter.Node, source: str, redirects: Sequence[tree_sitter.Node]
) -> tuple[Words, list[tree_sitter.Node]] | None:
    """``_shell._words`` of a ``command`` node made of a command name that is one word and arguments that are
    words (:data:`ARGUMENT_KINDS`: no assignment, redirection, comment or subshell), without a syntax error,
    with the arguments that are not leaves (to be visited, in order); plain words, numbers and ``'…'`` strings
    are read from ``source`` (the ASCII script, so byte offsets are string offsets). ``None`` for any other
    command, and when an argument ends where one of the ``redirects`` around the command starts (the general
    path then decides whether it is a descriptor).

    tree-sitter-bash gives such a command's children the fields ``name`` (the first) and ``argument`` (the
    others): the general path reads them by field, this one by position (the tests compare both)."""
    children = node.children
    name = children[0] if children else None
    if name is None or name.kind_id not in _COMMAND_NAME_IDS or name.child_count != 1 or node.has_error:
        return None
    word = name.children[0]
    if word.kind_id not in _WORD_IDS:
        return None
    raw = source[word.start_byte : word.end_byte]
    words: list[str | None] = [None if word_has_glob(raw) else word_literal(raw)]
    inner: list[tree_sitter.Node] = []
    end = name.end_byte
    for child in children[1:]:
        kind = child.kind_id
        start = child.start_byte
        stop = child.end_byte
        value: str | None
        if kind in _SIMPLE_ARGUMENT_IDS:
            raw = source[start:stop]
            if kind in _RAW_STRING_IDS:
                value = raw[1:-1]
            elif "{" in raw or "\\" in raw:
                value = word_literal(raw)
            else:
                value = raw  # what `word_literal` gives: no brace expansion, nothing escaped
        elif kind in _ARGUMENT_IDS:
            value = literal(child)
            if kind not in LEAF_IDS:
                inner.append(child)
        else:
            return None
        if start == end:
            previous = words[-1]
            words[-1] = None if previous is None or value is None else previous + value
        else:
            words.append(value)
        end = stop
    if redirects:
        starts = {child.start_byte for child in redirects if child.type.endswith("redirect")}
        if any(child.end_byte in starts for child in children[1:]):
            return None
    return tuple(words), inner
