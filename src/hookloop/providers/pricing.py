"""What a model request costs: a price table per known model, and the cost of a :class:`~hookloop.stream.Usage`.

Prices are US dollars per million tokens, the providers' standard (pay-as-you-go, non-batch) rates, taken on
:data:`PRICES_AS_OF` from their published price lists — anthropic.com/pricing (Claude), openai.com/api/pricing
(OpenAI), ai.google.dev/gemini-api/docs/pricing (Gemini). Providers change prices; the table is data, so a
wrong or missing row is a one-line fix here.

======================  =======  ========  ===========  ============  ==================================
model (prefix match)    input    output    cache read   cache write   note
======================  =======  ========  ===========  ============  ==================================
claude-opus-4-5/4-6/…   5        25        0.50         6.25          Opus 4.5 and later
claude-opus-4 / 4-1     15       75        1.50         18.75
claude-sonnet-4…        3        15        0.30         3.75          6 / 22.50 above 200K input tokens
claude-haiku-4-5        1        5         0.10         1.25
claude-3-7-sonnet       3        15        0.30         3.75
claude-3-5-haiku        0.80     4         0.08         1
claude-3-haiku          0.25     1.25      0.03         0.30
gpt-5.5                 5        30        0.50         —
gpt-5.4 / -mini / nano  2.50 …   15 …      0.25 …       —
gpt-5 / 5.1 / 5.2 …     1.25     10        0.125        —             gpt-5-mini 0.25/2, nano 0.05/0.40
gpt-4.1 / -mini / nano  2 …      8 …       0.50 …       —
gpt-4o / -mini          2.50 …   10 …      1.25 …       —
o3 / o4-mini / o1 …     2 …      8 …       0.50 …       —
gemini-3-pro / 3.1-pro  2        12        0.20         —             4 / 18 above 200K input tokens
gemini-3-flash          0.50     3         0.05         —
gemini-2.5-pro          1.25     10        0.125        —             2.50 / 15 above 200K input tokens
gemini-2.5-flash        0.30     2.50      0.03         —             flash-lite 0.10 / 0.40
======================  =======  ========  ===========  ============  ==================================

(The code below is the authority; the table above summarises it.) Anthropic's cache write is the 5-minute
rate (1.25× input). OpenAI and Gemini do not bill cache writes separately: those tokens cost the input rate.

A model is found by its name without provider prefix (``anthropic:``, ``openai:`` …), ``@base_url`` suffix,
or date suffix (``-20250929``, ``-2024-08-06``), then by the longest prefix in the table, so
``claude-sonnet-4-5-20250929`` prices as ``claude-sonnet-4-5``. Claude Code's aliases (``sonnet``, ``opus``,
``haiku``) resolve to the current model of that family. A model that is not in the table has no price:
:func:`cost_usd` returns ``None`` (unknown), never 0 — and the scripted model costs nothing (0.0).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hookloop.stream import Usage

__all__ = ["PRICES", "PRICES_AS_OF", "ModelPrice", "UsageCost", "cost_usd", "normalise_model", "price_for"]

PRICES_AS_OF = "2026-06-01"
"""The date the table was taken from the providers' price lists."""

_LONG_CONTEXT = 200_000


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens. ``cache_write`` None: cache writes cost the input rate.
    ``long_input`` / ``long_output``: the rates for a request whose prompt exceeds 200K tokens (None: same)."""

    input: float
    output: float
    cache_read: float
    cache_write: float | None = None
    long_input: float | None = None
    long_output: float | None = None

    def cost(self, usage: Usage) -> float:
        """The cost in dollars of one request's ``usage`` (``input_tokens`` is the uncached part of the prompt)."""
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        long = prompt > _LONG_CONTEXT
        rate_in = self.long_input if long and self.long_input is not None else self.input
        rate_out = self.long_output if long and self.long_output is not None else self.output
        scale = rate_in / self.input if self.input else 1.0  # long-context surcharge applies to cache rates too
        write = self.cache_write if self.cache_write is not None else self.input
        total = (
            usage.input_tokens * rate_in
            + usage.output_tokens * rate_out
            + usage.cache_read_tokens * self.cache_read * scale
            + usage.cache_write_tokens * write * scale
        )
        return total / 1_000_000


def _p(
    inp: float,
    out: float,
    read: float,
    write: float | None = None,
    long_in: float | None = None,
    long_out: float | None = None,
) -> ModelPrice:
    return ModelPrice(inp, out, read, write, long_in, long_out)


