"""Stop-hook validator: ``on_turn_end`` sends the model back until its final answer validates.

The hook runs when the model stops without calling a tool. It returns ``Finish()`` to accept the answer, or
``ContinueWithMessages(...)`` to append a message (here: what is wrong with the answer) and run another turn.
The next ``TurnEndInfo`` says ``stop_hook_active=True`` and counts ``forced_continuations``; after
``Worker(max_forced_continuations=N)`` continuations in a row the run ends with ``StopHookLoopError`` instead of
looping forever — a model that never complies costs N extra turns, not your budget.

(Claude Code's ``Stop`` command hooks map onto the same event: ``{"decision": "block", "reason": …}`` sends
the model back with the reason, and ``stop_hook_active`` is in their input.)

    python examples/stop_hook_validator.py
"""

from __future__ import annotations

import asyncio
import json

from hookloop import Finished, Message, ScriptedClient, StopHookLoopError, Text, Worker
from hookloop.hooks import ContinueWithMessages, Finish, OnTurnEndResult, TurnEndInfo

PRIORITIES = ("low", "medium", "high")


def problems(answer: str) -> list[str]:
    """What is wrong with ``answer`` as a ticket: a JSON object with a title, a priority and a list of tags."""
    try:
        ticket = json.loads(answer)
    except json.JSONDecodeError as exc:
        return [f"the answer is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]
    if not isinstance(ticket, dict):
        return ["the answer must be a JSON object"]
    found = []
    if not isinstance(ticket.get("title"), str) or not ticket["title"].strip():
        found.append('"title" must be a non-empty string')
    if ticket.get("priority") not in PRIORITIES:
        found.append(f'"priority" must be one of {", ".join(PRIORITIES)}')
    tags = ticket.get("tags")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        found.append('"tags" must be a list of strings')
    extra = sorted(set(ticket) - {"title", "priority", "tags"})
    if extra:
        found.append(f"unexpected fields: {', '.join(extra)}")
    return found


def require_ticket(info: TurnEndInfo) -> OnTurnEndResult:
    wrong = problems(info.last_assistant_text)
    status = "valid" if not wrong else "; ".join(wrong)
    print(f"turn {info.turn} (continuations so far: {info.forced_continuations}): {status}")
    if not wrong:
        return Finish()
    return ContinueWithMessages(
        "Your answer was rejected: " + "; ".join(wrong) + ". Answer again with only the JSON object."
    )


async def main() -> None:
    # A model that needs two corrections.
    model = ScriptedClient(
        [
            [Text("Sure! The login page crashes on Safari; that's pretty urgent.")],
            [Text('{"title": "Login crashes on Safari", "priority": "urgent"}')],
            [Text('{"title": "Login crashes on Safari", "priority": "high", "tags": ["login", "safari"]}')],
        ]
    )
    worker = Worker(model, max_forced_continuations=3)
    worker.hooks.on_turn_end(require_ticket)
    outcome = await worker.run("File a ticket for: login crashes on Safari")
    if isinstance(outcome, Finished):
        print(f"accepted after {outcome.turns} turns: {json.loads(outcome.text)}")
        # The model saw each rejection: they are user messages in the history, after the prompt.
        told = [item.text for item in worker.history if isinstance(item, Message) and item.role == "user"]
        for message in told[1:]:
            print(f"the model was told: {message}")

    # A model that never complies: the loop guard ends the run.
    stubborn = ScriptedClient([[Text("no JSON today")]] * 10)
    worker = Worker(stubborn, max_forced_continuations=2)
    worker.add_on_turn_end_hook(require_ticket)
    try:
        await worker.run("File a ticket")
    except StopHookLoopError as exc:
        print(f"stopped: {type(exc).__name__} after {len(stubborn.requests)} model requests")


if __name__ == "__main__":
    asyncio.run(main())
