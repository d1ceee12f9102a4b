"""``ShellAnalysis.by_program``: a command's subcommands by the program they run, built when first read.

Deny and ask matching outside the policy's snapshot (``bash_pattern_matches``) looks only at the subcommands of
the program a rule names; the policy's own matching (:mod:`._verdicts`) goes through every subcommand once
instead, so most analyses never need this index and it is not built for them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from hookloop.permissions._text import fold

__all__ = ["ByProgram"]

Words = tuple[str | None, ...]

_KEYS_SIZE: Final = 4096
_KEYS_CHARS: Final = 2048  # longer command names are not remembered (as in `_shell`'s memo)
_HEAD_KEYS: Final[dict[str, tuple[str, ...]]] = {}  # a command's first word → its keys in the index


class ByProgram(Mapping[str, tuple[Words, ...]]):
    """Subcommands by folded program name and by its basename; those whose name holds a blank under ``" "``
    (each once, in order; subcommands whose name is only known at run time are left out)."""

    __slots__ = ("_commands", "_index")

    def __init__(self, commands: tuple[Words, ...]) -> None:
        self._commands = commands
        self._index: dict[str, tuple[Words, ...]] | None = None

    def _built(self) -> dict[str, tuple[Words, ...]]:
        index = self._index
        if index is None:
            index = self._index = _index(self._commands)  # two threads may both build it: the same dict
        return index

    def __getitem__(self, key: str) -> tuple[Words, ...]:
        return self._built()[key]

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]  # Mapping.get, faster
        return self._built().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def __repr__(self) -> str:
        return repr(self._built())


def _index(commands: tuple[Words, ...]) -> dict[str, tuple[Words, ...]]:
    index: dict[str, dict[Words, None]] = {}
    for words in commands:
        head = words[0] if words else None
        if head is None:
            continue
        keys = _HEAD_KEYS.get(head)
        if keys is None:
            keys = _head_keys(head)
            if len(head) <= _KEYS_CHARS:
                if len(_HEAD_KEYS) >= _KEYS_SIZE:
                    _HEAD_KEYS.clear()
                _HEAD_KEYS[head] = keys
        for key in keys:
            found = index.get(key)
            if found is None:
                index[key] = {words: None}
            else:
                found[words] = None
    return {key: tuple(value) for key, value in index.items()}


def _head_keys(head: str) -> tuple[str, ...]:
    program = fold(head)
    if any(map(str.isspace, program)):
        return (" ",)
    program = program.rstrip("/")
    return tuple(dict.fromkeys((program, program.rsplit("/", 1)[-1])))
