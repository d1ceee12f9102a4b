"""The analysis' walk over tree-sitter-bash's syntax tree with one ``TreeCursor`` (the shortcut of
:meth:`hookloop.permissions._shell._Analyser.visit_children`), and the reading of plain commands from their text.

The general walk asks each node for its list of named children and calls methods per child. This one moves a
cursor over the same children in the same order and

* descends into the kinds whose visit is only a visit of their children (``program``, ``list``, ``pipeline`` …)
  without a call, checking what the general visit checks (a missing node, the nesting limit);
* descends into subshells, substitutions and loops too, and does on the way back up what the general visit
  does after their children (restore the directory state; end the loop, see ``_Analyser.loop_ended``);
* reads the words of a *plain* simple command from the script's text (:func:`plain_words`; the analyser keeps
  what it runs under that text), and those of another simple command by position (``simple_words``),
  descending into its arguments that are not leaves and classifying it on the way back up;
* takes a ``redirected_statement`` whose body is read either way and whose redirections are file redirections
  to one word or number each (``> build/log 2>&1``, ``< in.txt``) from the cursor (:func:`_redirected`);
* hands every other node to the general visit, at the nesting the general walk would give it.

It records exactly what the general walk records, in the same order, at the same nesting (the tests compare
both on the corpus, at the nesting limit and on generated commands); when in doubt it leaves the node to the
general visit.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

import tree_sitter

from hookloop.permissions._coderun import reads_script_from_stdin
from hookloop.permissions._dirs import DirState, file_opens, word_target
from hookloop.permissions._shellnodes import (
    BODY,
    DESTINATION,
    LANGUAGE,
    LEAF_IDS,
    REDIRECT,
    field,
    kinds,
    simple_words,
)
from hookloop.permissions._shellwords import word_literal

if TYPE_CHECKING:
    from hookloop.permissions._shell import Words, _Analyser

__all__ = ["HERESTRING", "MAX_NESTING", "PLAIN_COMMAND", "PLAIN_DEPTH", "plain_words", "visit_children"]

MAX_NESTING: Final = 120
"""How deep the syntax tree is walked (subshells in subshells …) before the command is treated as unanalysable."""

# A plain command: a command name of ordinary characters, then blank-separated words made of ordinary characters
# (and * ? =), '…' strings, "…" strings and $NAME expansions. No '…' or "…" holds a brace; a "…" holds no $ but in
# $NAME, and no ` \ ! or line break. Outside quotes there is none of $ (but in $NAME) ` \ { } [ ] ( ) < > | & ; # !
# or a line break: no substitution, redirection, assignment (no = in the name), brace expansion, escape, comment,
# or glob or expansion in the name; and no word starts with = (tree-sitter-bash reads `== x` and `=~ x` after a
# command name as a test operator and its operand). Its words are the text split at the blanks with the quotes
# removed (None for a word holding an expansion), which is what the general path reads from the nodes; visiting
# its arguments records nothing (a concatenation holding a string holding an expansion holding a name: at most
# PLAIN_DEPTH levels below the command). The quantifiers are possessive and the alternatives start with different
# characters: the time to match (or to fail) is linear in the text.
_ORDINARY: Final = r"A-Za-z0-9_./:,+%@~^\-"
_NAME: Final = r"\$[A-Za-z_][A-Za-z0-9_]*+"
_QUOTED: Final = rf"'[^'{{]*+'|\"(?:[^\"$`\\{{!\n\r]++|{_NAME})*+\""
_PIECE: Final = rf"[{_ORDINARY}*?=]++|{_QUOTED}|{_NAME}"
_FIRST: Final = rf"[{_ORDINARY}*?]|{_QUOTED}|{_NAME}"
PLAIN_COMMAND: Final = re.compile(rf"[{_ORDINARY}]++(?:[ \t]++(?:{_FIRST})(?:{_PIECE})*+)*+")
PLAIN_DEPTH: Final = 4
# A plain command reading a here-string of one literal word (no expansion; not starting with =): `cat <<< 'done'`.
_LITERAL: Final = r"'[^'{]*+'|\"[^\"$`\\{!\n\r]*+\""
HERESTRING: Final = re.compile(
    rf"({PLAIN_COMMAND.pattern})[ \t]++<<<[ \t]*+(?:[{_ORDINARY}*?]|{_LITERAL})(?:[{_ORDINARY}*?=]++|{_LITERAL})*+"
)
_TOKEN: Final = re.compile(rf"(?:{_PIECE})++")
_PART: Final = re.compile(r"'([^']*+)'|\"([^\"]*+)\"|([^'\"]++)")


def plain_words(text: str) -> tuple[str | None, ...] | None:
    """The words of a ``command`` node whose text is ``text`` when it is plain (see above), else ``None``."""
    if PLAIN_COMMAND.fullmatch(text) is None:
        return None
    if "'" not in text and '"' not in text and "$" not in text:
        return tuple(text.split())
    return tuple(_word(token) for token in _TOKEN.findall(text))


def _word(token: str) -> str | None:
    # One word of a plain command: its pieces without their quotes; None if one is an expansion.
    if "'" not in token and '"' not in token:
        return None if "$" in token else token
    parts: list[str] = []
    for raw, quoted, bare in _PART.findall(token):
        if "$" in quoted or "$" in bare:
            return None
        parts.append(raw or quoted or bare)
    return "".join(parts)


_DESCRIPTOR: Final = field("descriptor")
_COMMAND_IDS: Final = kinds("command")
_REDIRECTED_IDS: Final = kinds("redirected_statement")
_FILE_REDIRECT_IDS: Final = kinds("file_redirect")
_TARGET_IDS: Final = kinds("word", "number")
_NUMBER_IDS: Final = kinds("number")
_SUBSHELL_IDS: Final = kinds("subshell", "command_substitution", "process_substitution")
_LOOP_IDS: Final = kinds("while_statement", "for_statement", "c_style_for_statement", "select_statement")
VISITED: Final = frozenset(
    {"command", "redirected_statement", "variable_assignment", "declaration_command", "unset_command",
     "function_definition", "file_redirect", "heredoc_redirect", "herestring_redirect", "test_command",
     "arithmetic_expansion", "expansion", "compound_statement", "subscript", "subshell", "command_substitution",
     "process_substitution", "while_statement", "for_statement", "c_style_for_statement", "select_statement"}
)  # fmt: skip
"""The kinds for which ``_Analyser.visit_node`` does more than check that the node is not missing and visit its
children; every other kind but the leaves and ERROR (whose id, 65535, is not below ``node_kind_count``) is
descended into here."""
_DESCEND_IDS: Final = frozenset(range(LANGUAGE.node_kind_count)) - kinds(*VISITED) - LEAF_IDS


# What to do when the walk comes back up to a node it descended into (the general visit does it after the
# node's children): classify a command (its words), restore the directory state after a subshell, or end a loop
# (the number of files opened before it and the directory state it started in).
_CLASSIFY: Final = 0
_RESTORE: Final = 1
_LOOP: Final = 2
_Exit = tuple[int, int, "Words", DirState, int]  # the node's depth, what to do, the words, the state, the mark


def visit_children(analyser: _Analyser, node: tree_sitter.Node) -> None:
    """``analyser.visit_children(node)`` of the general walk, with a cursor (see the module docstring)."""
    cursor = node.walk()
    if not cursor.goto_first_child():
        return
    base = analyser.nesting
    depth = 1  # of the cursor below `node`; the node there has the nesting base + depth
    exits: list[_Exit] = []
    while True:
        child = cursor.node
        if child is not None and child.is_named and (kind := child.kind_id) not in LEAF_IDS:
            descend: _Exit | None = None
            if base + depth > MAX_NESTING:
                analyser.unknown_program("syntax nested too deeply")
            elif kind in _DESCEND_IDS:
                if child.is_missing:
                    analyser.unknown_program("the command does not parse")
                if cursor.goto_first_child():
                    depth += 1
                    continue
            elif kind in _COMMAND_IDS:
                descend = _command(analyser, child, base, depth)
            elif kind in _SUBSHELL_IDS:
                descend = (depth, _RESTORE, (), analyser.dirs, 0)  # a directory change in a subshell ends with it
            elif kind in _LOOP_IDS:
                descend = (depth, _LOOP, (), analyser.dirs, len(analyser.redirects))
                analyser.loop_variable(child)
            else:
                analyser.nesting = base + depth
                if kind not in _REDIRECTED_IDS or not _redirected(analyser, child):
                    analyser.visit_node(child)
            if descend is not None:
                if cursor.goto_first_child():
                    exits.append(descend)
                    depth += 1
                    continue
                _exit(analyser, descend, base)
        while not cursor.goto_next_sibling():
            if depth == 1:
                analyser.nesting = base
                return
            cursor.goto_parent()
            depth -= 1
            if exits and exits[-1][0] == depth:
                _exit(analyser, exits.pop(), base)


def _exit(analyser: _Analyser, action: _Exit, base: int) -> None:
    depth, what, words, dirs, mark = action
    if what == _CLASSIFY:
        analyser.nesting = base + depth
        analyser.classify(words)
    elif what == _RESTORE:
        analyser.dirs = dirs
    else:
        analyser.loop_ended(mark, dirs)


def _command(analyser: _Analyser, node: tree_sitter.Node, base: int, depth: int) -> _Exit | None:
    """``analyser.command(node, ())`` for a command at ``depth``; or, for a command whose arguments must be
    visited first (strings, substitutions …, see ``simple_words``), what to do once the walk has visited them:
    the walk descends into the command, where the name and the leaves are nothing to visit and the rest are
    those, in order."""
    nesting = analyser.nesting = base + depth
    source = analyser.source
    if not source or nesting >= MAX_NESTING - PLAIN_DEPTH or node.has_error:  # near the limit: the general path
        analyser.command(node, ())
        return None
    text = source[node.start_byte : node.end_byte]
    if analyser.classify_plain(text):
        return None  # what `command` does for it (stdin_static is False in a walk)
    if "<<<" in text and (herestring := HERESTRING.fullmatch(text)) is not None:
        # What `command` records: the command, reading literal input (visiting the word records nothing).
        analyser.stdin_static = True
        try:
            analyser.classify_plain(herestring[1])
        finally:
            analyser.stdin_static = False
        words = plain_words(herestring[1])
        if words is not None:
            analyser.stdin_program(words, (), text[herestring.end(1) :])
        return None
    found = simple_words(node, source, ())
    if found is None:
        analyser.command(node, ())
        return None
    if not found[1]:
        analyser.classify(found[0])
        return None
    return (depth, _CLASSIFY, found[0], None, 0)


def _redirected(analyser: _Analyser, node: tree_sitter.Node) -> bool:
    """``analyser.visit_node(node)`` for a ``redirected_statement`` whose body is a command the position reading
    takes (before every redirection, with a blank between) and whose redirections are file redirections to one
    word or number each; ``False``, and nothing recorded, for any other."""
    source = analyser.source
    if not source or analyser.nesting >= MAX_NESTING - PLAIN_DEPTH or node.has_error:
        return False
    cursor = node.walk()
    cursor.goto_first_child()
    body = cursor.node
    if body is None or body.kind_id not in _COMMAND_IDS or cursor.field_id != BODY:
        return False
    end = body.end_byte
    redirects: list[tuple[str, bool, str]] = []  # operator, whether the destination is a number, its text
    while cursor.goto_next_sibling():
        redirect = cursor.node
        if redirect is None or redirect.kind_id not in _FILE_REDIRECT_IDS or cursor.field_id != REDIRECT:
            return False
        if redirect.start_byte <= end:  # `ls 0<x`: whether the 0 is an argument is for the general path
            return False
        found = _file_redirect(cursor, source)
        if found is None:
            return False
        redirects.append(found)
    if not redirects:
        return False
    text = source[body.start_byte : end]
    words: Words | None = None  # read by position when the body is not plain
    inner: list[tree_sitter.Node] = []
    if PLAIN_COMMAND.fullmatch(text) is None:
        read = simple_words(body, source, ())
        if read is None:
            return False
        words, inner = read
    # What the general path records: the command's arguments that are not leaves (visited in order), the
    # command (its input is literal when the first `<` reads a literal file that is not standard input), then
    # each redirection, opened where the command starts.
    before, count = analyser.dirs, len(analyser.commands)
    for argument in inner:
        analyser.visit(argument)
    stdin = next((text for operator, _, text in redirects if operator == "<"), None)
    if stdin is not None:
        target = word_literal(stdin)
        analyser.stdin_static = target is not None and not reads_script_from_stdin(target)
    try:
        if words is None:
            analyser.classify_plain(text)  # remembered by its text, with whether its input is literal
        else:
            analyser.classify(words)
    finally:
        analyser.stdin_static = False
    mark, unknown = len(analyser.redirects), False
    for operator, number, text in redirects:
        writes, reads = file_opens(operator, number, text)
        if writes or reads:
            target, tilde = word_target(text)
            analyser.opens(target, tilde, writes, reads, before)
            unknown = unknown or (writes and target is None)
    if unknown:
        analyser.output_of_last(count, mark)
    return True


def _file_redirect(cursor: tree_sitter.TreeCursor, source: str) -> tuple[str, bool, str] | None:
    """The ``file_redirect`` at ``cursor`` when it is made of an optional descriptor, its operator and one
    destination that is a word or a number, as (operator, whether the destination is a number, its text), the
    cursor back on it; ``None`` for any other."""
    cursor.goto_first_child()
    if cursor.field_id == _DESCRIPTOR and not cursor.goto_next_sibling():
        return None
    operator = cursor.node
    if operator is None or operator.is_named or not cursor.goto_next_sibling():
        return None
    destination = cursor.node
    if destination is None or destination.kind_id not in _TARGET_IDS or cursor.field_id != DESTINATION:
        return None
    if cursor.goto_next_sibling():
        return None  # words after the destination: the general path passes them to the command
    cursor.goto_parent()
    text = source[destination.start_byte : destination.end_byte]
    return source[operator.start_byte : operator.end_byte], destination.kind_id in _NUMBER_IDS, text
