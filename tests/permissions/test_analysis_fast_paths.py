"""The analysis' shortcuts give exactly what the general path gives.

:func:`hookloop.permissions._shell.analyse` walks the syntax tree with one cursor (:mod:`._shellwalk`), reads
plain commands (a command name and ordinary words and ``'…'`` strings) from the script's text, takes file
redirections of a plain command from the cursor, reads other simple commands (a command name and words,
numbers and ``'…'`` strings) by position instead of by tree-sitter field, and memoises what a simple command's
words run per directory state, input, depth and nesting. All only save time: here every command of the
differential corpus, the benchmark's command and hypothesis-generated commands are analysed four ways —
general path without a memo, shortcuts with a fresh memo, shortcuts with the shared memo warm, general path
with a memo — and every field of the analyses (``by_program`` too, which equality leaves out) must be equal.
"""

from __future__ import annotations

import ast
import inspect
import string
import textwrap

import pytest
import tree_sitter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookloop.permissions import _shell, _shellnodes, _shellwalk
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
        "=~", "=", "a=b", "''", "'{a,b}'", "a'b'c", "~", "HEAD~1", "%s", "+%s", "a#b", "if", "done", "then", "!",
        "[[", "]]", "time", "coproc", "declare", "x\ty",
    ]
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", " ", "; ", " && ", " || ", " | ", "\n", " > f ", " 2>&1 ", " < in ", "0< x ",
                         " <<< s ", " & ", " $( ", " ) ", " ( ", " { ", " } ", "'", '"', "\\\n", "=", "",
                         " >> ~/x ", " >&- ", " >&2 ", " 3<in ", " {fd}>o ", " >a b ", ">o ", " &>> x ", " <> h ",
                         " > *.log ", " >| y ", " < - ", " <& 0 ", "\t"])  # fmt: skip


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


def test_plain_commands_are_remembered_by_their_text() -> None:
    memo: _shell._Memo = {}
    first = _shell.analyse_with("git status --short && cd src && git status --short", memo, fast=True)
    keys = [key[0] for key in memo]
    assert keys.count("git status --short") == 2  # two directory states
    assert ("git", "status", "--short") not in keys  # read once per state, never by words
    again = _shell.analyse_with("git status --short && cd src && git status --short # again", memo, fast=True)
    assert again == first
    assert dict(again.by_program) == dict(first.by_program)
    assert len(memo) == 3  # nothing new: every command was found by its text


def test_long_words_are_not_memoised() -> None:
    memo: _shell._Memo = {}
    long = "echo " + "x" * 5000
    assert _shell.analyse_with(long, memo, fast=True).commands == (("echo", "x" * 5000),)
    assert not memo
    _shell.analyse_with("echo short", memo, fast=True)
    assert len(memo) == 1
    _shell.analyse_with("echo " + "y" * 1500, memo, fast=True)  # plain: its text and its words would be 3 KB
    assert len(memo) == 1
    _assert_same(long)


_NOTHING_TO_VISIT = frozenset(
    {"concatenation", "string", "string_content", "simple_expansion", "variable_name", "special_variable_name",
     "word", "raw_string", "number"}
)  # fmt: skip


def _depth(node: tree_sitter.Node) -> int:
    return 1 + max((_depth(child) for child in node.named_children), default=0)


def _assert_read_alike(node: tree_sitter.Node, source: str, words: tuple[str | None, ...]) -> None:
    # The field reading of a plain command gives the same words; so does the position reading when it applies
    # (not to a number as the command name), and the only arguments it hands back to be visited are made of
    # concatenations, strings and $NAME expansions at most PLAIN_DEPTH deep, whose visit records nothing.
    name = node.child_by_field_name("name")
    assert name is not None, source
    assert _shellnodes.command_words(name, node.children_by_field_name("argument")) == words, source
    found = _shellnodes.simple_words(node, source, ())
    if found is None:
        assert name.named_children[0].type == "number", source
        return
    assert found[0] == words, source
    for inner in found[1]:
        assert _depth(inner) <= _shellwalk.PLAIN_DEPTH, source
        stack = [inner]
        while stack:
            below = stack.pop()
            assert below.type in _NOTHING_TO_VISIT, source
            stack.extend(below.named_children)


