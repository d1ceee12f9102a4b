"""History items round-trip exactly through JSON; frozen values are deep read-only; errors name the field."""

from __future__ import annotations

import copy
import json
import pickle
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop import (
    DocumentPart,
    FrozenDict,
    ImagePart,
    ItemError,
    Message,
    ProviderBlock,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResult,
    item_from_json,
)
from hookloop._frozen import dumps, freeze, freeze_object, thaw, to_json_default
from hookloop.items import (
    adopt,
    detached,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)

items = st.one_of(
    st.builds(
        Message,
        role=st.sampled_from(["system", "user", "assistant"]),
        content=st.lists(
            st.builds(TextPart, text=st.text())
            | st.builds(ImagePart, media_type=st.just("image/png"), data=st.text(max_size=10)),
            max_size=3,
        ).map(tuple),
        meta=objects.map(freeze),
    ),
    st.builds(
        ToolCall,
        call_id=st.text(min_size=1),
        name=st.text(min_size=1),
        arguments=objects.map(freeze),
        raw_arguments=st.none() | st.text(),
    ),
    st.builds(
        ToolResult,
        call_id=st.text(min_size=1),
        name=st.text(),
        content=st.text(),
        is_error=st.booleans(),
        parts=st.lists(
            st.builds(TextPart, text=st.text())
            | st.builds(ImagePart, media_type=st.just("image/png"), data=st.text(max_size=10))
            | st.builds(
                DocumentPart,
                media_type=st.just("application/pdf"),
                data=st.none() | st.text(max_size=10),
                url=st.none() | st.text(max_size=10),
                title=st.none() | st.text(max_size=10),
            ),
            max_size=3,
        ).map(tuple),
    ),
    st.builds(
        Reasoning,
        text=st.text(),
        signature=st.none() | st.text(),
        provider=st.none() | st.text(),
        redacted=st.none() | st.text(),
        meta=objects.map(freeze),
    ),
    st.builds(ProviderBlock, provider=st.text(min_size=1), data=objects.map(freeze)),
)


@given(items)
def test_every_item_round_trips_exactly_through_json(item: Any) -> None:
    data = json.loads(json.dumps(item.to_json()))
    again = item_from_json(data)
    assert again == item
    assert again.to_json() == item.to_json()


def test_ids_are_stable_and_unique() -> None:
    a, b = Message.user("x"), Message.user("x")
    assert a.id != b.id
    assert item_from_json(a.to_json()).id == a.id


@given(json_values)
def test_freeze_then_thaw_is_identity_on_json(value: Any) -> None:
    assert thaw(freeze(value)) == value
    assert json.loads(dumps(freeze(value))) == json.loads(json.dumps(value))
    assert json.loads(json.dumps(freeze(value), default=to_json_default)) == json.loads(json.dumps(value))


_DICT_WRITES: list[tuple[str, Any]] = [
    ("dict.__setitem__", lambda d: dict.__setitem__(d, "x", 1)),
    ("dict.__delitem__", lambda d: dict.__delitem__(d, "a")),
    ("dict.update", lambda d: dict.update(d, x=1)),
    ("dict.clear", lambda d: dict.clear(d)),
    ("dict.pop", lambda d: dict.pop(d, "a")),
    ("dict.popitem", lambda d: dict.popitem(d)),
    ("dict.setdefault", lambda d: dict.setdefault(d, "x", 1)),
    ("dict.__ior__", lambda d: dict.__ior__(d, {"x": 1})),
    ("dict.__init__", lambda d: dict.__init__(d, x=1)),
]
_OWN_WRITES: list[tuple[str, Any]] = [
    ("item assignment", lambda d: d.__setitem__("x", 1)),
    ("item deletion", lambda d: d.__delitem__("a")),
    ("update", lambda d: d.update(x=1)),
    ("clear", lambda d: d.clear()),
    ("pop", lambda d: d.pop("a")),
    ("popitem", lambda d: d.popitem()),
    ("setdefault", lambda d: d.setdefault("x", 1)),
    ("|=", lambda d: d.__ior__({"x": 1})),
    ("attribute", lambda d: object.__setattr__(d, "injected", 1)),
    ("__class__", lambda d: object.__setattr__(d, "__class__", dict)),
    ("object.__class__ descriptor", lambda d: vars(object)["__class__"].__set__(d, type("Evil", (), {}))),
    ("__dict__", lambda d: vars(d)),
]


@pytest.mark.parametrize(
    ("what", "attempt"), _DICT_WRITES + _OWN_WRITES, ids=[w for w, _ in _DICT_WRITES + _OWN_WRITES]
)
def test_frozen_dicts_refuse_every_mutation_including_dict_methods(what: str, attempt: Any) -> None:
    frozen = freeze({"a": {"b": [1, {"c": 2}]}})
    assert isinstance(frozen, FrozenDict)
    assert not isinstance(frozen, dict)
    with pytest.raises((TypeError, AttributeError)):
        attempt(frozen)
    with pytest.raises((TypeError, AttributeError)):
        attempt(frozen["a"]["b"][1])  # type: ignore[index]
    assert thaw(frozen) == {"a": {"b": [1, {"c": 2}]}}
    assert type(frozen) is MappingProxyType


