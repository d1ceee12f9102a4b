"""Shared by the checkpoint security tests: a real paused run (the built-in Bash tool in a temp workspace, so a
call that runs leaves a marker file), an attacker's re-MAC, and a walk over every part of a checkpoint."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hookloop import Paused, ScriptedClient, Text, ToolUse, Worker
from hookloop._checkpoint_auth import key_id, mac
from hookloop._frozen import freeze_object
from hookloop.hooks import Continue, Pause, PreToolCallInfo
from hookloop.permissions import PermissionPolicy
from hookloop.tools.builtin import Workspace, builtin_tools

KEY = bytes(range(32))
"""The legitimate key (passed explicitly: the per-user key file is exercised in test_checkpoint_key.py)."""

BATCH: list[Any] = [
    ToolUse("Bash", {"command": "touch asked.marker"}, call_id="asked"),  # default mode asks
    ToolUse("Bash", {"command": "echo hi"}, call_id="allowed"),  # an allow rule
    ToolUse("Bash", {"command": "rm -f x; touch denied.marker"}, call_id="denied"),  # a deny rule: done
    ToolUse("Bash", {"command": "touch paused.marker"}, call_id="paused"),  # a hook pauses it
]


def policy(root: Path, **overrides: Any) -> PermissionPolicy:
    """The current policy of every resuming Worker: echo allowed, rm denied, everything else asks."""
    settings: dict[str, Any] = {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"], "workspace": root}
    settings.update(overrides)
    return PermissionPolicy(**settings)


def pause_marked(info: PreToolCallInfo) -> Pause | Continue:
    return Pause("a person must look") if "paused" in str(info.arguments.get("command")) else Continue()


def worker(
    root: Path, turns: list[Any] | None = None, *, permissions: PermissionPolicy | None = None, **kw: Any
) -> Worker:
    w = Worker(
        ScriptedClient(turns if turns is not None else [[Text("ok")]]),
        tools=builtin_tools(Workspace(root)),
        permissions=permissions if permissions is not None else policy(root),
        workspace=root,
        system="be careful",
        checkpoint_key=kw.pop("checkpoint_key", KEY),
        **kw,
    )
    w.add_pre_tool_call_hook(pause_marked)
    return w


async def paused_run(root: Path, *, permissions: PermissionPolicy | None = None, batch: list[Any] = BATCH) -> Paused:
    """A run paused on ``batch``, its checkpoint carrying application options."""
    w = worker(root, [[Text("running four commands"), *batch], [Text("ok")]], permissions=permissions)
    outcome = await w.run("do the things")
    assert isinstance(outcome, Paused), outcome
    options = freeze_object({"hookloop_cli": 2, "mode": "default", "nested": [1, {"deep": True}], "none": None})
    return dataclasses.replace(outcome, checkpoint=dataclasses.replace(outcome.checkpoint, options=options))


def markers(root: Path) -> set[str]:
    return {p.name for p in root.glob("*.marker")}


def remac(data: dict[str, Any], key: bytes) -> dict[str, Any]:
    """What an attacker holding ``key`` does after editing a checkpoint."""
    body = {k: v for k, v in data.items() if k != "mac"}
    body["key_id"] = key_id(key)
    body["mac"] = mac(key, body)
    return body


def call(data: dict[str, Any], call_id: str) -> dict[str, Any]:
    return next(c for c in data["batch"] if c["call_id"] == call_id)


Path_ = tuple[str | int, ...]


def paths(node: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path into ``node``: each object member and each list element, at every depth."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, (*prefix, i))


def get(node: Any, path: Path_) -> Any:
    for part in path:
        node = node[part]
    return node


def put(node: Any, path: Path_, value: Any) -> None:
    get(node, path[:-1])[path[-1]] = value


def mutations(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every leaf changed, every member removed, an unknown member added to every object, every list grown
    and shrunk — each as a fresh copy with a description."""
    for path in paths(data):
        value = get(data, path)
        where = "/".join(map(str, path)) or "<root>"
        if isinstance(value, dict):
            for k in value:
                m = copy.deepcopy(data)
                del get(m, path)[k]
                yield f"{where}: removed {k}", m
            m = copy.deepcopy(data)
            get(m, path)["injected"] = True
            yield f"{where}: added a member", m
        elif isinstance(value, list):
            m = copy.deepcopy(data)
            get(m, path).append(copy.deepcopy(value[-1]) if value else 1)
            yield f"{where}: grown", m
            if value:
                m = copy.deepcopy(data)
                get(m, path).pop()
                yield f"{where}: shrunk", m
        else:
            m = copy.deepcopy(data)
            changed: Any
            if isinstance(value, bool):
                changed = not value
            elif isinstance(value, int):
                changed = value + 1
            elif isinstance(value, str):
                changed = value + "x"
            else:
                changed = "x"
            put(m, path, changed)
            yield f"{where}: {value!r} -> {changed!r}", m