def _plain_nodes(source: str) -> list[tuple[tree_sitter.Node, tuple[str | None, ...]]]:
    # The command nodes the cursor walk reads from the text: plain, without a syntax error.
    found = []
    for node in _command_nodes(source):
        words = _shellwalk.plain_words(source[node.start_byte : node.end_byte])
        if words is not None and not node.has_error:
            found.append((node, words))
    return found


@pytest.mark.parametrize("shard", range(SHARDS))
def test_plain_commands_read_from_the_text_equal_their_nodes_in_the_corpus(shard: int) -> None:
    # What the cursor walk relies on: a plain command's words read from its text are the words the general path
    # reads from its nodes (by field and by position), and none of its arguments is a node to visit.
    checked = 0
    for command in _COMMANDS[shard::SHARDS]:
        if not command.isascii():
            continue  # the walk reads the text only when byte offsets are string offsets
        for node, words in _plain_nodes(command):
            _assert_read_alike(node, command, words)
            checked += 1
    assert checked > 1_500


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("git -C packages/core --no-pager status --short", ("git", "-C", "packages/core", "--no-pager", "status",
                                                            "--short")),
        ("sed -e 's/^/  /'", ("sed", "-e", "s/^/  /")), ("grep --include='*.ts' x", ("grep", "--include=*.ts", "x")),
        ("echo a'b'c '' x''", ("echo", "abc", "", "x")), ("date +%s", ("date", "+%s")), ("ls\t-la", ("ls", "-la")),
        ("git diff HEAD~1 ~/x", ("git", "diff", "HEAD~1", "~/x")), ("ls *.ts a?", ("ls", "*.ts", "a?")),
        ("pytest --maxfail=1 a==b", ("pytest", "--maxfail=1", "a==b")), ("20 x", ("20", "x")),
        ("echo $x a$y $_", ("echo", None, None, None)), ('echo "a b" "" "it\'s"', ("echo", "a b", "", "it's")),
        ('grep -n TODO "$f" "x $HOME/y" "$f"x', ("grep", "-n", "TODO", None, None, None)),
        ("echo '$x' '\"'", ("echo", "$x", '"')), ('echo "a"\'b\'c', ("echo", "abc")),
        ("test a == b", None), ("x =~ y", None), ("x = y", None), ("a=b ls", None), ("*.sh x", None), ("l? x", None),
        ("$x y", None), ('"ls" y', None), ('echo "$"', None), ('echo "$1"', None), ('echo "${x}"', None),
        ('echo "$(id)"', None), ('echo "a\\"', None), ('echo "!x"', None), ('echo "{a,b}"', None), ("echo $x[1]", None),
        ('echo "a', None), ("echo $", None), ("echo $1", None), ("echo '{a,b}'", None), ("echo a{b,c}", None),
        ("ls a\\ b", None),
        ("ls # c", None), ("ls > out", None), ("ls (x)", None), ("ls !x", None), ("ls [a]", None), ("ls  ", None),
        ("ls\nrm", None), ("ls 'a", None), ("echo `id`", None), ("ls &", None), ("", None),
    ],
)  # fmt: skip
def test_which_commands_are_plain(text: str, words: tuple[str | None, ...] | None) -> None:
    assert _shellwalk.plain_words(text) == words
    _assert_same(text)


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("cat <<< 'done'", "cat"), ('tr a-z A-Z <<< "x y"', "tr a-z A-Z"), ("cat <<<x", "cat"), ("cat <<< a'b'", "cat"),
        ("cat <<< 'a' b", None), ("cat <<< ==", None), ("cat <<< =a", None), ("x <<< a <<< b", None),
        ("cat <<<$x", None), ('cat <<< "$x"', None), ("cat 0<<< x", None), ("FOO=1 cat <<< x", None),
        ("cat <<< '{a,b}'", None),
    ],
)  # fmt: skip
def test_which_here_strings_are_read_from_the_text(text: str, command: str | None) -> None:
    # A plain command reading one literal word: the general path records the command, its input literal.
    found = _shellwalk.HERESTRING.fullmatch(text)
    assert (found[1] if found else None) == command
    _assert_same(text)


