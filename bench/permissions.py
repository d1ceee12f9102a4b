"""The permission decision for a 1 KB Bash command (SPEC §10: ≤ 200 µs), on ``PermissionPolicy.decide``.

The command is what an agent sends: ``cd``, git with global options, a test run with a redirection, pipelines,
a loop, a here-string, ``$(…)`` and a ``find -exec``, 1,000 characters and about forty simple commands. The
policy holds a realistic settings file's rules (allows for the everyday programs, asks for ``git push`` and
``npm publish``, denies for ``rm``, ``curl`` and secrets).

- first decision — a command the policy has never seen: the tree-sitter parse, the analysis of every
  subcommand, and the matching against every rule. Each operation uses a different command (a distinct
  trailing comment), so no cache keyed by the command answers for it; the memos keyed by one subcommand
  (what one simple command runs, in one directory state: by its words, or by its text when it is plain), by
  its words and one pattern (``BashPattern.allows`` / ``restricts``, what the policy's rules say of it) and by
  one resolved path are warm, as they are for an agent repeating its everyday subcommands. The whole command
  is still parsed, walked and matched. This is the figure the target is about.
- repeated decision — the same command again (the Worker's ask → resume path): the analysis and what the
  command patterns say about it are cached; redirect targets are resolved and matched again.
- first decision, memos cold — the first decision with those memos emptied before each one (untimed): a
  command made only of subcommands never seen before.
- analysis only — ``_shell.analyse_with`` (what the first decision runs for the command, without the cache
  of whole commands), so the first decision splits into the parse, the analysis beyond it, and the rule and
  file matching beyond the analysis.
- parse only — ``tree_sitter`` parsing the command, for reference: the part no Python code can make faster.
  On this class of machine it alone takes about half of the 200 µs target; "beyond the parse" (first decision
  minus parse, medians of the same run) is the part the analysis and the rule matching add.
"""

from __future__ import annotations

from time import perf_counter_ns

import tree_sitter
import tree_sitter_bash

from bench._measure import Sample, Sizes, interleave
from bench._report import Row, absolute, info
from hookloop.permissions import PermissionPolicy, _paths, _rules, _shell

__all__ = ["COMMAND", "run"]

SECTION = "permission decision, 1 KB Bash command"
TARGET_NS = 200_000

_BODY = (
    "git -C packages/core --no-pager status --short && git log --oneline -n 20 | head -5; "
    "npm run test -- --reporter=dot --coverage > build/test.log 2>&1 || tail -n 50 build/test.log; "
    "for f in src/*.ts; do grep -n TODO \"$f\" | sed -e 's/^/  /'; done; "
    "find . -name '*.orig' -type f -newer package.json | sort -k5 -n | tail -3; "
    "ls -la dist && wc -l < dist/index.js && cat package.json | grep -E '\"(name|version)\"'; "
    'echo "built $(date +%s) on $(uname -s)" >> build/history.txt; '
    "git diff --stat HEAD~1 -- src | tail -1 && git branch --show-current; "
    "python3 -m pytest tests/unit -q -x --maxfail=1 -k 'not slow' 2>&1 | tail -20; "
    "test -f .env.example && diff <(sort .env.example) <(sort .env.local) || true; "
    "grep -rn --include='*.ts' 'console.log' src | wc -l; "
    'npm run lint -- --fix && npm run build && for f in dist/*.js; do basename "$f"; done; '
    "cat <<< 'done' | tr a-z A-Z; git stash list | head -3; du -sh node_modules 2>/dev/null"
)


def _exactly_1000(body: str) -> str:
    while len(body) < 980:
        body += "; git status --short"
    cut = body[:980].rsplit(";", 1)[0]
    return cut + " # " + "." * (1000 - len(cut) - 3)


COMMAND = _exactly_1000(_BODY)

ALLOW = [
    "Bash(cd:*)", "Bash(git status:*)", "Bash(git log:*)", "Bash(git diff:*)", "Bash(git branch:*)",
    "Bash(git stash list:*)", "Bash(git:*)", "Bash(npm run test:*)", "Bash(npm run lint:*)",
    "Bash(npm run build:*)", "Bash(ls:*)", "Bash(grep:*)", "Bash(sed:*)", "Bash(find:*)", "Bash(sort:*)",
    "Bash(head:*)", "Bash(tail:*)", "Bash(wc:*)", "Bash(cat:*)", "Bash(echo:*)", "Bash(date:*)", "Bash(uname:*)",
    "Bash(python3 -m pytest:*)", "Bash(test:*)", "Bash(diff:*)", "Bash(true)", "Bash(tr:*)", "Bash(du:*)",
    "Bash(basename:*)", "Read(./**)", "Edit(./src/**)",
]  # fmt: skip
ASK = ["Bash(git push:*)", "Bash(npm publish:*)", "Bash(docker push:*)", "Edit(./package.json)"]
DENY = ["Bash(rm -rf:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(sudo:*)", "Read(./.env)", "Read(./secrets/**)"]


