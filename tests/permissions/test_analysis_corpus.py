"""Differential test: the Bash analysis and the policy's decisions equal those recorded before optimisation.

The corpus (``data/bash_corpus.jsonl``, see :mod:`bash_corpus`) holds every string of the permission, sandbox and
top-level test files (the red-team commands among them) and 4,000 generated compound commands, with a digest of
the canonical analysis and of the outcomes under three policies from two directories. Any change in what the
analysis finds (commands, deny-only readings, redirections and their directory states, unsafe and unknown
reasons) or in what is decided fails here, naming the command.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hookloop.permissions import _shell
from permissions import bash_corpus

SHARDS = 8
_ENTRIES = bash_corpus.load()


@pytest.fixture
def corpus_environment() -> Iterator[None]:
    yield from bash_corpus.environment()


def test_the_corpus_is_large_and_varied() -> None:
    behaviors = {str(entry["behaviors"]) for entry in _ENTRIES}
    assert len(_ENTRIES) > 5000
    assert {"ddddaa", "aaaaaa", "AAAAaa"} <= behaviors  # denied, asked and allowed commands all present


@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.usefixtures("corpus_environment")
def test_analysis_and_decisions_match_the_recording(shard: int) -> None:
    _shell.analyse.cache_clear()
    rules = bash_corpus.policies()
    wrong: list[str] = []
    for entry in _ENTRIES[shard::SHARDS]:
        command = str(entry["command"])
        if bash_corpus.analysis_digest(command) != entry["analysis"]:
            wrong.append(f"analysis of {command!r}")
        if bash_corpus.decisions(command, rules) != (entry["behaviors"], entry["decisions"]):
            wrong.append(f"decisions for {command!r}")
    assert not wrong, f"{len(wrong)} differences, first: " + "; ".join(wrong[:5])
