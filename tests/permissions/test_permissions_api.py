"""The public surface of hookloop.permissions: a sorted, complete __all__ and a documenting docstring."""

from __future__ import annotations

import dataclasses
import inspect

import hookloop.permissions as permissions


def test_all_is_sorted_and_complete() -> None:
    assert permissions.__all__ == sorted(permissions.__all__)
    public = {
        name
        for name, value in vars(permissions).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert public == set(permissions.__all__)


def test_value_types_are_frozen_slotted_keyword_only() -> None:
    for cls in (permissions.RuleMatch, permissions.HookVote, permissions.PermissionOutcome):
        params = getattr(cls, "__dataclass_params__", None)
        assert params is not None, cls
        assert params.frozen, cls
        assert "__slots__" in vars(cls), cls
        assert all(field.kw_only for field in dataclasses.fields(cls)), cls


def test_docstring_documents_syntax_precedence_and_every_mode() -> None:
    doc = inspect.getdoc(permissions) or ""
    for needle in ("Rule syntax", "Precedence", "Bash(npm run test:*)", "mcp__server", "domain:example.com"):
        assert needle in doc, needle
    for mode in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"):
        assert f"``{mode}``" in doc, mode