def policy(workspace: str) -> PermissionPolicy:
    """The benchmark's policy: the rules above, default mode, ``workspace`` as the workspace."""
    return PermissionPolicy(allow=ALLOW, ask=ASK, deny=DENY, workspace=workspace)


def _unique(n: int) -> str:
    # A distinct comment at the end keeps the command 1,000 characters and defeats every cache keyed by it.
    suffix = f" # {n}"
    return COMMAND[: 1000 - len(suffix)] + suffix


async def run(sizes: Sizes) -> tuple[list[Row], dict[str, object]]:
    """Time the first and the repeated decision and the bare parse; one row each, the first against the target."""
    import tempfile

    iterations = max(1, sizes.dispatch_iterations // 1_000)
    repeats = sizes.dispatch_repeats
    counter = iter(range(10**9))
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    with tempfile.TemporaryDirectory() as workspace:
        rules = policy(workspace)
        decision = rules.decide("Bash", {"command": COMMAND})

        async def first() -> float:
            commands = [{"command": _unique(next(counter))} for _ in range(iterations)]
            start = perf_counter_ns()
            for tool_input in commands:
                rules.decide("Bash", tool_input)
            return (perf_counter_ns() - start) / iterations

        async def cold() -> float:
            total = 0
            for _ in range(iterations):
                tool_input = {"command": _unique(next(counter))}
                for memo in (_rules._allows, _rules._restricts, _paths._pattern_matches):
                    memo.cache_clear()
                _shell._CLASSIFIED.clear()  # what each simple command's words run
                start = perf_counter_ns()
                rules.decide("Bash", tool_input)
                total += perf_counter_ns() - start
            return total / iterations

        async def repeated() -> float:
            tool_input = {"command": COMMAND}
            start = perf_counter_ns()
            for _ in range(iterations):
                rules.decide("Bash", tool_input)
            return (perf_counter_ns() - start) / iterations

        async def analysis() -> float:
            commands = [_unique(next(counter)) for _ in range(iterations)]
            start = perf_counter_ns()
            for command in commands:
                _shell.analyse_with(command, _shell._CLASSIFIED, fast=True)
            return (perf_counter_ns() - start) / iterations

        async def parse() -> float:
            sources = [_unique(next(counter)).encode() for _ in range(iterations)]
            start = perf_counter_ns()
            for source in sources:
                parser.parse(source)
            return (perf_counter_ns() - start) / iterations

        cases: dict[str, Sample] = {
            "first": first, "cold": cold, "repeated": repeated, "analysis": analysis, "parse": parse,
        }  # fmt: skip
        medians, samples = await interleave(cases, repeats)
    note = f"{len(COMMAND)} characters; the policy's answer: {decision.behavior}"
    rows = [
        absolute(SECTION, "first decision (parse + analysis + rules)", medians["first"], at_most_ns=TARGET_NS,
                 note=note),
        absolute(SECTION, "repeated decision (analysis cached)", medians["repeated"], at_most_ns=TARGET_NS),
        # Differences of medians of separate samples: with few samples, noise can make one negative (read as 0).
        info(SECTION, "first decision beyond the parse", max(0.0, medians["first"] - medians["parse"]), "ns"),
        info(SECTION, "  ↳ analysis beyond the parse", max(0.0, medians["analysis"] - medians["parse"]), "ns"),
        info(SECTION, "  ↳ rules and files beyond the analysis", max(0.0, medians["first"] - medians["analysis"]),
             "ns"),
        info(SECTION, "first decision, memos cold", medians["cold"], "ns"),
        info(SECTION, "tree-sitter parse alone", medians["parse"], "ns"),
    ]  # fmt: skip
    data: dict[str, object] = {
        "median_ns": medians,
        "samples_ns": samples,
        "iterations": iterations,
        "characters": len(COMMAND),
        "behavior": decision.behavior,
    }
    return rows, data
