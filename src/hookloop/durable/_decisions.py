"""What every durable backend does with a decision: check it against the pending calls (an edited input against
the tool's JSON schema) and store it as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hookloop._frozen import thaw_object
from hookloop.checkpoint import AllowAlways, Approve, Reject, ResumeDecision

from ._store import StaleDecision

__all__ = ["check_decisions", "decision_from_json", "decision_to_json", "validate_input"]


def check_decisions(run_id: str, pending: list[dict[str, Any]], decisions: Mapping[str, ResumeDecision]) -> None:
    waiting = {str(p["call_id"]): p for p in pending}
    unknown = sorted(set(decisions) - set(waiting))
    if unknown:
        raise StaleDecision(f"run {run_id}: decisions for calls that are not pending: {', '.join(unknown)}")
    missing = sorted(set(waiting) - set(decisions))
    if missing:
        raise StaleDecision(f"run {run_id}: every pending call needs a decision; missing: {', '.join(missing)}")
    for call_id, decision in decisions.items():
        if isinstance(decision, Approve) and decision.updated_input is not None:
            validate_input(run_id, call_id, waiting[call_id], decision.updated_input)


def validate_input(run_id: str, call_id: str, call: Mapping[str, Any], edited: Mapping[str, object]) -> None:
    import jsonschema  # type: ignore[import-untyped]

    schema = call.get("input_schema")
    where = f"run {run_id}: the edited input of {call_id} ({call.get('tool_name')})"
    if not isinstance(schema, dict):
        raise StaleDecision(f"{where}: the tool's schema is not known; an edited input cannot be checked")
    try:
        data = json.loads(json.dumps(thaw_object(edited)))
        jsonschema.validate(data, schema)
    except (TypeError, ValueError) as exc:
        raise StaleDecision(f"{where} is not JSON: {exc}") from None
    except jsonschema.ValidationError as exc:
        path = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise StaleDecision(f"{where} does not match the tool's schema at {path}: {exc.message}") from None
    except jsonschema.SchemaError as exc:
        raise StaleDecision(f"{where}: the tool's schema is invalid: {exc.message}") from None


def decision_to_json(decision: ResumeDecision) -> dict[str, object]:
    if isinstance(decision, Approve):
        edited = None if decision.updated_input is None else thaw_object(decision.updated_input)
        return {"type": "approve", "updated_input": json.loads(json.dumps(edited))}
    if isinstance(decision, AllowAlways):
        return {"type": "allow_always", "rule": decision.rule}
    if isinstance(decision, Reject):
        return {"type": "reject", "reason": decision.reason}
    raise TypeError(f"not a resume decision: {decision!r}")


def decision_from_json(data: Mapping[str, Any]) -> ResumeDecision:
    kind = data.get("type")
    if kind == "approve":
        return Approve(updated_input=data.get("updated_input"))
    if kind == "allow_always":
        return AllowAlways(rule=data.get("rule"))
    if kind == "reject":
        return Reject(reason=str(data.get("reason", "denied by the user")))
    raise ValueError(f"recorded decision: unknown type {kind!r}")