def test_a_here_string_read_from_the_text_is_literal_input() -> None:
    # What the shortcut must keep: an interpreter reading a literal program runs code, one reading a run-time
    # string runs an unknown program.
    assert _shellwalk.HERESTRING.fullmatch("python3 <<< 'print(1)'")
    literal = _shell.analyse_with("true; python3 <<< 'print(1)'", {}, fast=True)
    assert literal.safe
    assert literal.runs_code
    assert _shell.analyse_with("true; python3 <<< $x", {}, fast=True).unknown_reasons
    _assert_same("true; python3 <<< 'print(1)'; python3 <<< $x; python3 <<< 'print(1)'")


def test_the_plain_reading_fails_fast_on_long_words() -> None:
    # The quantifiers are possessive: a long text that is almost plain fails in linear time, not exponential.
    assert _shellwalk.plain_words("ls " + "x" * 100_000 + " $") is None
    assert _shellwalk.plain_words("ls " + "'x'x" * 20_000 + " ;") is None
    assert _shellwalk.plain_words("ls" + " x" * 50_000 + " (") is None


def _redirected_taken(monkeypatch: pytest.MonkeyPatch, command: str) -> list[bool]:
    taken: list[bool] = []
    original = _shellwalk._redirected

    def spy(analyser: _shell._Analyser, node: tree_sitter.Node) -> bool:
        taken.append(original(analyser, node))
        return taken[-1]

    monkeypatch.setattr(_shellwalk, "_redirected", spy)
    _shell.analyse_with("true; " + command, {}, fast=True)  # a list, so the statement is the cursor's
    return taken


@pytest.mark.parametrize(
    ("command", "taken"),
    [
        ("ls > out", True), ("npm test -- --x=1 > build/test.log 2>&1", True), ("cat < in.txt", True),
        ("du -sh x 2>/dev/null", True), ("ls >> ~/x", True), ("ls > *.txt", True), ("ls 3<in >&2 >& f", True),
        ("sh < script.sh", True), ("cat < -", True), ("ls 2>&1 | x", True),
        ("echo $x > f", True), ('echo "built $(date +%s) on $(cd x; uname)" >> f', True), ("diff <(a) <(b) > d", True),
        ('grep -n x "$f" 2>/dev/null < in', True), ("cat <<< x > f", False), ("FOO=1 ls > f", False),
        ("ls foo>out", False), ("echo hi >a b", False), ("ls <>h", False),
        ('ls > "$f"', False), ("ls >&-", False), ("ls > f <<< x", False),
        ("ls {fd}>out", False), ("(ls) > f", False), ("ls > $(x)", False),
    ],
)  # fmt: skip
def test_which_redirections_take_the_cursor(monkeypatch: pytest.MonkeyPatch, command: str, taken: bool) -> None:
    assert _redirected_taken(monkeypatch, command) == [taken]
    monkeypatch.undo()
    _assert_same(command)
    _assert_same(f"cd build && {command}; {command}")


@pytest.mark.parametrize("depth", range(106, 124))
@pytest.mark.parametrize(
    "body",
    [
        "ls -la",
        "ls > out 2>&1",
        'grep -n x "$f"',
        "a && b | c",
        "for f in *; do ls; done",
        "x <<< y",
        'echo "$(ls)" > o',
        'echo "$f"x a$g > o',
    ],
)
def test_the_shortcuts_equal_the_general_path_at_the_nesting_limit(depth: int, body: str) -> None:
    _assert_same("( " * depth + body + " )" * depth)
    _assert_same("echo $(" * depth + body + ")" * depth)


