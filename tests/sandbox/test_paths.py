"""The masks are complete: every existing path a Read deny rule matches (as the permission matcher decides it) is
inside something the sandbox masks. A property over random trees and rules."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop.permissions._paths import compile_path_pattern, resolve
from hookloop.sandbox._paths import expand

NAMES = ["a", "B", ".env", ".ENV", "k.pem", "secrets", "x"]
RULES = [
    "./.env",
    ".env",
    "*.pem",
    "**/*.pem",
    "./secrets/**",
    "secrets/",
    "a/**/k.pem",
    "./a/*/x",
    "/B/**",
    "**/secrets/*.pem",
]

paths = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4), min_size=1, max_size=12)


def build(root: Path, entries: list[list[str]]) -> list[Path]:
    made: list[Path] = []
    for parts in entries:
        target = root
        for index, part in enumerate(parts):
            target = target / part
            last = index == len(parts) - 1
            if target.exists() and target.is_file():
                break
            if last:
                if not target.exists():
                    target.write_text("secret")
            else:
                target.mkdir(exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(root):
        made += [Path(dirpath) / n for n in (*dirnames, *filenames)]
    return made


@settings(max_examples=150, deadline=None)
@given(entries=paths, rule=st.sampled_from(RULES))
def test_every_path_a_deny_rule_matches_is_masked(entries: list[list[str]], rule: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="hookloop-masks-"))
    try:
        existing = build(root, entries)
        pattern = compile_path_pattern(rule, workspace=root, settings_dir=None, home=root)
        found = expand([pattern])
        for path in existing:
            resolved = resolve(str(path), cwd=root)
            assert resolved is not None
            if pattern.matches(resolved, loose=True):
                assert any(str(path) == f.path or (f.is_dir and str(path).startswith(f.path + "/")) for f in found), (
                    rule,
                    path,
                    found,
                )
    finally:
        shutil.rmtree(root)
