"""SPEC §7, issue 10 item 9: resume trusts nothing in the file.

- Every part of a saved checkpoint (each leaf, each member, each list; the options; the MAC) changed by someone
  without the key is refused, and nothing runs.
- Someone *with* the key (or a checkpoint made under looser settings) still cannot get a call run that the
  current policy would not run without a decision: real Bash, marker files prove what ran.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoint_kit import KEY, call, markers, mutations, paused_run, policy, remac, worker
from hookloop import AllowAlways, Approve, Checkpoint, CheckpointError, Finished, Paused, Reject, ToolResult
from hookloop._checkpoint_auth import canonical, key_id, mac
from hookloop.permissions import PermissionPolicy

pytestmark = pytest.mark.anyio

DECIDE = {"asked": Approve(), "paused": Approve()}


def results(w: Any) -> dict[str, ToolResult]:
    return {i.call_id: i for i in w.history if isinstance(i, ToolResult)}


async def saved(tmp_path: Path) -> dict[str, Any]:
    paused = await paused_run(tmp_path)
    assert [c.state for c in paused.checkpoint.batch] == ["approval", "ready", "done", "paused"]
    data: dict[str, Any] = json.loads(paused.checkpoint.dumps(key=KEY))
    return data


async def test_the_untouched_checkpoint_resumes_so_the_refusals_below_are_about_the_change(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    w = worker(tmp_path)
    done = await w.resume(json.dumps(data), DECIDE)
    assert isinstance(done, Finished)
    assert markers(tmp_path) == {"asked.marker", "paused.marker"}
    assert "Bash(rm:*)" in results(w)["denied"].content


async def test_every_change_to_every_part_of_a_checkpoint_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    seen = 0
    for description, changed in mutations(data):
        seen += 1
        with pytest.raises(CheckpointError) as caught:
            Checkpoint.from_json(changed, key=KEY)
        assert "\n" not in str(caught.value), description
        w = worker(tmp_path)
        with pytest.raises(CheckpointError):
            await w.resume(json.dumps(changed), DECIDE)
        assert w.history == (), description
    assert seen > 150  # the walk reached the history, the batch, the usage, the options and the MAC
    assert markers(tmp_path) == set()


async def test_changes_to_the_options_are_refused(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    for value in ({"hookloop_cli": 2, "mode": "bypassPermissions"}, {}, {"trust_project_hooks": True}):
        changed = {**data, "options": value}
        with pytest.raises(CheckpointError, match="changed after it was written"):
            Checkpoint.from_json(changed, key=KEY)


@pytest.mark.parametrize(
    ("forge", "message"),
    [
        (lambda body: hashlib.sha256(canonical(body)).hexdigest(), "changed after it was written"),  # format 1
        (lambda body: mac(b"", body), "changed after it was written"),
        (lambda body: mac(b"guessed key guessed key", body), "changed after it was written"),
        (lambda body: mac(KEY, body).upper(), "changed after it was written"),
        (lambda body: None, "mac: missing"),
        (lambda body: 7, "mac: missing"),
    ],
)
async def test_a_forged_mac_without_the_key_is_refused(tmp_path: Path, forge: Any, message: str) -> None:
    data = await saved(tmp_path)
    call(data, "asked")["state"] = "ready"
    body = {k: v for k, v in data.items() if k != "mac"}
    data["mac"] = forge(body)
    w = worker(tmp_path)
    with pytest.raises(CheckpointError, match=message):
        await w.resume(data, {"paused": Approve()})
    assert markers(tmp_path) == set()


async def test_a_checkpoint_made_with_another_key_says_so_and_loads_with_that_key(tmp_path: Path) -> None:
    paused = await paused_run(tmp_path)
    other = b"another machine's key, 32 bytes!"
    text = paused.checkpoint.dumps(key=other)
    with pytest.raises(CheckpointError, match=r"made with another key .*key=") as caught:
        Checkpoint.loads(text, key=KEY)
    assert key_id(other) in str(caught.value)
    assert "checkpoint.key" in str(caught.value)
    assert Checkpoint.loads(text, key=other).nonce == paused.checkpoint.nonce
    w = worker(tmp_path)
    assert isinstance(await w.resume(text, DECIDE, key=other), Finished)


# -- the attacker has the key: the current policy still decides ------------------------------------------


async def test_an_asked_call_set_to_ready_still_needs_a_decision(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    call(data, "asked")["state"] = "ready"
    forged = remac(data, KEY)
    w = worker(tmp_path)
    again = await w.resume(forged, {"paused": Approve()})
    assert isinstance(again, Paused)
    assert [c.call_id for c in again.pending] == ["asked", "paused"]  # the approval covered that resume only
    assert again.checkpoint.nonce != data["nonce"]
    assert markers(tmp_path) == set()
    # the new checkpoint is decided like any other; the approval comes from the decisions
    fresh = worker(tmp_path)
    done = await fresh.resume(again.checkpoint.dumps(key=KEY), {"asked": Reject("no"), "paused": Approve()})
    assert isinstance(done, Finished)
    assert markers(tmp_path) == {"paused.marker"}


async def test_a_denied_call_set_to_ready_is_denied_by_the_current_rules(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    denied = call(data, "denied")
    denied.update(state="ready", result=None)
    w = worker(tmp_path)
    done = await w.resume(remac(data, KEY), DECIDE)
    assert isinstance(done, Finished)
    assert "Bash(rm:*)" in results(w)["denied"].content
    assert "denied.marker" not in markers(tmp_path)


async def test_a_denied_call_marked_pending_is_denied_even_when_approved(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    call(data, "denied").update(state="approval", result=None)
    w = worker(tmp_path)
    await w.resume(remac(data, KEY), {**DECIDE, "denied": AllowAlways("Bash")})
    assert results(w)["denied"].is_error
    assert "denied.marker" not in markers(tmp_path)


async def test_rewritten_arguments_in_the_file_are_checked_on_what_executes(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    call(data, "allowed")["arguments"] = {"command": "echo hi; touch sneaky.marker"}  # no longer a plain echo?
    call(data, "paused")["arguments"] = {"command": "rm -rf x; touch paused.marker"}
    w = worker(tmp_path)
    outcome = await w.resume(remac(data, KEY), DECIDE)
    assert isinstance(outcome, Paused)  # the compound command is no plain echo: it asks, and nobody decided
    assert [c.call_id for c in outcome.pending] == ["asked", "allowed"]
    assert markers(tmp_path) == set()
    paused = next(c for c in outcome.checkpoint.batch if c.call_id == "paused")
    assert paused.state == "done"  # approved, but it now runs rm: the deny rule holds
    assert paused.result is not None
    assert "Bash(rm:*)" in paused.result.content


async def test_an_approval_that_rewrites_the_input_is_checked_by_the_deny_rules(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    w = worker(tmp_path)
    rewrite = Approve(updated_input={"command": "rm -f y; touch rewritten.marker"})
    await w.resume(json.dumps(data), {"asked": rewrite, "paused": Approve()})
    assert "Bash(rm:*)" in results(w)["asked"].content
    assert markers(tmp_path) == {"paused.marker"}


async def test_a_checkpoint_made_under_bypass_permissions_does_not_bypass_the_current_policy(tmp_path: Path) -> None:
    loose = PermissionPolicy(mode="bypassPermissions", workspace=tmp_path)
    paused = await paused_run(tmp_path, permissions=loose)
    # bypass ran nothing yet (the hook paused the batch) but marked every other call ready, rm included
    assert {c.call_id: c.state for c in paused.checkpoint.batch} == {
        "asked": "ready",
        "allowed": "ready",
        "denied": "ready",
        "paused": "paused",
    }
    w = worker(tmp_path)  # the current policy: default mode, rm denied
    again = await w.resume(paused.checkpoint.dumps(key=KEY), {"paused": Approve()})
    assert isinstance(again, Paused)
    assert [c.call_id for c in again.pending] == ["asked", "paused"]
    assert markers(tmp_path) == set()
    done = await worker(tmp_path).resume(again.checkpoint.dumps(key=KEY), DECIDE)
    assert isinstance(done, Finished)
    assert markers(tmp_path) == {"asked.marker", "paused.marker"}  # rm was denied by the rule


async def test_a_tightened_policy_applies_on_resume_even_to_the_same_process_checkpoint(tmp_path: Path) -> None:
    paused = await paused_run(tmp_path)
    w = worker(tmp_path, permissions=policy(tmp_path, mode="plan"))
    done = await w.resume(paused.checkpoint, DECIDE)
    assert isinstance(done, Finished)
    assert markers(tmp_path) == set()  # plan mode denies every call that is not read-only
    assert all(r.is_error for cid, r in results(w).items() if cid != "allowed")


async def test_approvers_are_the_current_ones_and_answer_a_re_planned_ask(tmp_path: Path) -> None:
    data = await saved(tmp_path)
    call(data, "asked")["state"] = "ready"
    asked: list[str] = []

    async def approver(pending: Any) -> Approve:
        asked.append(pending.call_id)
        return Approve()

    w = worker(tmp_path, approvers=[approver])
    done = await w.resume(remac(data, KEY), {"paused": Approve()})
    assert isinstance(done, Finished)
    assert asked == ["asked"]
    assert markers(tmp_path) == {"asked.marker", "paused.marker"}


STATES = st.sampled_from(["ready", "approval", "paused"])
VERDICTS = st.sampled_from([None, "approve", "always", "reject"])
COMMANDS = {"asked": "ask", "allowed": "allow", "paused": "ask", "denied": "deny"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    states=st.fixed_dictionaries(dict.fromkeys(COMMANDS, STATES)),
    verdicts=st.fixed_dictionaries(dict.fromkeys(COMMANDS, VERDICTS)),
)
def test_property_a_call_runs_only_if_the_policy_allows_it_or_a_decision_approves_an_ask(
    tmp_path_factory: pytest.TempPathFactory, states: dict[str, str], verdicts: dict[str, Any]
) -> None:
    import anyio

    root = tmp_path_factory.mktemp("prop")
    made: dict[str, Any] = {
        "approve": Approve(),
        "always": AllowAlways("Bash(touch nothing)"),
        "reject": Reject("no"),
    }

    async def scenario() -> None:
        data = json.loads((await paused_run(root)).checkpoint.dumps(key=KEY))
        for cid, state in states.items():
            call(data, cid).update(state=state, result=None, reason="", asked_by="")
        decisions = {cid: made[v] for cid, v in verdicts.items() if v is not None}
        for cid, state in states.items():  # the API demands a decision for what the file calls pending
            if state != "ready" and cid not in decisions:
                decisions[cid] = Approve()
        w = worker(root)
        outcome = await w.resume(remac(data, KEY), decisions)
        ran = markers(root)
        for cid, verdict in COMMANDS.items():
            name = f"{cid}.marker"
            decision = decisions.get(cid)
            approved = decision is not None and not isinstance(decision, Reject)
            may_run = verdict == "allow" or (verdict == "ask" and approved)
            if not may_run:
                assert name not in ran, (states, verdicts)
        if isinstance(outcome, Finished):
            for cid in ("asked", "paused"):
                if isinstance(decisions.get(cid), (Approve, AllowAlways)):
                    assert f"{cid}.marker" in ran

    anyio.run(scenario)
