"""Meta-tests: curated public API, and every hook event declared with typed input, results and docs."""

from __future__ import annotations

import importlib
import inspect
import types

import hookloop
import hookloop.hooks
import hookloop.providers
import hookloop.tools
from hookloop import Worker
from hookloop.hooks import ALL_EVENTS, HookRegistry

SEED_000_METHODS = [
    "add_on_prompt_submit_hook",
    "add_pre_llm_request_hook",
    "add_pre_tool_call_hook",
    "add_post_tool_call_hook",
    "add_on_turn_end_hook",
    "add_on_abort_hook",
    "add_on_text_delta_hook",
    "add_on_tool_call_delta_hook",
    "add_on_stream_chunk_hook",
    "add_on_stream_complete_hook",
]


def isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType) and name not in {"annotations"}
    }


def test_all_lists_are_sorted_and_complete() -> None:
    for module in (hookloop, hookloop.hooks, hookloop.tools, hookloop.providers):
        assert module.__all__ == sorted(module.__all__, key=isort_key), module.__name__
        lazy = set(getattr(module, "_LAZY", {}))  # names served by a module __getattr__
        assert set(module.__all__) == public_names(module) | lazy, module.__name__
        for name in lazy:  # the very object its module defines (a class, a function or a type alias)
            assert getattr(module, name) is getattr(importlib.import_module(module._LAZY[name]), name)


def test_every_event_is_declared_with_input_results_and_docs() -> None:
    assert len(ALL_EVENTS) == 18  # 16 + subagent_start, subagent_stop
    names = [e.name for e in ALL_EVENTS]
    assert len(set(names)) == len(names)
    for event in ALL_EVENTS:
        assert event.doc, event.name
        assert isinstance(event.input_type, type)
        assert event.accepts, event.name
        assert not (event.passes & event.decides), event.name
        decorator = getattr(HookRegistry, event.name)
        assert callable(decorator)
        assert inspect.signature(decorator).parameters["fn"].annotation.startswith("HookFn[")


def test_the_worker_has_the_seed_000_registration_methods() -> None:
    for name in SEED_000_METHODS:
        method = getattr(Worker, name)
        assert method.__doc__ is None or method.__doc__
        assert "hook" in inspect.signature(method).parameters


def test_public_classes_and_functions_are_documented() -> None:
    for name in hookloop.__all__:
        value = getattr(hookloop, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"hookloop.{name} has no docstring"


def test_the_all_extra_installs_every_optional_integration() -> None:
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    integrations = set(extras) - {"all", "dev", "bench"}
    (spec,) = extras["all"]
    assert spec.startswith("hookloop[")
    assert set(spec.removeprefix("hookloop[").removesuffix("]").split(",")) == integrations
    assert "hookloop[all]" in extras["dev"]
