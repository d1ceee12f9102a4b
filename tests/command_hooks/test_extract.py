"""The JSON readers: Claude Code's strict rule and Cline's last-object fallback (unit + property tests)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop.command_hooks.extract import extract_last_json_object, read_claude_json

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
dump_styles = st.sampled_from(
    [
        {},
        {"ensure_ascii": False},
        {"indent": 2},
        {"separators": (",", ":")},
        {"indent": "\t", "ensure_ascii": False},
    ]
)
noise_chars = st.sampled_from(list('{}[]":,\\ \n\tabcxyz0123456789éあ\x00\ufffd'))


def brute_force_last_object(text: str) -> dict[str, object] | None:
    """Reference: the valid object with the latest end, outermost first. Quadratic; small inputs only."""
    for end in range(len(text), 0, -1):
        if text[end - 1] != "}":
            continue
        for start in range(end):
            if text[start] != "{":
                continue
            try:
                value = json.loads(text[start:end])
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


# --- Claude Code ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        ('{"continue": false}', {"continue": False}),
        ('  \n {"a": 1}\n\n', {"a": 1}),
        (b'{"a": "\xc3\xa9"}', {"a": "é"}),
        ("", None),
        ("[1, 2]", None),
        ('"{}"', None),
        ('debug\n{"a": 1}', None),  # no extraction fallback for Claude Code
        ('{"a": 1} trailing', None),
        ("{not json", None),
        (b"\xff{", None),
        # trimmed as JavaScript's trim(): a byte-order mark goes (Windows PowerShell's first write), U+001C stays
        (b'\xef\xbb\xbf{"decision": "block"}\r\n', {"decision": "block"}),
        ('\u00a0\u3000{"a": 1}\u2028', {"a": 1}),
        ('\x1c{"a": 1}', None),
    ],
)
def test_read_claude_json(stdout: str | bytes, expected: dict[str, object] | None) -> None:
    assert read_claude_json(stdout) == expected


# --- Cline fallback -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"cancel": true}', {"cancel": True}),
        ('Checking...\nstill {going\n{"cancel": false, "errorMessage": "x"}\n', {"cancel": False, "errorMessage": "x"}),
        ('{"a": 1}\n{"b": 2}\n', {"b": 2}),
        ('{"a": "} { \\" }"}', {"a": '} { " }'}),
        ('log "unterminated\n{"ok": 1} done', {"ok": 1}),
        ('{"outer": {"inner": {}}} tail } } "', {"outer": {"inner": {}}}),
        ('{"a": "\\\\"} x', {"a": "\\"}),
        ("{{{", None),
        ("}}}", None),
        ("no json here", None),
        ("", None),
        ('["not", "an", "object"]', None),
        (b'\xff\xfe garbage {"a": 1}', {"a": 1}),
    ],
)
def test_extract_last_json_object(output: str | bytes, expected: dict[str, object] | None) -> None:
    assert extract_last_json_object(output) == expected


@given(obj=json_objects, style=dump_styles, before=st.text(max_size=40), after=st.text(max_size=40))
def test_object_is_found_between_arbitrary_noise(
    obj: dict[str, object], style: dict[str, object], before: str, after: str
) -> None:
    after = after.replace("}", "")  # trailing noise closes nothing, so the object's brace is the last one
    text = before + json.dumps(obj, **style) + after  # type: ignore[arg-type]
    assert extract_last_json_object(text) == obj


@given(
    obj=json_objects,
    before=st.lists(noise_chars, max_size=30).map("".join),
    after=st.lists(noise_chars, max_size=30).map("".join),
)
def test_object_is_found_between_brace_heavy_noise(obj: dict[str, object], before: str, after: str) -> None:
    after = after.replace("}", "")
    text = before + json.dumps(obj) + after
    assert extract_last_json_object(text) == obj


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(json_objects.map(json.dumps), st.lists(noise_chars, max_size=6).map("".join)),
        max_size=6,
    ).map("".join)
)
def test_matches_the_brute_force_reference(text: str) -> None:
    assert extract_last_json_object(text) == brute_force_last_object(text)


@given(st.text())
def test_never_raises_on_text(text: str) -> None:
    result = extract_last_json_object(text)
    assert result is None or isinstance(result, dict)
    assert read_claude_json(text) is None or isinstance(read_claude_json(text), dict)


@given(st.binary())
def test_never_raises_on_bytes(data: bytes) -> None:
    result = extract_last_json_object(data)
    assert result is None or isinstance(result, dict)


MIB = 1 << 20


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "{" * MIB,
        "}" * MIB,
        '"' * MIB,
        "{" * (MIB // 2) + "}" * (MIB // 2),
        '{"a":' * (MIB // 5) + "1" + "}" * (MIB // 5),
        '{"a" }' * (MIB // 6),
        '{"x":1 ' * (MIB // 7) + "}" * (MIB // 7),
        "[" * MIB,
        '{"a": "' + "\\" * MIB + '"}',
        "x" * MIB + '{"found": true}',
        '{"found": true}' + "}" * MIB,
    ],
    ids=[
        "open-braces",
        "close-braces",
        "quotes",
        "nested-empty",
        "nested-objects",
        "near-objects",
        "nested-near-objects",
        "brackets",
        "backslashes",
        "noise-then-object",
        "object-then-closers",
    ],
)
def test_adversarial_megabyte_inputs_finish(text: str) -> None:
    # Quadratic behaviour would take hours on these; the linear scan with a bounded decode budget takes well
    # under a second each. The assertion is on the answer; the time limit is pytest's.
    result = extract_last_json_object(text)
    if "found" in text:
        assert result == {"found": True}
    else:
        assert result is None or isinstance(result, dict)
