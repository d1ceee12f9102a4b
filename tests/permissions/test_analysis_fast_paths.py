"""The analysis' shortcuts give exactly what the general path gives.

:func:`hookloop.permissions._shell.analyse` reads simple commands (a command name and words, numbers and
``'…'`` strings) from the script's text by position instead of by tree-sitter field, and memoises what a
simple command's words run per directory state, input, depth and nesting. Both only save time: here every
command of the differential corpus, the benchmark's command and hypothesis-generated commands are analysed
three ways — general path without a memo, shortcuts with a fresh memo, shortcuts with the shared memo warm —
and every field of the analyses (``by_program`` too, which equality leaves out) must be equal.
"""

from __future__ import annotations

import string

import pytest
import tree_sitter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookloop.permissions import _shell, _shellnodes
from permissions import bash_corpus

SHARDS = 4
_COMMANDS = [str(entry["command"]) for entry in bash_corpus.load()]
_SHARED: _shell._Memo = {}  # one memo warmed across the corpus, as in a long session


def _ways(command: str) -> list[tuple[object, ...]]:
    general = _shell.analyse_with(command, None, fast=False)
    fresh = _shell.analyse_with(command, {}, fast=True)
    warm = _shell.analyse_with(command, _SHARED, fast=True)
    slow_memo = _shell.analyse_with(command, {}, fast=False)
    return [(analysis, dict(analysis.by_program)) for analysis in (general, fresh, warm, slow_memo)]


def _assert_same(command: str) -> None:
    general, *others = _ways(command)
    for other in others:
        assert other == general, f"the analysis of {command!r} differs"


@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_shortcuts_equal_the_general_path_on_the_corpus(shard: int) -> None:
    wrong = []
    for command in _COMMANDS[shard::SHARDS]:
        general, *others = _ways(command)
        if any(other != general for other in others):
            wrong.append(command)
    assert not wrong, f"{len(wrong)} commands analysed differently, first: {wrong[:3]!r}"


def test_the_shortcuts_equal_the_general_path_on_the_benchmark_command() -> None:
    from bench.permissions import COMMAND

    _assert_same(COMMAND)
    _assert_same(COMMAND[:-4] + " # 1")


def _command_nodes(source: str) -> list[tree_sitter.Node]:
    tree = tree_sitter.Parser(_shellnodes.LANGUAGE).parse(source.encode())
    found: list[tree_sitter.Node] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            found.append(node)
        stack.extend(node.children)
    return found


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("git -C packages/core --no-pager status --short", ("git", "-C", "packages/core", "--no-pager", "status",
                                                            "--short")),
        ("sed -e 's/^/  /'", ("sed", "-e", "s/^/  /")),
        ("head -5", ("head", "-5")),
        ("grep --include='*.ts' x", ("grep", "--include=*.ts", "x")),
        ("ls r\\m", ("ls", "rm")),
        ("ls a\\ b", ("ls", "a b")),
    ],
)  # fmt: skip
def test_the_words_of_simple_commands_are_read_by_position(source: str, words: tuple[str | None, ...]) -> None:
    (node,) = _command_nodes(source)
    by_position = _shellnodes.simple_words(node, source, ())
    assert by_position is not None
    assert by_position[0] == words
    assert _shell.analyse_with(source, None, fast=False).commands == (words,)


@pytest.mark.parametrize(
    ("source", "shortcut"),
    [
        ('echo "$x"', [(("echo", None), ["string"])]),
        ("ls $(pwd)", [(("ls", None), ["command_substitution"]), (("pwd",), [])]),
        ("echo a{b,c}", [(("echo", None), ["concatenation"])]),
        ("grep --include='*.ts' x", [(("grep", "--include=*.ts", "x"), ["concatenation"])]),
        ("ls > out", [(("ls",), [])]), ("ls *.ts", [(("ls", "*.ts"), [])]), ("*.sh x", [((None, "x"), [])]),
        ("ls # c", [(("ls",), [])]),
        ("FOO=1 ls", [None]), ("cat <<< hi", [None]), ("test a == b", [None]), ("ls (x)", [None, (("x",), [])]),
    ],
)  # fmt: skip
def test_which_commands_take_the_shortcut(source: str, shortcut: list[object]) -> None:
    # Assignments, redirections inside the command, `==` and subshells leave it to the general path; arguments
    # that are not leaves (strings, expansions, substitutions) are handed back to be visited; a glob in the
    # command name gives the same `None` word there.
    found = [_shellnodes.simple_words(node, source, ()) for node in _command_nodes(source)]
    assert [None if f is None else (f[0], [n.type for n in f[1]]) for f in found] == shortcut
    _assert_same(source)


