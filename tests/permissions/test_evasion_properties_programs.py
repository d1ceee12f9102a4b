"""Property tests (issue 10 items 2-4): no command the policy allows runs a denied program.

Commands are generated from a grammar of the evasion classes — names assembled at run time, expansions,
quoting, wrappers, shells reading standard input, git global options and aliases, interpreters and code
runners, separators and nesting — around a program ``zap`` that the rule ``Bash(zap:*)`` denies. ``zap`` is a
stub on ``PATH`` that appends to a marker file, and every generated command is run in real bash, so the
ground truth is what bash does, not what the grammar meant:

* every command of the attack grammar really runs ``zap`` (the marker grows), and the policy denies it in
  every mode, with and without a hook's allow and a whole-tool ``Bash`` allow;
* a mixed grammar of attacks and harmless commands, under narrow allow rules: whenever the policy allows a
  command, running it leaves the marker untouched.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookloop.permissions import PermissionPolicy
from permissions.evasion_harness import HOOK_ALLOW, MODES

NARROW_ALLOW = (
    "Bash(echo:*)", "Bash(printf:*)", "Bash(true)", "Bash(false)", "Bash(cat:*)", "Bash(ls:*)", "Bash(grep:*)",
    "Bash(git:*)", "Bash(python3:*)", "Bash(perl:*)", "Bash(awk:*)", "Bash(find:*)", "Bash(xargs:*)",
    "Bash(sed:*)", "Bash(base64:*)", "Bash(env:*)", "Bash(sh:*)", "Bash(bash:*)", "Bash(nice:*)",
)  # fmt: skip
DENY = ("Bash(zap:*)",)
B64 = base64.b64encode(b"zap\n").decode()

# -- the grammar ---------------------------------------------------------------------------------------------

# A spelling of the program name and the statement (if any) that must run before it.
NAMES = st.sampled_from(
    [
        ("", "zap"), ("", '"z"ap'), ("", "z\\ap"), ("", "'zap'"), ("", "$'\\x7aap'"), ("", "z''ap"),
        ("", "z${x}ap"), ("", "${x:-zap}"), ("", "z$(:)ap"), ("", "z`:`ap"), ("", "z$@ap"),
        ("", "\"$(printf 'z\\x61p')\""), ("", "$(echo zap)"), ("a=z b=ap; ", "$a$b"), ("x=zap; ", "$x"),
        ("x=zap; ", '"$x"'), ("set -- zap; ", '"$@"'), ("", "$(printf %s z ap)"),
        ("", "$(echo cGF6 | base64 -d | rev)"), ("", "/usr/bin/env zap"),
    ]
)  # fmt: skip
WRAPPERS = st.sampled_from(["", "env ", "command ", "nohup ", "timeout 5 ", "nice -n 1 ", "env A=1 ", "exec "])


@st.composite
def simple_attack(draw: st.DrawFn) -> str:
    """One statement that runs zap."""
    kind = draw(st.sampled_from(["name", "stdin", "string", "git", "code"]))
    if kind == "name":
        prefix, name = draw(NAMES)
        return f"{prefix}{draw(WRAPPERS)}{name}"
    if kind == "stdin":
        return draw(
            st.sampled_from(
                [
                    "echo zap | sh", "printf 'zap\\n' | bash", "echo zap | bash -s", "echo zap | sh -",
                    "bash <<< zap", "sh /dev/stdin <<< zap", "bash /proc/self/fd/0 <<< zap",
                    ". /dev/stdin <<< zap", f"echo {B64} | base64 -d | sh", f"base64 -d <<< {B64} | bash",
                    "echo zap | env sh", "echo zap | /bin/sh", "sh <<'EOF'\nzap\nEOF", "echo zap | xargs sh -c",
                ]
            )
        )  # fmt: skip
    if kind == "string":
        template = draw(st.sampled_from(["bash -c '{}'", 'sh -c "{}"', "eval '{}'", 'eval "{}"']))
        quote = "'" if "'" in template else '"'
        # The outer shell expands `$` and backticks inside double quotes: those spellings go in single quotes.
        unsafe = "'\"" if quote == "'" else "'\"$`\\"
        prefix, name = draw(NAMES.filter(lambda pair: not any(ch in pair[0] + pair[1] for ch in unsafe)))
        return template.format(prefix + name)
    if kind == "git":
        options = draw(st.sampled_from(["", "-C . ", "--no-pager ", "-c color.ui=never "]))
        return f"git {options}-c alias.q='!zap' q"
    return draw(
        st.sampled_from(
            [
                "python3 -c \"import os; os.system('zap')\"", "perl -e 'system(\"zap\")'",
                "awk 'BEGIN{system(\"zap\")}'", "find . -maxdepth 0 -exec zap \\;", "echo x | xargs zap",
                "echo x | sed '1e zap'", "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['zap'])\nEOF",
                "awk 'BEGIN{print | \"zap\"}'",
            ]
        )
    )  # fmt: skip


HARMLESS = st.sampled_from(
    [
        "true", "echo zap", "echo $x", "ls >/dev/null", "printf '%s\\n' zap", "cat /dev/null", "echo z${x}ap",
        "grep -c zap /dev/null || true", "echo 'zap' | cat", "sed s/zap/x/ /dev/null", "awk '{print $1}' /dev/null",
        "find . -maxdepth 0 -name zap", "python3 -c 'print(1)'", "echo zap | grep zap", "git --version",
        "echo $(echo zap)", "bash -c 'echo zap'", "xargs echo < /dev/null", "env echo zap",
    ]
)  # fmt: skip


def nest(statement: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Separators and nesting around a statement (and a harmless neighbour)."""

    def wrap(pair: tuple[str, str, str]) -> str:
        shape, inner, other = pair
        if shape == "H | X" and ";" in inner:
            # `H | a=z b=ap; $a$b` would set a and b in the pipeline's subshell only: keep the statement whole.
            shape = "H | { X\n}"
        return shape.replace("X", inner).replace("H", other)

    shapes = st.sampled_from(
        ["X", "H && X", "H; X", "false || X", "(X\n)", "{ X\n}", "if true; then X\nfi", "H | X",
         "echo $(X\n)", "for i in 1; do X\ndone", "H\nX", "case a in a) X\n;; esac"]
    )  # fmt: skip
    return st.tuples(shapes, statement, HARMLESS).map(wrap)


