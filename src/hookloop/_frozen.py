"""Deep read-only JSON values.

Hook inputs and history items hold tool arguments as :class:`FrozenDict` / tuples so a hook cannot change
what the Worker holds. ``FrozenDict`` subclasses ``dict`` on purpose: ``json.dumps`` and pydantic accept it
without conversion, while every mutating method raises :class:`TypeError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeAlias

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
"""A plain, mutable JSON value (what ``json.loads`` returns)."""

FrozenJSON: TypeAlias = "bool | int | float | str | tuple[FrozenJSON, ...] | FrozenDict | None"
"""A deep read-only JSON value: objects are :class:`FrozenDict`, arrays are tuples."""


class FrozenDict(dict[str, "FrozenJSON"]):
    """A ``dict`` whose mutating methods raise ``TypeError`` (values are frozen too when built by `freeze`)."""

    __slots__ = ()

    def _readonly(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("this mapping is read-only: hooks observe, they do not edit (return a declared edit)")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def _from_items(items: Iterable[tuple[str, FrozenJSON]]) -> FrozenDict:
    new = FrozenDict()
    for key, value in items:
        dict.__setitem__(new, key, value)
    return new


def freeze(value: object) -> FrozenJSON:
    """Return a deep read-only copy of a JSON-like value (dicts → FrozenDict, lists/tuples → tuples).

    Raises ``TypeError`` naming the offending type when the value is not JSON-like.
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        out = FrozenDict()
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {type(key).__name__}")
            dict.__setitem__(out, key, freeze(item))
        return out
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def freeze_object(value: Mapping[str, object]) -> FrozenDict:
    """`freeze` for a JSON object."""
    frozen = freeze(value)
    assert isinstance(frozen, FrozenDict)
    return frozen


def thaw(value: object) -> JSONValue:
    """Return a plain mutable deep copy (FrozenDict → dict, tuples → lists)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def thaw_object(value: Mapping[str, object]) -> dict[str, JSONValue]:
    """`thaw` for a JSON object."""
    return {str(k): thaw(v) for k, v in value.items()}


EMPTY = _from_items(())
"""The shared empty FrozenDict."""
