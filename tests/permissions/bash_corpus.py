"""The differential corpus for the Bash analysis: commands, a canonical form of what the analysis and the policy
say about them, and the generator that made the generated half.

``data/bash_corpus.jsonl`` holds one JSON object per line: ``command``, ``analysis`` (a digest of the canonical
:class:`~hookloop.permissions._shell.ShellAnalysis`) and ``behaviors`` and ``decisions`` (the policies' outcomes
under the corpus policies, see :func:`decisions`). It was recorded from the analysis before it was optimised
(``python tests/permissions/bash_corpus.py --record``); the test pins every later version to it, so a speed-up
that changes one answer fails. Re-record only for a deliberate, reviewed change of behaviour.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import random
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from hookloop.permissions import PermissionPolicy, _shell

CORPUS = Path(__file__).parent / "data" / "bash_corpus.jsonl"
WORKSPACE = "/nonexistent-hookloop-corpus/ws"
HOME = "/nonexistent-hookloop-corpus/home"
ENVIRONMENT = {"HOME": HOME}
UNSET = ("HOOKLOOP_HOME", "CDPATH")

_ALLOW = [
    "Bash(cd:*)", "Bash(git status:*)", "Bash(git log:*)", "Bash(git diff:*)", "Bash(git:*)", "Bash(npm run test:*)",
    "Bash(ls:*)", "Bash(grep:*)", "Bash(sed:*)", "Bash(find:*)", "Bash(sort:*)", "Bash(head:*)", "Bash(tail:*)",
    "Bash(wc:*)", "Bash(cat:*)", "Bash(echo:*)", "Bash(python3 -m pytest:*)", "Bash(test:*)", "Bash(true)",
    "Bash(tr:*)", "Bash(xargs grep:*)", "Bash(env:*)", "Bash(sudo apt update)", "Bash(bash -c:*)", "Bash(tee:*)",
    "Bash(awk:*)", "Bash(python3:*)", "Read(./**)", "Edit(./src/**)",
]  # fmt: skip
_ASK = ["Bash(git push:*)", "Bash(npm publish:*)", "Bash(docker:*)", "Edit(./package.json)", "Read(~/.ssh/**)"]
_DENY = [
    "Bash(rm -rf:*)", "Bash(rm:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(sudo:*)", "Bash(nc *)", "Bash(* --force)",
    "Read(./.env)", "Read(./secrets/**)", "Edit(/etc/**)", "Write(~/.bashrc)",
]  # fmt: skip


def policies() -> dict[str, PermissionPolicy]:
    """The corpus policies: a realistic rule set in default mode, the same in acceptEdits, and no rules at all."""
    rules = PermissionPolicy(allow=_ALLOW, ask=_ASK, deny=_DENY, workspace=WORKSPACE)
    return {
        "rules": rules,
        "acceptEdits": rules.copy(mode="acceptEdits"),
        "bare": PermissionPolicy(workspace=WORKSPACE),
    }


def _canonical(value: object) -> object:
    # A form independent of hash seeds: frozensets sorted, dict keys sorted, dataclasses as field lists.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, *(_canonical(getattr(value, f.name)) for f in dataclasses.fields(value))]
    if isinstance(value, frozenset | set):
        return ["set", *sorted((_canonical(item) for item in value), key=repr)]
    if isinstance(value, Mapping):
        return ["map", *sorted(([str(k), _canonical(v)] for k, v in value.items()), key=repr)]
    if isinstance(value, tuple | list):
        return [_canonical(item) for item in value]
    return value


def analysis_digest(command: str) -> str:
    """A digest of everything :func:`hookloop.permissions._shell.analyse` says about ``command``."""
    text = json.dumps(_canonical(_shell.analyse(command)), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def decisions(command: str, rules: Mapping[str, PermissionPolicy]) -> tuple[str, str]:
    """The policies' behaviours for ``command`` (one letter each: d, a, A for allow) and a digest of every
    outcome (behaviour, reason, decided_by) and of the rule ``check`` reports, from the workspace and from
    ``src`` below it."""
    letters: list[str] = []
    found: list[object] = []
    for name, policy in rules.items():
        for cwd in (None, "src"):
            outcome = policy.decide("Bash", {"command": command}, cwd=cwd)
            match = policy.check("Bash", {"command": command}, cwd=cwd)
            found.append([name, outcome.behavior, outcome.reason, outcome.decided_by, repr(match)])
            letters.append({"deny": "d", "ask": "a", "allow": "A"}[outcome.behavior])
    digest = hashlib.sha256(json.dumps(found, ensure_ascii=True).encode()).hexdigest()[:24]
    return "".join(letters), digest


def harvested(tests: Path) -> list[str]:
    """Every string constant of the permission and sandbox test files (their red-team commands among them)."""
    found: dict[str, None] = {}
    for path in sorted(
        [*tests.glob("permissions/test_*.py"), *tests.glob("sandbox/test_*.py"), *tests.glob("test_*.py")]
    ):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) <= 2000:
                found[node.value] = None
    return list(found)


_WORDS = [
    "rm", "-rf", "/", "ls", "-la", "git", "-C", "dir", "push", "status", "--no-pager", "-c", "core.pager=less",
    "npm", "run", "test", "curl", "http://x", "sudo", "-u", "root", "xargs", "env", "FOO=1", "PATH=/tmp",
    "bash", "sh", "eval", "find", ".", "-exec", "{}", ";", "+", "-delete", "python3", "-m", "pytest", "timeout",
    "5", "nice", "-n", "10", "cat", "echo", "tee", "a.txt", "~/x", "~root/y", "~+/z", "$HOME", "$X", "${Y}",
    "\"$Z\"", "'rm'", "\"r\"m", "r\\m", "$'\\x72m'", "`date`", "$(whoami)", "*.ts", "src/*", "{a,b}", "ｒｍ", "rм",
    "RM", "/bin/rm", "./rm", "/usr/bin/env", "command", "-v", "exec", "nohup", "source", ".", "alias", "x=rm",
    "-o", "out", "--force", "awk", "'{print}'", "sed", "-e", "s/a/b/", "cd", "..", "/tmp", "-", "pushd", "popd",
    "docker", "wget", "nc", "-l", "let", "x=1+2", "test", "-v", "a[0]", "declare", "-i", "n=3", "trap", "'rm x'",
    "EXIT", ".git/config", ".claude/settings.json", "~/.bashrc", ".env", "secrets/k", "/etc/passwd", "build/log",
]  # fmt: skip
_REDIRECTS = [
    "> out.txt",
    ">> .git/hooks/pre-commit",
    "2>&1",
    "< .env",
    "> /dev/null",
    "&> $LOG",
    "> ~/.bashrc",
    "<<< 'hi'",
    "<> file",
    "> src/*.ts",
    ">| x",
    "1>&2",
    "2> err",
    "> /etc/hosts",
    "< secrets/k",
]
_OPERATORS = ["; ", " && ", " || ", " | ", " |& ", " & ", "\n"]


_BENIGN = [
    "git status --short", "git -C packages/core --no-pager log -n 3", "ls -la dist", "grep -rn TODO src",
    "sed -e 's/^/  /'", "find . -name '*.orig' -type f", "sort -k5 -n", "tail -3", "wc -l", "cat package.json",
    "echo \"built $(date +%s)\"", "python3 -m pytest tests -q", "test -f .env.example", "true", "tr a-z A-Z",
    "npm run test -- --coverage", "cd src", "cd ..", "cd ~/proj", "cd /tmp", "head -5", "xargs grep -l x",
    "env LANG=C ls", "timeout 5 ls", "tee build/out.log", "awk '{print $1}'", "python3 script.py", "git diff HEAD~1",
]  # fmt: skip
_BENIGN_REDIRECTS = [
    "> build/test.log",
    "2>&1",
    ">> build/history.txt",
    "< dist/index.js",
    "2>/dev/null",
    "> src/gen.ts",
    "> ../outside.txt",
    "> .git/x",
    "> ~/x",
    "< ~/.ssh/id",
    "> $OUT",
    "> /tmp/t",
]


def _simple(rng: random.Random) -> str:
    if rng.random() < 0.5:
        text = rng.choice(_BENIGN)
        if rng.random() < 0.3:
            text += " " + rng.choice(_BENIGN_REDIRECTS)
        return text
    words = [rng.choice(_WORDS) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), rng.choice(_REDIRECTS))
    return " ".join(words)


def _compound(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.45:
        return _simple(rng)
    inner = _compound(rng, depth - 1)
    shape = rng.randrange(14)
    shapes = [
        lambda: f"( {inner} )",
        lambda: f"{{ {inner}; }}",
        lambda: f"if {_simple(rng)}; then {inner}; fi",
        lambda: f"for f in a b; do {inner}; done",
        lambda: f"while {_simple(rng)}; do {inner}; done",
        lambda: f"echo $({inner})",
        lambda: f"cat <({inner})",
        lambda: f"bash -c '{inner}'",
        lambda: f'eval "{inner}"',
        lambda: f"cat <<EOF\n$({inner})\nEOF",
        lambda: f"cat <<'EOF'\n{inner}\nEOF",
        lambda: f"case x in x) {inner};; esac",
        lambda: f'sudo sh -c "{inner}"',
        lambda: f"find . -name x -exec {inner} \\;",
    ]
    return shapes[shape]()


def generated(count: int, seed: int = 20261201) -> list[str]:
    """``count`` random compound commands built from the words, redirections and shapes above (deterministic)."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(count):
        parts = [_compound(rng, rng.randint(0, 3)) for _ in range(rng.randint(1, 4))]
        text = parts[0]
        for part in parts[1:]:
            text += rng.choice(_OPERATORS) + part
        if rng.random() < 0.05:
            text = text.replace(" ", " \\\n", 1)
        out.append(text)
    return out


def environment() -> Iterator[None]:
    """Set the corpus environment (HOME, no HOOKLOOP_HOME or CDPATH) for the duration (a generator context)."""
    saved = {key: os.environ.get(key) for key in (*ENVIRONMENT, *UNSET)}
    os.environ.update(ENVIRONMENT)
    for key in UNSET:
        os.environ.pop(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def load() -> list[dict[str, object]]:
    """The recorded corpus entries."""
    with CORPUS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def record() -> int:
    """Write the corpus from the analysis as it is now (used once, before optimising)."""
    gen = environment()
    next(gen)
    try:
        commands = list(dict.fromkeys([*harvested(Path(__file__).parent.parent), *generated(4000)]))
        rules = policies()
        with CORPUS.open("w", encoding="utf-8") as handle:
            for command in commands:
                behaviors, digest = decisions(command, rules)
                entry = {
                    "command": command,
                    "analysis": analysis_digest(command),
                    "behaviors": behaviors,
                    "decisions": digest,
                }
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    finally:
        next(gen, None)
    return len(commands)


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    print(record(), "commands recorded in", CORPUS)