def test_the_nesting_limit_is_reached_by_those_commands() -> None:
    assert "syntax nested too deeply" in _shell.analyse("( " * 123 + "ls > out" + " )" * 123).unknown_reasons
    assert _shell.analyse("( " * 112 + "ls > out" + " )" * 112).safe
    assert "syntax nested too deeply" in _shell.analyse("echo $(" * 123 + "ls > out" + ")" * 123).unknown_reasons


def _command_nodes_and_errors(source: str) -> list[tree_sitter.Node]:
    tree = tree_sitter.Parser(_shellnodes.LANGUAGE).parse(source.encode())
    return [node for node in tree.root_node.children if node.type == "ERROR"]


def test_the_cursor_walk_leaves_every_kind_the_general_visit_handles_to_it() -> None:
    # `_shellwalk` descends into every kind but `VISITED` and the leaves as `_Analyser.visit_node` does into its
    # generic kinds: every kind that method names must be one of the generic kinds, a leaf or `VISITED`.
    source = textwrap.dedent(inspect.getsource(_shell._Analyser.visit_node))
    named = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    kinds = {name for name in named if _shellnodes.LANGUAGE.id_for_node_kind(name, True) is not None}
    kinds.discard("test_operator")  # looked for inside a test_command, not visited on its own
    kinds.discard("ERROR")  # its id is not below node_kind_count, so the walk never descends into it itself
    assert not {node.kind_id for node in _command_nodes_and_errors("ls )")} & _shellwalk._DESCEND_IDS
    for group in (_shell._SUBSHELLS, _shell._LOOPS, _shell._REDIRECT_KINDS):
        kinds |= group
    assert {"command", "redirected_statement", "for_statement", "test_command"} <= kinds
    assert kinds - _shell._GENERIC - _shellnodes.LEAVES <= _shellwalk.VISITED
    assert not _shell._GENERIC & _shellwalk.VISITED
    assert _shell.MAX_NESTING == _shellwalk.MAX_NESTING
    assert _shellnodes.kinds(*_shell._SUBSHELLS) == _shellwalk._SUBSHELL_IDS  # restored on the way back up
    assert _shellnodes.kinds(*_shell._LOOPS) == _shellwalk._LOOP_IDS  # ended on the way back up


_PLAIN_WORDS = st.sampled_from(
    ["ls", "git", "-C", "x", "a=b", "=", "==", "=~", "'a b'", "''", "'{x}'", "a'b'", "*", "?", "~", "~/x", "HEAD~1",
     "20", "-", "--", "if", "then", "fi", "do", "done", "in", "case", "esac", "function", "time", "coproc", "select",
     "declare", "export", "%s", "+x", "a#b", "#", "!", "[", "]", "[[", "{", "}", "$x", '"s"', "\\", "a,b", "@x",
     '"$x"', '"a $HOME/b"', "$x.y", 'a"$b"c', '"it\'s"', "'\"'", '""', '"$"', '"${x}"', '"!"', "$_", "$1", '"$x',
     "$x$y", '"\\$x"', "=$x", "$x=1", '"$(id)"', "'$x'"]
)  # fmt: skip
_PLAIN_GLUE = st.sampled_from(
    [" ", " ", " ", "\t", "  ", "", "; ", " && ", " | ", "\n", " > o ", " 2>&1 ", " < i ", " <<< 'x'", " <<<x ",
     ' <<< "a b"', " <<<$x", " <<< =", " <<< '{a}'"]
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_PLAIN_WORDS, _PLAIN_GLUE), min_size=1, max_size=10))
def test_the_shortcuts_equal_the_general_path_on_almost_plain_commands(parts: list[tuple[str, str]]) -> None:
    # Words at the edge of what the text reading takes (keywords, `=`-words, quotes, tree-sitter's operators).
    command = "".join(word + glue for word, glue in parts)
    _assert_same(command)
    for node, words in _plain_nodes(command):
        _assert_read_alike(node, command, words)
