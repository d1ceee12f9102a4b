"""Fields copied when first read: what the Worker hands out costs no copy until someone looks at it."""

from __future__ import annotations

from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any

__all__ = ["CopiedOnRead"]


class CopiedOnRead:
    """A slotted dataclass field whose slot the Worker may fill with something to copy from (a value of exactly
    type ``pending``): the first read puts ``copy(that)`` in the slot and returns it, so a hook that never reads
    the field costs no copy, and no reader ever gets what the Worker put there. Every other access — set,
    delete, and through the dataclass machinery (repr, ==, replace, pickling, snapshots) — goes through this."""

    __slots__ = ("_copy", "_pending", "_slot")

    def __init__(self, cls: type, name: str, pending: type, copy: Callable[[Any], object]) -> None:
        self._slot: MemberDescriptorType = cls.__dict__[name]
        self._pending, self._copy = pending, copy
        type.__setattr__(cls, name, self)

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self._slot.__get__(obj, owner)
        if type(value) is self._pending:
            value = self._copy(value)
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj: object, value: object) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: object) -> None:
        self._slot.__delete__(obj)