PRICES: Mapping[str, ModelPrice] = {
    # Anthropic (cache write: the 5-minute rate)
    "claude-opus-4-6": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-5": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-1": _p(15, 75, 1.50, 18.75),
    "claude-opus-4": _p(15, 75, 1.50, 18.75),
    "claude-sonnet-4-6": _p(3, 15, 0.30, 3.75),
    "claude-sonnet-4-5": _p(3, 15, 0.30, 3.75, 6, 22.50),
    "claude-sonnet-4": _p(3, 15, 0.30, 3.75, 6, 22.50),
    "claude-haiku-4-5": _p(1, 5, 0.10, 1.25),
    "claude-3-7-sonnet": _p(3, 15, 0.30, 3.75),
    "claude-3-5-sonnet": _p(3, 15, 0.30, 3.75),
    "claude-3-5-haiku": _p(0.80, 4, 0.08, 1),
    "claude-3-opus": _p(15, 75, 1.50, 18.75),
    "claude-3-haiku": _p(0.25, 1.25, 0.03, 0.30),
    # OpenAI (cached input; no separate cache-write charge)
    "gpt-5.5-pro": _p(30, 180, 30),
    "gpt-5.5": _p(5, 30, 0.50),
    "gpt-5.4-pro": _p(30, 180, 30),
    "gpt-5.4-mini": _p(0.75, 4.50, 0.075),
    "gpt-5.4-nano": _p(0.20, 1.25, 0.02),
    "gpt-5.4": _p(2.50, 15, 0.25),
    "gpt-5.2": _p(1.75, 14, 0.175),
    "gpt-5.1": _p(1.25, 10, 0.125),
    "gpt-5-pro": _p(15, 120, 15),
    "gpt-5-mini": _p(0.25, 2, 0.025),
    "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-5": _p(1.25, 10, 0.125),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-4.1": _p(2, 8, 0.50),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "gpt-4o": _p(2.50, 10, 1.25),
    "o4-mini": _p(1.10, 4.40, 0.275),
    "o3-pro": _p(20, 80, 20),
    "o3-mini": _p(1.10, 4.40, 0.55),
    "o3": _p(2, 8, 0.50),
    "o1-mini": _p(1.10, 4.40, 0.55),
    "o1": _p(15, 60, 7.50),
    # Google Gemini (context-cache reads; storage is billed by the hour and not counted here)
    "gemini-3.1-pro": _p(2, 12, 0.20, None, 4, 18),
    "gemini-3-pro": _p(2, 12, 0.20, None, 4, 18),
    "gemini-3-flash": _p(0.50, 3, 0.05),
    "gemini-2.5-pro": _p(1.25, 10, 0.125, None, 2.50, 15),
    "gemini-2.5-flash-lite": _p(0.10, 0.40, 0.01),
    "gemini-2.5-flash": _p(0.30, 2.50, 0.03),
    "gemini-2.0-flash-lite": _p(0.075, 0.30, 0.075),
    "gemini-2.0-flash": _p(0.10, 0.40, 0.025),
}

_ALIASES = {
    "opus": "claude-opus-4-6",
    "sonnet": "claude-sonnet-4-6",
    "haiku": "claude-haiku-4-5",
    "opusplan": "claude-opus-4-6",
}
_PREFIX = re.compile(r"^[a-z][a-z0-9-]*:")
_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_BY_LENGTH = sorted(PRICES, key=len, reverse=True)


def normalise_model(model: str) -> str:
    """The bare model name a price is looked up by: lower case, without provider prefix, ``@url``, path
    (``models/gemini-2.5-pro``, ``google/gemini-2.5-pro``), ``-latest`` or date suffix."""
    name = model.strip().lower()
    name = _PREFIX.sub("", name, count=1)
    name = name.split("@", 1)[0]
    name = name.rsplit("/", 1)[-1]
    name = name.removesuffix("-latest")
    name = _DATE.sub("", name)
    return _ALIASES.get(name, name)


def price_for(model: str | None) -> ModelPrice | None:
    """The price of ``model`` (any spelling :func:`normalise_model` accepts), or None when it is unknown.

    A table entry matches the name exactly or as a prefix followed by ``-`` (``gpt-4o-2024-08-06``,
    ``claude-opus-4-1-20250805``); the longest entry wins, so ``gpt-4o-mini`` is never priced as ``gpt-4o``.
    """
    if not model:
        return None
    name = normalise_model(model)
    for key in _BY_LENGTH:
        if name == key or name.startswith(key + "-"):
            return PRICES[key]
    return None


@dataclass(frozen=True, slots=True)
class UsageCost:
    """One model request: which model, its usage."""

    model: str | None
    provider: str
    usage: Usage


def cost_usd(requests: Iterable[UsageCost]) -> float | None:
    """The total cost of ``requests`` in dollars, or None when any of them used a model with no known price
    (a partial sum would understate it). Requests to the offline scripted model cost 0."""
    total = 0.0
    for request in requests:
        if request.provider == "scripted":
            continue
        price = price_for(request.model)
        if price is None:
            return None
        total += price.cost(request.usage)
    return total
