"""Red-team corpus: where tree-sitter-bash reads a command differently from bash, bash must not run more.

Each attack below runs ``zap`` in real bash (a stub on ``PATH``, as in the property tests), and the policy must
deny it under ``Bash(zap:*)`` in every mode, behind a hook's allow and behind a whole-tool ``Bash`` allow:

* backquoted substitutions tree-sitter-bash keeps as plain text: inside a ``${…}`` operand (quoted or not,
  also in a here-document body), and escaped backquotes inside backquotes, which bash unescapes and runs;
* here-documents bash ends at a line tree-sitter-bash reads as part of a ``$(…)``, ``${…}`` or quoted string;
* ``eval --`` and ``source -- /dev/stdin`` (``--`` ends the builtin's options);

and the harmless spellings nearby keep their decisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.evasion_harness import Case, Rules, check_case
from permissions.test_evasion_properties_programs import NARROW_ALLOW, runs_zap, sandbox

RULES = Rules(allow=NARROW_ALLOW, ask=(), deny=("Bash(zap:*)",))

ATTACKS = [
    # backquotes inside ${…}
    "echo ${x:-`zap`}",
    'echo "${x:-`zap`}"',
    "echo ${x:-${y:-`zap`}}",
    "echo ${x:=`zap`}",
    'x=a; echo "${x/a/`zap`}"',
    "cat <<EOF\n${x:-`zap`}\nEOF",
    "cat <<EOF\n${x:-${y:-`zap`}}\nEOF",
    # escaped backquotes inside backquotes
    "echo `echo \\`zap\\``",
    'echo "`echo \\`zap\\``"',
    'echo "`echo \\"\\`zap\\`\\"`"',
    "x=`echo \\`zap\\``",
    "echo `echo \\$(zap)`",
    "echo `echo \\`echo \\\\\\`zap\\\\\\`\\``",
    # here-documents bash ends earlier
    'cat <<EOF\n$(echo "\nEOF\nzap\n")\nEOF',
    "cat <<EOF\n$(echo '\nEOF\nzap\n')\nEOF",
    "cat <<EOF\n${x:-\nEOF\nzap\n}\nEOF",
    'cat <<-EOF\n$(echo "\n\tEOF\nzap\n")\nEOF',
    "cat <<EOF\n$(cat <<'X'\nEOF\nzap\nX\n)\nEOF",
    # `--` after eval and source
    "eval -- zap",
    "eval -- 'zap'",
    'eval -- "z"ap',
    f"echo {'emFwCg=='} | base64 -d | . -- /dev/stdin",
    f"echo {'emFwCg=='} | base64 -d | source -- /dev/stdin",
    f"echo {'emFwCg=='} | base64 -d | source -- /dev/fd/0",
]

HARMLESS = [
    Case('echo "${x:-default}"', "allow", RULES),
    Case("echo ${x:-$(echo hi)}", "allow", RULES),
    Case("echo `date`", "unmatched", RULES),  # date is not allowed
    Case("echo `echo hi`", "allow", RULES),
    Case("echo `echo \\`echo hi\\``", "allow", RULES),
    Case("echo '`zap`' \"\\`zap\\`\"", "allow", RULES),  # quoted and escaped: text, not a substitution
    Case("cat <<'EOF'\n${x:-`zap`}\nEOF", "allow", RULES),  # a quoted delimiter: the body is text
    Case("cat <<EOF\nhello $(echo hi)\nEOF", "allow", RULES),
    Case("cat <<-EOF\n\thello\n\tEOF", "allow", RULES),
    Case("eval -- echo hi", "allow", RULES),
]


@pytest.mark.parametrize("command", ATTACKS)
def test_each_attack_really_runs_zap(command: str) -> None:
    with sandbox() as (work, marker):
        assert runs_zap(command, work, marker), command


@pytest.mark.parametrize("command", ATTACKS)
def test_each_attack_is_denied_in_every_mode(command: str, workspace: Path) -> None:
    check_case(Case(command, "deny", RULES), workspace)


@pytest.mark.parametrize("case", HARMLESS, ids=[case.command for case in HARMLESS])
def test_harmless_spellings_keep_their_decision(case: Case, workspace: Path) -> None:
    check_case(case, workspace)
