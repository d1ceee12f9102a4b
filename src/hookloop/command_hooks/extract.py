"""Reading JSON out of a hook's stdout. Pure functions; they never raise on any input.

Two rules, one per protocol:

* **Claude Code** (:func:`read_claude_json`): stdout is JSON iff, stripped, it starts with ``{`` and parses as
  an object. Anything else (an array, a quoted string, log lines before the object) is plain text.
* **Cline** (:func:`extract_last_json_object`): the whole stdout is tried first; when that fails, the *last
  complete* JSON object is extracted from noisy output by matching braces from the end, aware of strings and
  escapes, so debug prints before (or after) the final object are tolerated.

How the Cline scan stays linear-ish. A candidate object ends at a ``}``. Scanning backwards from a candidate
end ``e`` (assumed outside any string), a brace at ``p`` is inside a string iff an odd number of unescaped
quotes lies between ``p`` and ``e``. That parity depends only on the quote count *after* ``p`` and the one after
``e``, so every brace falls into one of two parity classes, and the braces of one class are matched like
ordinary brackets with one stack. One backward pass over the ``{``, ``}`` and ``"`` characters therefore
gives, for every ``}``, the only ``{`` a valid object ending there could start at. Candidates are then
verified by decoding the slice, latest end first; the first success is the answer. (Slices, not
``raw_decode`` at an offset: a decode error computes its line number by counting from the start of the
document, which would make every failed attempt cost O(n).)
A cheap shape check (``{`` must be followed by ``"`` or ``}``) discards most junk before decoding, and total
decoding work is bounded by a budget proportional to the input, so adversarial input (1 MiB of ``{``, deeply
nested brackets, thousands of near-objects) costs O(n) and returns ``None`` rather than taking quadratic time.
"""

from __future__ import annotations

import json
import re

__all__ = ["decode_output", "extract_last_json_object", "read_claude_json"]

_SPECIAL = re.compile(r'[{}"]')
_WS = " \t\n\r"
# What JavaScript's String.prototype.trim removes: WhiteSpace (with U+FEFF, the byte-order mark, and the Zs
# spaces) and LineTerminator. Python's str.strip differs: it keeps U+FEFF and removes U+001C-U+001F and U+0085.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Decoding work allowed for the fallback scan: a constant (so small inputs are always fully searched) plus a
# multiple of the input length (so large adversarial inputs stay linear).
_BUDGET_CONSTANT = 1 << 20
_BUDGET_FACTOR = 8


def decode_output(data: bytes | str) -> str:
    """Decode hook output as UTF-8, replacing invalid bytes (never raises)."""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")


def read_claude_json(stdout: bytes | str) -> dict[str, object] | None:
    """Claude Code's rule: the object if stripped stdout starts with ``{`` and parses as one, else ``None``.

    Stripped as JavaScript's ``trim()`` does (Claude Code is a Node program): that removes a byte-order mark
    too, which Windows PowerShell writes before the first output once its output encoding is UTF-8 — the JSON
    after it is still the answer. ``None`` means "plain text" (including empty output, arrays, strings and
    invalid JSON).
    """
    text = decode_output(stdout).strip(_JS_WHITESPACE)
    if not text.startswith("{"):
        return None
    return _loads_object(text)


def extract_last_json_object(output: bytes | str) -> dict[str, object] | None:
    """Cline's rule: the whole output if it is one JSON object, else the last complete object in it.

    "Last" means the object whose closing brace comes last; when objects nest, the outermost one ending
    there. Returns ``None`` when no complete object exists (or the bounded search gives up on adversarial
    input). Never raises.
    """
    text = decode_output(output)
    whole = _loads_object(text.strip())
    if whole is not None:
        return whole
    if "}" not in text:
        return None
    budget = _BUDGET_CONSTANT + _BUDGET_FACTOR * len(text)
    for start, end in _candidates(text):
        if not _plausible_start(text, start):
            continue
        budget -= end - start + 1
        if budget < 0:
            return None
        found = _loads_object(text[start : end + 1])
        if found is not None:
            return found
    return None


def _loads_object(text: str) -> dict[str, object] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _plausible_start(text: str, start: int) -> bool:
    """A JSON object opens with ``{`` then optional whitespace then ``"`` or ``}``."""
    i = start + 1
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i < n and text[i] in '"}'


def _quote_is_escaped(text: str, pos: int) -> bool:
    backslashes = 0
    i = pos - 1
    while i >= 0 and text[i] == "\\":
        backslashes += 1
        i -= 1
    return backslashes % 2 == 1


def _candidates(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` brace pairs, latest end first (see the module docstring for why this is enough)."""
    specials = [(m.start(), m.group()) for m in _SPECIAL.finditer(text)]
    last_close = text.rfind("}")
    # Two stacks of pending ``}`` positions, one per quote-parity class.
    stacks: tuple[list[int], list[int]] = ([], [])
    parity = 0  # number of unescaped quotes seen so far (scanning backwards), mod 2
    pairs: list[tuple[int, int]] = []
    for pos, char in reversed(specials):
        if pos > last_close:
            if char == '"' and not _quote_is_escaped(text, pos):
                parity ^= 1
            continue
        if char == '"':
            if not _quote_is_escaped(text, pos):
                parity ^= 1
        elif char == "}":
            stacks[parity].append(pos)
        else:
            stack = stacks[parity]
            if stack:
                pairs.append((pos, stack.pop()))
    pairs.sort(key=lambda pair: pair[1], reverse=True)
    return pairs
