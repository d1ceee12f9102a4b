"""Approval service: a run pauses on an ask, a person decides, another process resumes from the checkpoint.

Three steps, each its own process (as in a web service: the worker that paused is long gone when the answer
comes, maybe on another machine that shares ``$HOOKLOOP_HOME``'s checkpoint key):

    python examples/approval_service.py start   STATE_DIR            # run until the ask; exit 3 when paused
    python examples/approval_service.py decide  STATE_DIR CALL_ID approve|reject [REASON]
    python examples/approval_service.py resume  STATE_DIR            # continue from the checkpoint
    python examples/approval_service.py demo                          # all three, in three processes

What holds:

- Nothing of the paused batch has run when ``start`` exits: the call the rule asks about waits, and so do the
  other calls of the same reply (the final history equals that of a run that never paused).
- The checkpoint is authenticated (HMAC with the per-user key in ``$HOOKLOOP_HOME``) and never trusted for
  decisions: ``resume`` plans every call again against the *current* rules, and only a decision passed to
  ``Worker.resume`` approves an asked call. A deny rule added in between would still win.
- A checkpoint is consumed once: running ``resume`` twice is refused (``CheckpointError``).

The model is scripted. Its reply after the resume is a function of the request: it reads the tool results it
got, so it reports what really happened.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from hookloop import (
    Approve,
    Checkpoint,
    CheckpointError,
    Finished,
    LLMRequest,
    Paused,
    Reject,
    ResumeDecision,
    ScriptedClient,
    ScriptedTurn,
    Text,
    ToolResult,
    ToolUse,
    Worker,
    tool,
)
from hookloop.hooks import Ask, Continue, PreToolCallInfo, PreToolCallResult
from hookloop.permissions import PermissionPolicy

EXIT_PAUSED = 3


def make_worker(state: Path, model: ScriptedClient) -> Worker:
    """The same tools and rules in every process (resume needs the tools; the rules are re-applied)."""

    @tool
    async def publish(channel: str, version: str) -> str:
        """Publish a release on a channel."""
        with (state / "published.txt").open("a", encoding="utf-8") as log:
            log.write(f"{channel} {version}\n")
        return f"published {version} on {channel}"

    # The rule allows publishing; the hook asks a person before anything reaches the stable channel. (A hook's
    # Ask always tightens; its Allow could never loosen a deny or ask rule.)
    def stable_needs_a_person(info: PreToolCallInfo) -> PreToolCallResult:
        if info.tool_name == "publish" and info.arguments.get("channel") == "stable":
            return Ask("publishing on stable needs a release manager")
        return Continue()

    worker = Worker(model, tools=[publish], permissions=PermissionPolicy(allow=["publish"]))
    worker.add_pre_tool_call_hook(stable_needs_a_person)
    return worker


def report(request: LLMRequest) -> ScriptedTurn:
    """The scripted model's last reply: say what the tool results say."""
    results = [item for item in request.items if isinstance(item, ToolResult)]
    lines = [("failed: " if r.is_error else "") + r.content for r in results]
    return ScriptedTurn([Text("Release report: " + "; ".join(lines))])


async def start(state: Path) -> int:
    reply = [
        ToolUse("publish", {"channel": "beta", "version": "2.0"}),
        ToolUse("publish", {"channel": "stable", "version": "2.0"}),
    ]
    model = ScriptedClient([reply])
    outcome = await make_worker(state, model).run("release 2.0 on beta and stable")
    if not isinstance(outcome, Paused):
        print(f"finished without asking: {outcome}")
        return 1
    outcome.checkpoint.save(state / "checkpoint.json")
    pending = [
        {"call_id": c.call_id, "tool": c.tool_name, "arguments": dict(c.arguments), "reason": c.reason}
        for c in outcome.pending
    ]
    (state / "pending.json").write_text(json.dumps(pending, indent=2), encoding="utf-8")
    for call in pending:
        print(f"PENDING {call['call_id']} {call['tool']} {json.dumps(call['arguments'])}: {call['reason']}")
    return EXIT_PAUSED


def decide(state: Path, call_id: str, verdict: str, reason: str) -> int:
    pending = {c["call_id"] for c in json.loads((state / "pending.json").read_text(encoding="utf-8"))}
    if call_id not in pending:
        print(f"no pending call {call_id!r}; pending: {', '.join(sorted(pending))}", file=sys.stderr)
        return 2
    if verdict not in ("approve", "reject"):
        print(f"expected approve or reject, got {verdict!r}", file=sys.stderr)
        return 2
    path = state / "decisions.json"
    decisions = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    decisions[call_id] = {"verdict": verdict, "reason": reason}
    path.write_text(json.dumps(decisions, indent=2), encoding="utf-8")
    print(f"DECIDED {call_id} {verdict}")
    return 0


async def resume(state: Path) -> int:
    recorded = json.loads((state / "decisions.json").read_text(encoding="utf-8"))
    decisions: dict[str, ResumeDecision] = {
        call_id: Approve() if d["verdict"] == "approve" else Reject(d["reason"] or "rejected by the approver")
        for call_id, d in recorded.items()
    }
    worker = make_worker(state, ScriptedClient([report]))
    try:
        # load verifies the MAC (a changed file is refused); resume refuses a checkpoint resumed before.
        checkpoint = Checkpoint.load(state / "checkpoint.json")
        outcome = await worker.resume(checkpoint, decisions)
    except CheckpointError as exc:
        print(f"cannot resume: CheckpointError: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a pending call without a decision
        print(f"cannot resume: {exc}", file=sys.stderr)
        return 2
    if isinstance(outcome, Paused):  # the current rules asked again about a call nobody decided
        outcome.checkpoint.save(state / "checkpoint.json")
        print(f"paused again: {outcome.reason}")
        return EXIT_PAUSED
    if isinstance(outcome, Finished):
        print(f"FINISHED {outcome.text}")
    return 0


def demo() -> int:
    """Run the three steps as three processes, approving every pending call."""
    me = [sys.executable, __file__]
    with tempfile.TemporaryDirectory() as tmp:
        first = subprocess.run([*me, "start", tmp], check=False, capture_output=True, text=True)
        print(first.stdout, end="")
        if first.returncode != EXIT_PAUSED:
            print(first.stderr, end="", file=sys.stderr)
            return 1
        for call in json.loads(Path(tmp, "pending.json").read_text(encoding="utf-8")):
            subprocess.run([*me, "decide", tmp, call["call_id"], "approve"], check=True)
        return subprocess.run([*me, "resume", tmp], check=False).returncode


def main(argv: list[str]) -> int:
    usage = "usage: approval_service.py start|resume STATE_DIR | decide STATE_DIR CALL_ID approve|reject [REASON]"
    if argv[:1] == ["demo"]:
        return demo()
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    command, state = argv[0], Path(argv[1])
    state.mkdir(parents=True, exist_ok=True)
    if command == "start":
        return asyncio.run(start(state))
    if command == "resume":
        return asyncio.run(resume(state))
    if command == "decide" and len(argv) in (4, 5):
        return decide(state, argv[2], argv[3], argv[4] if len(argv) == 5 else "")
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
