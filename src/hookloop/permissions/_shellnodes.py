"""tree-sitter-bash's language for :mod:`hookloop.permissions._shell`: field and kind ids, one parser per
thread, and the by-position reading of a simple command's words (the walk's shortcut, see :func:`simple_words`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Final

import tree_sitter
import tree_sitter_bash

from hookloop.permissions._coderun import reads_script_from_stdin
from hookloop.permissions._shellwords import has_unquoted_glob, literal, node_text, word_has_glob, word_literal

__all__ = [
    "ARGUMENT",
    "ARGUMENT_KINDS",
    "BODY",
    "DESTINATION",
    "LANGUAGE",
    "LEAF_IDS",
    "LEAVES",
    "REDIRECT",
    "command_words",
    "descendants",
    "field",
    "kinds",
    "name_word",
    "parser",
    "redirect_extra_words",
    "simple_words",
    "static_stdin",
]

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
ARGUMENT: Final = field("argument")
BODY: Final = field("body")
DESTINATION: Final = field("destination")
REDIRECT: Final = field("redirect")

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
    """:func:`command_words` of a ``command`` node made of a command name that is one word and arguments that are
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


def command_words(name: tree_sitter.Node, args: Sequence[tree_sitter.Node]) -> Words:
    """A command's words from its name and argument nodes (see ``_shell``); a ``None`` word is only known at
    run time."""
    # Nodes with no blank between them are one word to bash (tree-sitter splits `` r`:`m `` after the `r`).
    words: list[str | None] = [name_word(name)]
    end = name.end_byte
    for node in args:
        value = word_literal(node_text(node)) if node.type == "word" else literal(node)  # `literal`, inlined
        if node.start_byte == end:
            previous = words[-1]
            words[-1] = None if previous is None or value is None else previous + value
        else:
            words.append(value)
        end = node.end_byte
    return tuple(words)


def name_word(name: tree_sitter.Node) -> str | None:
    """The command name's value: ``None`` when it holds an unquoted glob or is only known at run time."""
    if name.type == "command_name" and name.named_child_count == 1:
        child = name.named_children[0]
        if child.type == "word":  # the common case: `has_unquoted_glob` and `literal` of the one word, inlined
            raw = node_text(child)
            return None if word_has_glob(raw) else word_literal(raw)
    return None if has_unquoted_glob(name) else literal(name)


def static_stdin(redirects: Iterable[tree_sitter.Node]) -> bool:
    """Whether a command reads standard input from a literal here-doc, here-string or file named in its text."""
    for child in redirects:
        if child.type == "herestring_redirect":
            content = [c for c in child.named_children if c.type != "heredoc_start"]
            return bool(content) and all(literal(c) is not None for c in content)
        if child.type == "heredoc_redirect":
            start = next((c for c in child.named_children if c.type == "heredoc_start"), None)
            body = next((c for c in child.named_children if c.type == "heredoc_body"), None)
            quoted = start is not None and re.search(r"[\"'\\]", node_text(start)) is not None
            return quoted or body is None or not re.search(r"[$`]", node_text(body))
        if child.type == "file_redirect":
            operator = next((node_text(c) for c in child.children if not c.is_named), "")
            destinations = child.children_by_field_id(DESTINATION)
            if operator == "<" and destinations:
                target = literal(destinations[0])
                return target is not None and not reads_script_from_stdin(target)
    return False


def redirect_extra_words(node: tree_sitter.Node) -> tuple[tree_sitter.Node, ...]:
    # tree-sitter-bash attaches words that follow a redirection (`ls > out rm -rf /`) to the redirection;
    # bash passes them to the command.
    if node.type == "file_redirect":
        return tuple(node.children_by_field_id(DESTINATION)[1:])
    if node.type == "heredoc_redirect":
        return tuple(node.children_by_field_id(ARGUMENT))
    return ()


def descendants(node: tree_sitter.Node, kind: str) -> Iterable[tree_sitter.Node]:
    for child in node.named_children:
        if child.type == kind:
            yield child
        yield from descendants(child, kind)
