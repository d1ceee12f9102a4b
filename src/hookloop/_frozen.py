"""Deep read-only JSON values.

Hook inputs and history items hold tool arguments as :data:`FrozenDict` / tuples so a hook cannot change what
the Worker holds. ``FrozenDict`` is :class:`types.MappingProxyType` over a dict that only the proxy references:

- it is not a ``dict`` subclass, so ``dict.__setitem__(frozen, …)``, ``dict.update``, ``dict.clear`` … raise
  ``TypeError`` instead of writing through;
- it is a built-in, immutable type: no attribute, slot or ``__class__`` of it can be assigned, it cannot be
  subclassed, and nothing but the garbage collector's referent lists reaches the dict behind it.

So a frozen value can be shared with every hook without a copy. Only :func:`freeze` builds them, and it never
trusts a ``MappingProxyType`` it is given (whoever built it may still hold the dict behind it): it copies it.

``json`` does not serialise a mapping that is not a ``dict``: use :func:`dumps` (or ``json.dumps(…,
default=to_json_default)``, or :func:`thaw` first). ``copy``/``pickle`` work: a reducer is registered for
``MappingProxyType``, so a proxy pickles as the dict it shows and unpickles as a proxy over a fresh dict.
"""

from __future__ import annotations

import copyreg
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = [
    "EMPTY",
    "FrozenDict",
    "FrozenJSON",
    "JSONValue",
    "dumps",
    "empty",
    "freeze",
    "freeze_object",
    "freeze_parsed",
    "plain_str",
    "thaw",
    "thaw_object",
    "to_json_default",
]

JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
"""A plain, mutable JSON value (what ``json.loads`` returns)."""

if TYPE_CHECKING:
    FrozenDict: TypeAlias = MappingProxyType[str, "FrozenJSON"]
else:

    class _FrozenDictType(type):
        def __instancecheck__(cls, value: object) -> bool:
            return type(value) is MappingProxyType

    class FrozenDict(metaclass=_FrozenDictType):
        """A deep read-only JSON object: a ``types.MappingProxyType`` over a dict nothing else references.

        ``FrozenDict(mapping)`` returns ``freeze(mapping)`` (a proxy, not an instance of this class);
        ``isinstance(value, FrozenDict)`` is true for any ``MappingProxyType``. Type checkers see
        ``MappingProxyType[str, FrozenJSON]``.
        """

        __slots__ = ()

        def __new__(cls, value: Mapping[str, object] = MappingProxyType({})) -> MappingProxyType[str, Any]:
            return freeze_object(value)


FrozenJSON: TypeAlias = "bool | int | float | str | tuple[FrozenJSON, ...] | FrozenDict | None"
"""A deep read-only JSON value: objects are :data:`FrozenDict`, arrays are tuples, strings/numbers exact."""

_Proxy = MappingProxyType
_str, _int, _float, _bool, _dict, _list, _tuple = str, int, float, bool, dict, list, tuple


def _key(key: object) -> str:
    if isinstance(key, str):
        return str.__str__(key)  # an exact str (a subclass instance could change class later)
    raise TypeError(f"JSON object keys must be strings, got {type(key).__name__}")


def _freeze_items(value: Mapping[Any, Any]) -> FrozenDict:
    out: dict[str, FrozenJSON] = {}
    for key, item in value.items():
        if type(key) is not _str:
            key = _key(key)
        cls = type(item)
        out[key] = item if cls is _str or cls is _int or cls is _bool or cls is _float or item is None else freeze(item)
    return _Proxy(out)


def freeze(value: object) -> FrozenJSON:
    """Return a deep read-only copy of a JSON-like value (mappings → FrozenDict, lists/tuples → tuples,
    str/int/float subclasses → the exact built-in type). Always a fresh copy of every container: a
    ``FrozenDict`` given in is copied too (its builder may hold the dict behind it).

    Raises ``TypeError`` naming the offending type when the value is not JSON-like.
    """
    cls = type(value)
    if cls is _str or cls is _int or cls is _bool or cls is _float or value is None:
        return value  # type: ignore[return-value]
    if cls is _dict or cls is _Proxy:
        return _freeze_items(value)  # type: ignore[arg-type]
    if cls is _tuple or cls is _list:
        return tuple([freeze(item) for item in value])  # type: ignore[attr-defined]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed, so this is an int subclass
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return _freeze_items(value)
    if isinstance(value, (list, tuple)):
        return tuple([freeze(item) for item in value])
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def freeze_object(value: Mapping[str, object]) -> FrozenDict:
    """`freeze` for a JSON object (raises ``TypeError`` if ``value`` is not a mapping)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return _freeze_items(value)


def freeze_parsed(value: dict[str, Any]) -> FrozenDict:
    """`freeze_object` for an object fresh from ``json.loads`` (with no hooks), which nothing else references:
    the same deep read-only value, built by wrapping its dicts in place (arrays become tuples) instead of
    copying them. Only for such values: their keys and leaves are exact built-in types already."""
    for key, item in value.items():
        cls = type(item)
        if cls is _dict:
            value[key] = freeze_parsed(item)
        elif cls is _list:
            value[key] = _freeze_parsed_array(item)
    return _Proxy(value)


def _freeze_parsed_array(value: list[Any]) -> tuple[FrozenJSON, ...]:
    out: list[FrozenJSON] = []
    for item in value:
        cls = type(item)
        out.append(freeze_parsed(item) if cls is _dict else _freeze_parsed_array(item) if cls is _list else item)
    return tuple(out)


def plain_str(value: str) -> str:
    """``value`` as an exact ``str`` (a ``str`` subclass instance is copied; anything else raises)."""
    if type(value) is _str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise TypeError(f"expected a string, got {type(value).__name__}")


def thaw(value: object) -> JSONValue:
    """Return a plain mutable deep copy (FrozenDict/mappings → dict, tuples/lists → lists)."""
    cls = type(value)
    if cls is _str or cls is _int or cls is _bool or cls is _float or value is None:
        return value  # type: ignore[return-value]
    if cls is _Proxy or isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}  # type: ignore[attr-defined]
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    if isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def thaw_object(value: Mapping[str, object]) -> dict[str, JSONValue]:
    """`thaw` for a JSON object."""
    return {str(k): thaw(v) for k, v in value.items()}


def to_json_default(value: object) -> object:
    """A ``default=`` for ``json.dumps`` that serialises FrozenDict (and any other mapping) as an object."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: object, **kwargs: Any) -> str:
    """``json.dumps`` that accepts frozen values (same keyword arguments)."""
    return json.dumps(value, default=to_json_default, **kwargs)


def _rebuild(data: dict[str, FrozenJSON]) -> FrozenDict:
    return _Proxy(data)


def _reduce_proxy(proxy: MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    # copy.copy / copy.deepcopy / pickle: a proxy over a fresh dict (deepcopy and pickle copy the values too).
    return (_rebuild, (dict(proxy),))


copyreg.pickle(MappingProxyType, _reduce_proxy)

EMPTY: FrozenDict = _Proxy({})
"""The shared empty FrozenDict."""


def empty() -> FrozenDict:
    """`EMPTY`, as a dataclass ``default_factory`` (dataclasses refuse an unhashable default such as a proxy)."""
    return EMPTY
