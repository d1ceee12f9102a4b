"""The price table: lookup by every spelling a model arrives in, the cost formula, unknown models."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookloop.providers import pricing
from hookloop.providers.pricing import PRICES, PRICES_AS_OF, UsageCost, cost_usd, normalise_model, price_for
from hookloop.stream import Usage


@pytest.mark.parametrize(
    ("spelling", "entry"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic:claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("sonnet", "claude-sonnet-4-6"),
        ("opus", "claude-opus-4-6"),
        ("haiku", "claude-haiku-4-5"),
        ("openai:gpt-4o-2024-08-06", "gpt-4o"),
        ("openai-responses:gpt-5-mini", "gpt-5-mini"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("GPT-4.1", "gpt-4.1"),
        ("o4-mini", "o4-mini"),
        ("openai-compatible:gemini-2.5-pro@https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.5-pro"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("google/gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_a_model_is_found_by_each_of_its_spellings(spelling: str, entry: str) -> None:
    assert price_for(spelling) is PRICES[entry]


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-5-mini", "gemini-2.5-flash-lite", "o3-mini", "claude-opus-4-1"])
def test_the_longest_entry_wins(model: str) -> None:
    assert price_for(model) is PRICES[model]
    assert price_for(model) is not PRICES[model.rsplit("-", 1)[0]]


@pytest.mark.parametrize(
    "model", [None, "", "llama3.1:8b", "claude-future-9", "gpt-4o2", "gpt-5.3", "mistral-large", "sonnetx"]
)
def test_an_unknown_model_has_no_price(model: str | None) -> None:
    assert price_for(model) is None
    assert cost_usd([UsageCost(model, "openai", Usage(10, 10))]) is None


def test_the_cost_formula() -> None:
    usage = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=5000, cache_write_tokens=400)
    expected = (1000 * 3 + 200 * 15 + 5000 * 0.30 + 400 * 3.75) / 1_000_000
    assert cost_usd([UsageCost("claude-sonnet-4-6", "anthropic", usage)]) == pytest.approx(expected)
    # OpenAI bills no cache write: those tokens cost the input rate
    openai = cost_usd([UsageCost("gpt-4o", "openai", Usage(100, 10, 0, 50))])
    assert openai == pytest.approx((150 * 2.50 + 10 * 10) / 1_000_000)


def test_a_long_prompt_is_billed_at_the_long_context_rate() -> None:
    short = Usage(input_tokens=200_000, output_tokens=1000)
    long = Usage(input_tokens=150_000, output_tokens=1000, cache_read_tokens=60_000)
    assert cost_usd([UsageCost("gemini-2.5-pro", "x", short)]) == pytest.approx((200_000 * 1.25 + 1000 * 10) / 1e6)
    assert cost_usd([UsageCost("gemini-2.5-pro", "x", long)]) == pytest.approx(
        (150_000 * 2.50 + 1000 * 15 + 60_000 * 0.125 * 2) / 1e6
    )


def test_a_partial_sum_is_never_reported_and_scripted_costs_nothing() -> None:
    known = UsageCost("gpt-4o", "openai", Usage(1000, 1000))
    assert cost_usd([known, UsageCost("mystery", "openai", Usage(1, 1))]) is None
    assert cost_usd([UsageCost(None, "scripted", Usage(1000, 1000))]) == 0.0
    assert cost_usd([]) == 0.0


def test_the_table_is_dated_and_documented() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", PRICES_AS_OF)
    doc = pricing.__doc__ or ""
    assert PRICES_AS_OF in doc or ":data:`PRICES_AS_OF`" in doc
    for entry, price in PRICES.items():
        assert entry == normalise_model(entry), entry  # every key is reachable as written
        assert price.input > 0
        assert price.output > 0
        assert 0 <= price.cache_read <= price.input


@given(
    st.sampled_from(sorted(PRICES)),
    st.integers(0, 10**7),
    st.integers(0, 10**6),
    st.integers(0, 10**7),
    st.integers(0, 10**6),
    st.integers(1, 10**5),
)
def test_cost_grows_with_every_kind_of_token(
    model: str, fresh: int, out: int, read: int, write: int, more: int
) -> None:
    base = cost_usd([UsageCost(model, "p", Usage(fresh, out, read, write))])
    assert base is not None
    assert base >= 0
    for bigger in (Usage(fresh, out + more, read, write), Usage(fresh, out, read, write + more)):
        grown = cost_usd([UsageCost(model, "p", bigger)])
        assert grown is not None
        assert grown >= base