def test_a_descriptor_before_a_redirection_takes_the_general_path() -> None:
    source = "cat 0< in.txt"
    tree = tree_sitter.Parser(_shellnodes.LANGUAGE).parse(source.encode())
    statement = tree.root_node.children[0]
    assert statement.type == "redirected_statement"
    body = statement.child_by_field_name("body")
    assert body is not None
    redirects = statement.children_by_field_name("redirect")
    assert _shellnodes.simple_words(body, source, redirects) is None
    _assert_same(source)
    assert _shell.analyse(source).commands == (("cat",),)


def test_the_memo_keeps_the_directory_state_apart() -> None:
    memo: _shell._Memo = {}
    first = _shell.analyse_with("ls > out.txt", memo, fast=True)
    after_cd = _shell.analyse_with("cd build && ls > out.txt", memo, fast=True)
    assert first.redirects[0].dirs == _shell.START
    assert after_cd.redirects[0].dirs != _shell.START
    _assert_same("cd build && ls > out.txt; ls > out.txt; cd .. && ls > out.txt")


_WORDS = st.sampled_from(
    [
        "ls", "git", "-C", "dir", "status", "push", "rm", "-rf", "/", "cd", "..", "src", "echo", "'a b'", "'rm'",
        "sudo", "env", "FOO=1", "PATH=/x", "bash", "-c", "'ls; rm x'", "eval", "find", ".", "-exec", "{}", "\\;",
        "tee", "out.txt", "~/x", "xargs", "timeout", "5", "nice", "-n", "10", "python3", "-m", "pip", "install",
        "$X", '"$Y"', "$(pwd)", "`id`", "*.ts", "r\\m", "{a,b}", "--x=1", "0", "2", "npm", "run", "test", "--",
        "source", "alias", "x=ls", "trap", "EXIT", "watch", "ssh", "-o", "ProxyCommand=id", "uv", "pip", "==",
    ]
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", " ", "; ", " && ", " || ", " | ", "\n", " > f ", " 2>&1 ", " < in ", "0< x ",
                         " <<< s ", " & ", " $( ", " ) ", " ( ", " { ", " } ", "'", '"', "\\\n", "=", ""])  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_WORDS, _GLUE), min_size=1, max_size=12))
def test_the_shortcuts_equal_the_general_path_on_generated_commands(parts: list[tuple[str, str]]) -> None:
    _assert_same("".join(word + glue for word, glue in parts))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet=string.ascii_letters[:6] + string.digits[:3] + " -_./=;&|<>'\"$`(){}[]*?~#!\\\n\t", max_size=40)
)
def test_the_shortcuts_equal_the_general_path_on_random_text(command: str) -> None:
    _assert_same(command)


@pytest.mark.parametrize("command", ["uv", "uv ", "ls && uv", "uv --quiet"])
def test_a_bare_multi_command_program_is_analysed(command: str) -> None:
    # `uv` with no subcommand used to raise IndexError out of the decision (found by the generated commands).
    from hookloop.permissions import PermissionPolicy

    assert _shell.analyse(command).safe
    assert PermissionPolicy(allow=["Bash(ls:*)"]).decide("Bash", {"command": command}).behavior == "ask"
    _assert_same(command)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_arguments_by_position_are_the_arguments_by_field_in_the_corpus(shard: int) -> None:
    # What the shortcut relies on: in a command whose children are a command name and words of
    # `_ARGUMENT_KINDS`, tree-sitter-bash gives the first the field `name` and every other one `argument`.
    parser = tree_sitter.Parser(_shellnodes.LANGUAGE)
    checked = 0
    for command in _COMMANDS[shard::SHARDS]:
        stack = [parser.parse(command.encode("utf-8", "surrogateescape")).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            children = node.children
            if node.type != "command" or node.has_error or not children or children[0].type != "command_name":
                continue
            if not all(child.type in _shellnodes.ARGUMENT_KINDS for child in children[1:]):
                continue
            assert node.child_by_field_name("name") == children[0], command
            assert node.children_by_field_name("argument") == children[1:], command
            checked += 1
    assert checked > 2_000


def test_long_words_are_not_memoised() -> None:
    memo: _shell._Memo = {}
    long = "echo " + "x" * 5000
    assert _shell.analyse_with(long, memo, fast=True).commands == (("echo", "x" * 5000),)
    assert not memo
    _shell.analyse_with("echo short", memo, fast=True)
    assert len(memo) == 1
    _assert_same(long)