def test_frozen_dicts_cannot_be_subclassed() -> None:
    with pytest.raises(TypeError):
        type("Sub", (MappingProxyType,), {})


def test_freeze_copies_what_it_is_given_so_the_giver_keeps_no_handle() -> None:
    mine: dict[str, Any] = {"command": "echo innocent", "nested": {"k": [1]}}
    shallow = MappingProxyType(mine)  # a proxy someone else built: its builder holds the dict behind it
    frozen = freeze(shallow)
    again = freeze(frozen)
    mine["command"] = "rm -rf important"
    mine["nested"]["k"].append(2)
    assert frozen == again == {"command": "echo innocent", "nested": {"k": (1,)}}
    assert FrozenDict(mine) == {"command": "rm -rf important", "nested": {"k": (1, 2)}}


def test_freeze_turns_subclasses_into_exact_builtins() -> None:
    class Sneaky(str):
        pass

    class Big(int):
        pass

    frozen = freeze({Sneaky("k"): [Sneaky("v"), Big(3), 1.5]})
    assert isinstance(frozen, MappingProxyType)
    ((key, value),) = frozen.items()
    assert type(key) is str
    assert [type(v) for v in value] == [str, int, float]  # type: ignore[union-attr]


def test_freeze_believes_no_object_about_its_own_class() -> None:
    """A ``__class__`` property can make ``obj.__class__`` (and ``isinstance``) name any class: freezing reads the
    real type, so a str subclass that claims to be a ``str`` (and could hold state, or change what its methods
    say between a permission check and the tool) is still copied as an exact ``str``, keys too; a mutable
    mapping that claims to be a MappingProxyType is not a FrozenDict."""

    class Liar(str):
        __class__ = property(lambda self: str)  # type: ignore[assignment]

    class LyingMapping(dict):  # type: ignore[type-arg]
        __class__ = property(lambda self: MappingProxyType)  # type: ignore[assignment]

    sneaky = Liar("echo innocent")
    assert sneaky.__class__ is str
    assert isinstance(sneaky, str)
    frozen = freeze({Liar("command"): sneaky, "list": [Liar("x")]})
    ((key, value), (_, listed)) = frozen.items()  # type: ignore[misc]
    assert (type(key), type(value), [type(v) for v in listed]) == (str, str, [str])  # type: ignore[union-attr]
    assert type(freeze_object({"command": sneaky})["command"]) is str
    posing = LyingMapping(command="ls")
    assert not isinstance(posing, FrozenDict)
    assert type(freeze(posing)) is MappingProxyType


def test_frozen_values_copy_and_pickle_into_independent_equal_values() -> None:
    frozen = freeze({"a": {"b": [1, {"c": 2}]}})
    for other in (copy.copy(frozen), copy.deepcopy(frozen), pickle.loads(pickle.dumps(frozen))):
        assert other == frozen
        assert type(other) is MappingProxyType
    call = ToolCall(call_id="c", name="Bash", arguments=freeze_object({"command": "ls"}))
    assert pickle.loads(pickle.dumps(call)) == call
    assert copy.deepcopy(call) == call
    assert hash(call) == hash(copy.deepcopy(call))  # items stay hashable (by id)
    assert {call: 1}[copy.deepcopy(call)] == 1


def test_freeze_rejects_non_json_values_with_the_type_name() -> None:
    with pytest.raises(TypeError, match="not a JSON value: set"):
        freeze({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys must be strings"):
        freeze({1: "x"})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("nope", "item: expected an object"),
        (
            {"type": "message", "id": "i", "role": "robot", "content": []},
            "item.role: expected system, user or assistant",
        ),
        ({"type": "message", "id": "i", "role": "user", "content": "text"}, "item.content: expected a list"),
        (
            {"type": "message", "id": "i", "role": "user", "content": [{"type": "video"}]},
            "item.content[0].type: unknown content part",
        ),
        ({"type": "tool_call", "id": "i", "name": "x"}, "item.call_id: expected a string"),
        (
            {"type": "tool_result", "id": "i", "call_id": "c", "name": "x", "content": "y", "is_error": "no"},
            "item.is_error",
        ),
        (
            {"type": "tool_call", "id": "i", "call_id": "c", "name": "x", "arguments": []},
            "item.arguments: expected an object",
        ),
        ({"type": "other", "id": "i"}, "item.type: unknown item type 'other'"),
        ({"type": "message", "role": "user", "content": []}, "item.id: expected a string"),
    ],
)
def test_malformed_item_json_names_the_field(data: Any, message: str) -> None:
    with pytest.raises(ItemError, match=message.replace("[", r"\[").replace("]", r"\]")):
        item_from_json(data)


def test_message_text_joins_text_parts() -> None:
    msg = Message(
        role="user", content=(TextPart(text="a"), ImagePart(media_type="image/png", url="u"), TextPart(text="b"))
    )
    assert msg.text == "ab"


@given(items)
def test_detached_and_adopted_copies_are_equal_and_share_no_python_object(item: Any) -> None:
    for copy_ in (detached(item), adopt(item)):
        assert copy_ == item
        assert type(copy_) is type(item)
        assert copy_ is not item
        if not isinstance(item, Message):
            continue
        for part, original in zip(copy_.content, item.content, strict=True):  # type: ignore[union-attr]
            assert part == original
            assert part is not original
