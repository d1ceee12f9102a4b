"""History items round-trip exactly through JSON; frozen values are deep read-only; errors name the field."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop import (
    FrozenDict,
    ImagePart,
    ItemError,
    Message,
    Reasoning,
    TextPart,
    ToolCall,
    ToolResult,
    item_from_json,
)
from hookloop._frozen import freeze, thaw

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
    st.builds(ToolResult, call_id=st.text(min_size=1), name=st.text(), content=st.text(), is_error=st.booleans()),
    st.builds(
        Reasoning,
        text=st.text(),
        signature=st.none() | st.text(),
        provider=st.none() | st.text(),
        redacted=st.none() | st.text(),
    ),
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
    assert json.loads(json.dumps(freeze(value))) == json.loads(json.dumps(value))


def test_frozen_dicts_refuse_every_mutation_deeply() -> None:
    frozen = freeze({"a": {"b": [1, {"c": 2}]}})
    assert isinstance(frozen, FrozenDict)
    inner = frozen["a"]
    for attempt in (
        lambda: frozen.__setitem__("x", 1),
        lambda: frozen.__delitem__("a"),
        lambda: frozen.update(x=1),
        lambda: frozen.pop("a"),
        lambda: frozen.popitem(),
        lambda: frozen.clear(),
        lambda: frozen.setdefault("x", 1),
        lambda: inner["b"][1].__setitem__("c", 3),  # type: ignore[index]
    ):
        with pytest.raises(TypeError, match="read-only"):
            attempt()
    assert isinstance(inner["b"], tuple)  # type: ignore[index]
    assert copy.deepcopy(frozen) is frozen
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    assert hash(freeze({"k": 1})) == hash(freeze({"k": 1}))


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