ATTACKS = nest(simple_attack())
MIXED = nest(st.one_of(simple_attack(), HARMLESS))

# -- running in real bash ------------------------------------------------------------------------------------


@contextmanager
def sandbox() -> Iterator[tuple[Path, Path]]:
    with TemporaryDirectory() as tmp:
        root = Path(tmp)
        stub = root / "bin"
        stub.mkdir()
        marker = root / "marker"
        zap = stub / "zap"
        zap.write_text('#!/bin/sh\necho ran >> "$ZAP_MARKER"\n')
        zap.chmod(0o755)
        work = root / "work"
        work.mkdir()
        yield work, marker


def runs_zap(command: str, work: Path, marker: Path) -> bool:
    """Run ``command`` in bash in ``work`` with the stub on PATH; whether zap ran."""
    marker.unlink(missing_ok=True)
    env = {
        "PATH": f"{work.parent / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "ZAP_MARKER": str(marker),
        "HOME": str(work),
        "LANG": "C.UTF-8",
    }
    if "PYENV_ROOT" in os.environ:  # keep python3 resolvable where it lives outside /usr/bin
        env["PATH"] += ":" + os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "pyenv" in p)
    subprocess.run(
        ["bash", "-c", command], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=20
    )
    return marker.exists()


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(command=ATTACKS)
def test_every_generated_attack_runs_zap_and_is_denied_everywhere(command: str) -> None:
    with sandbox() as (work, marker):
        assert runs_zap(command, work, marker), f"the grammar produced a command that does not run zap: {command!r}"
        for allow in (NARROW_ALLOW, (*NARROW_ALLOW, "Bash")):
            for mode in MODES:
                policy = PermissionPolicy(allow=allow, deny=DENY, mode=mode, workspace=work)
                for hooks in ((), (HOOK_ALLOW,)):
                    outcome = policy.decide("Bash", {"command": command}, hooks=hooks)
                    assert outcome.behavior == "deny", (command, mode, allow[-1], hooks, outcome)


@SETTINGS
@given(command=MIXED)
def test_whatever_the_narrow_rules_allow_never_runs_zap(command: str) -> None:
    with sandbox() as (work, marker):
        policy = PermissionPolicy(allow=NARROW_ALLOW, mode="default", workspace=work)
        if policy.decide("Bash", {"command": command}).behavior == "allow":
            assert not runs_zap(command, work, marker), f"allowed, and it ran zap: {command!r}"
