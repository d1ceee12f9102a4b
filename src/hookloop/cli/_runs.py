"""``hookloop runs list|show|approve|deny|cancel|resume``: durable runs seen and decided from any process.

Every verb goes through :class:`hookloop.durable.RunStore` only (plus ``continue_run`` for ``resume``), so it
works on whatever backend holds the runs. The store is opened from ``--db URL`` (else ``$HOOKLOOP_DURABLE_URL``,
else the default SQLite database under ``HOOKLOOP_HOME``).

Exit codes: 0 done; 1 the decision was refused (the pause is stale or was already decided, the run is not in a
state that allows it); 2 bad usage (unknown run, bad flags, an edited input that is not a JSON object).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

import typer
from rich.console import Console
from rich.table import Table

from hookloop.checkpoint import AllowAlways, Approve, PendingCall, Reject, ResumeDecision
from hookloop.cli._dbopen import StoreUnavailable, describe_url, first_line, open_store
from hookloop.durable import PauseConsumed, RunDetail, RunNotFound, RunRecord, RunStatus, RunStore, StaleDecision

__all__ = ["record_to_json", "runs_app"]

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
STATUSES: tuple[RunStatus, ...] = ("queued", "running", "paused", "finished", "failed", "cancelled")
DECIDABLE = ("approval", "paused")
"""Pending-call states that wait for a decision (``ready`` and ``done`` calls need none)."""

runs_app = typer.Typer(
    name="runs",
    help="See and decide durable runs (hookloop run --durable) from any process attached to the database.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

T = TypeVar("T")

DB_HELP = "The run database URL (sqlite:///… or postgresql://…). Default: $HOOKLOOP_DURABLE_URL, else HOOKLOOP_HOME."


class _Refused(Exception):
    """A one-line error and its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@runtime_checkable
class _Continuable(Protocol):
    async def continue_run(self, run_id: str, messages: str) -> None: ...


def _err() -> Console:
    return Console(stderr=True, soft_wrap=True, highlight=False)


def _with_store(db: str | None, action: Callable[[RunStore], Awaitable[T]], *, read_only: bool = False) -> T:
    """Open the store, run ``action`` on it, close it; every known failure becomes one line and an exit code.
    ``read_only``: ``action`` only lists or shows (the store opens faster)."""

    async def main() -> T:
        store = open_store(db, read_only=read_only)
        try:
            return await action(store)
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                await close()

    try:
        return asyncio.run(main())
    except StoreUnavailable as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    except RunNotFound as exc:
        raise _fail(f"no such run in {describe_url(db)}: {_plain(exc)}", EXIT_USAGE) from None
    except PauseConsumed as exc:
        raise _fail(f"refused (already decided): {_plain(exc)}", EXIT_REFUSED) from None
    except StaleDecision as exc:
        raise _fail(f"refused: {_plain(exc)}", EXIT_REFUSED) from None
    except _Refused as exc:
        raise _fail(str(exc), exc.code) from None
    except ConnectionError as exc:  # a Temporal server that does not answer
        raise _fail(f"{describe_url(db)}: {first_line(exc)}", EXIT_REFUSED) from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in _DATABASE_ERRORS:
            raise
        raise _fail(f"{describe_url(db)}: database error: {first_line(exc)}", EXIT_REFUSED) from None


_DATABASE_ERRORS = frozenset({"sqlalchemy", "psycopg", "sqlite3", "dbos", "temporalio"})


def _plain(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if text else text


def _fail(message: str, code: int) -> typer.Exit:
    _err().print(f"hookloop: {message}", markup=False)
    return typer.Exit(code)


def _check_format(value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise _fail(f"--format {value!r}: expected one of {', '.join(choices)}", EXIT_USAGE)


# -- JSON shapes -----------------------------------------------------------------------------------------


def _call_json(call: PendingCall) -> dict[str, object]:
    return {
        "call_id": call.call_id,
        "tool": call.tool_name,
        "arguments": json.loads(json.dumps(call.arguments, default=_thawed)),
        "state": call.state,
        "reason": call.reason,
        "asked_by": call.asked_by,
    }


def _thawed(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | frozenset):
        return list(value)
    return str(value)


def record_to_json(record: RunRecord) -> dict[str, object]:
    """One run as ``hookloop runs list --format json`` prints it (a :class:`RunDetail` adds its history, events
    and final text)."""
    data: dict[str, object] = {
        "run_id": record.run_id,
        "status": record.status,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
        "age_seconds": round(_age(record.created_at), 3),
        "prompt": record.prompt,
        "turns": record.turns,
        "usage": {"input_tokens": record.usage.input_tokens, "output_tokens": record.usage.output_tokens},
        "cost_usd": record.cost_usd,
        "pause_id": record.pause_id,
        "pending": [_call_json(c) for c in record.pending],
        "reason": record.reason,
        "error": record.error,
        "worker": record.worker,
        "workspace": record.workspace,
    }
    if isinstance(record, RunDetail):
        data["text"] = record.text
        data["history"] = json.loads(json.dumps(list(record.history), default=_thawed))
        data["events"] = json.loads(json.dumps(list(record.events), default=_thawed))
    return data


def _print_json(data: object) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=None))


# -- rendering ---------------------------------------------------------------------------------------------


def _age(moment: datetime) -> float:
    when = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - when).total_seconds())


def human_age(seconds: float) -> str:
    """``12s``, ``5m``, ``3h``, ``2d`` (the largest whole unit)."""
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _one_line(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _pending_summary(record: RunRecord) -> str:
    waiting = [c for c in record.pending if c.state in DECIDABLE]
    if not waiting:
        return ""
    names = ", ".join(sorted({c.tool_name for c in waiting}))
    return f"{len(waiting)} ({names})"


def _runs_table(records: Sequence[RunRecord]) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("RUN", "STATUS", "PENDING", "AGE", "TURNS", "PROMPT"):
        table.add_column(column, no_wrap=column != "PROMPT", overflow="fold")
    colours = {"paused": "magenta", "failed": "red", "cancelled": "yellow", "finished": "green", "running": "cyan"}
    for r in records:
        status = f"[{colours[r.status]}]{r.status}[/]" if r.status in colours else r.status
        table.add_row(
            r.run_id, status, _pending_summary(r), human_age(_age(r.created_at)), str(r.turns), _one_line(r.prompt, 60)
        )
    return table


def _show_text(console: Console, run: RunDetail) -> None:
    console.print(f"[bold]{run.run_id}[/]  {run.status}", highlight=False)
    rows = [
        ("created", f"{run.created_at.isoformat()} ({human_age(_age(run.created_at))} ago)"),
        ("updated", f"{run.updated_at.isoformat()} ({human_age(_age(run.updated_at))} ago)"),
        ("worker", run.worker),
        ("turns", str(run.turns)),
        ("usage", f"{run.usage.input_tokens} in / {run.usage.output_tokens} out"),
        ("cost", "" if run.cost_usd is None else f"${run.cost_usd:.4f}"),
        ("reason", run.reason),
        ("error", run.error or ""),
        ("pause", run.pause_id or ""),
        ("prompt", _one_line(run.prompt, 200)),
    ]
    for name, value in rows:
        if value:
            console.print(f"  {name:8} {value}", markup=False, highlight=False)
    waiting = [c for c in run.pending if c.state in DECIDABLE]
    if waiting:
        console.print("  pending calls:", markup=False)
        for call in waiting:
            args = json.dumps(call.arguments, default=_thawed, ensure_ascii=False)
            console.print(f"    {call.call_id}  {call.tool_name} {_one_line(args, 300)}", markup=False)
            console.print(f"      asked by {call.asked_by}: {call.reason or 'no reason given'}", markup=False)
        console.print(
            f"  decide with: hookloop runs approve {run.run_id} CALL_ID… | --all   (or: hookloop runs deny …)",
            markup=False,
        )
    if run.text:
        console.print("  answer:", markup=False)
        console.print("    " + run.text.replace("\n", "\n    "), markup=False, highlight=False)
    console.print(f"  history  {len(run.history)} items, {len(run.events)} timeline events", markup=False)


# -- commands ----------------------------------------------------------------------------------------------


@runs_app.command("list")
def list_runs(
    status: str | None = typer.Option(None, "--status", help=f"Only runs with this status: {', '.join(STATUSES)}."),
    limit: int = typer.Option(200, "--limit", min=1, help="At most this many runs (newest first)."),
    output: str = typer.Option("table", "--format", help="table or json (one JSON array)."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """The newest runs first: status, pending calls, age, turns, prompt."""
    _check_format(output, ("table", "json"))
    if status is not None and status not in STATUSES:
        raise _fail(f"--status {status!r}: expected one of {', '.join(STATUSES)}", EXIT_USAGE)

    async def action(store: RunStore) -> Sequence[RunRecord]:
        return await store.list_runs(status=status, limit=limit)

    records = _with_store(db, action, read_only=True)
    if output == "json":
        _print_json([record_to_json(r) for r in records])
        return
    console = Console(soft_wrap=False, highlight=False)
    if not records:
        console.print("no runs" + (f" with status {status}" if status else ""), markup=False)
        return
    console.print(_runs_table(records))


@runs_app.command()
def show(
    run_id: str = typer.Argument(..., help="The run id (hookloop runs list shows them)."),
    output: str = typer.Option("text", "--format", help="text or json (the whole run: history and timeline)."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """One run: its status, pending calls (with their call ids), answer and history size."""
    _check_format(output, ("text", "json"))

    async def action(store: RunStore) -> RunDetail:
        return await store.get_run(run_id)

    run = _with_store(db, action, read_only=True)
    if output == "json":
        _print_json(record_to_json(run))
    else:
        _show_text(Console(soft_wrap=True, highlight=False), run)


def _chosen(run: RunDetail, call_ids: Sequence[str], all_calls: bool, verb: str) -> list[PendingCall]:
    """The pending calls a decision names; every problem is a :class:`_Refused` of one line."""
    if run.status != "paused":
        raise _Refused(f"run {run.run_id} is {run.status}, not paused: there is nothing to {verb}", EXIT_REFUSED)
    waiting = [c for c in run.pending if c.state in DECIDABLE]
    if all_calls and call_ids:
        raise _Refused("name call ids or pass --all, not both", EXIT_USAGE)
    if all_calls:
        return waiting
    if not call_ids:
        ids = ", ".join(c.call_id for c in waiting)
        raise _Refused(
            f"run {run.run_id} waits on {len(waiting)} call(s) ({ids}): name them, or pass --all", EXIT_USAGE
        )
    by_id = {c.call_id: c for c in waiting}
    unknown = [c for c in call_ids if c not in by_id]
    if unknown:
        ids = ", ".join(by_id) or "none"
        raise _Refused(
            f"run {run.run_id}: {', '.join(unknown)} not pending (the pause may have moved on); pending: {ids}",
            EXIT_REFUSED,
        )
    return [by_id[c] for c in dict.fromkeys(call_ids)]


def _decide(
    db: str | None,
    run_id: str,
    pause_id: str | None,
    decide: Callable[[RunDetail], dict[str, ResumeDecision]],
    message: str | None,
) -> tuple[RunDetail, dict[str, ResumeDecision]]:
    async def action(store: RunStore) -> tuple[RunDetail, dict[str, ResumeDecision]]:
        run = await store.get_run(run_id)
        if run.status != "paused":
            # The store tells a pause already decided (a second approval) from a run that is not paused at all.
            await store.approve(run_id, {}, pause_id=pause_id)
            raise _Refused(f"run {run_id} is {run.status}, not paused: there is nothing to decide", EXIT_REFUSED)
        if pause_id is not None and run.pause_id != pause_id:
            await store.approve(run_id, {}, pause_id=pause_id)  # the store tells a decided pause from a wrong one
            raise StaleDecision(f"run {run_id}: --pause {pause_id} is not the current pause ({run.pause_id})")
        decisions = decide(run)
        # The pause id read here goes with the decision: if the run moved on in between, the store refuses it.
        await store.approve(run_id, decisions, pause_id=run.pause_id, messages=message)
        return run, decisions

    return _with_store(db, action)


def _rest(run: RunDetail, named: Sequence[PendingCall], other: str | None, reason: str) -> dict[str, ResumeDecision]:
    """The decisions for the pending calls a command did not name (``--others``)."""
    ids = {c.call_id for c in named}
    rest = [c for c in run.pending if c.state in DECIDABLE and c.call_id not in ids]
    if not rest:
        return {}
    if other is None:
        names = ", ".join(c.call_id for c in rest)
        raise _Refused(
            f"run {run.run_id}: {names} also wait(s) for a decision; a pause is decided whole: name them too, "
            "or pass --others approve|deny",
            EXIT_USAGE,
        )
    return {c.call_id: Approve() if other == "approve" else Reject(reason) for c in rest}


def _report(run: RunDetail, decisions: Mapping[str, ResumeDecision], output: str) -> None:
    if output == "json":
        _print_json(
            {
                "run_id": run.run_id,
                "pause_id": run.pause_id,
                "decisions": {k: _decision_json(v) for k, v in decisions.items()},
                "status": "queued",
            }
        )
        return
    console = _err()
    for call_id, decision in decisions.items():
        console.print(f"{call_id}: {_decision_json(decision)['decision']}", markup=False)
    console.print(f"run {run.run_id}: decision recorded; a worker continues it (hookloop worker)", markup=False)


def _decision_json(decision: ResumeDecision) -> dict[str, object]:
    if isinstance(decision, Reject):
        return {"decision": "deny", "reason": decision.reason}
    if isinstance(decision, AllowAlways):
        return {"decision": "allow_always", "rule": decision.rule}
    edited = decision.updated_input is not None
    return {
        "decision": "approve",
        **({"updated_input": json.loads(json.dumps(decision.updated_input, default=_thawed))} if edited else {}),
    }


def _edited_input(text: str) -> dict[str, object]:
    source = text
    if text.startswith("@"):
        try:
            source = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise _Refused(f"--input {text}: cannot read: {exc.strerror or exc}", EXIT_USAGE) from None
    try:
        value = json.loads(source)
    except ValueError as exc:
        raise _Refused(f"--input: not JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(value, dict):
        raise _Refused(
            f"--input: expected a JSON object (the tool's arguments), got {type(value).__name__}", EXIT_USAGE
        )
    return value


@runs_app.command()
def approve(
    run_id: str = typer.Argument(..., help="The paused run."),
    call_ids: list[str] = typer.Argument(None, help="The pending calls to approve (hookloop runs show lists them)."),
    all_calls: bool = typer.Option(False, "--all", help="Approve every pending call."),
    always: bool = typer.Option(
        False,
        "--always",
        help="Allow always: also add an allow rule for the rest of the run — --rule, else the narrowest rule "
        "covering each call, worked out where the run continues (none for a compound command: it runs once).",
    ),
    rule: str | None = typer.Option(None, "--rule", help="With --always: the allow rule to add instead."),
    edited: str | None = typer.Option(
        None, "--input", help="Run the one named call with these arguments instead (a JSON object, or @FILE)."
    ),
    others: str | None = typer.Option(None, "--others", help="approve or deny the pending calls not named."),
    reason: str = typer.Option(
        "denied with hookloop runs approve --others deny", "--reason", help="With --others deny."
    ),
    message: str | None = typer.Option(None, "--message", help="Also add this user message before continuing."),
    pause_id: str | None = typer.Option(None, "--pause", help="Refuse unless this is still the run's current pause."),
    output: str = typer.Option("text", "--format", help="text or json."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Approve pending calls of a paused run; a worker process (hookloop worker) then continues it.

    Every call is checked against the permission rules again when the run continues. Approving a pause that was
    already decided, or calls that are no longer pending, is refused (exit 1).
    """
    _check_format(output, ("text", "json"))
    if others not in (None, "approve", "deny"):
        raise _fail(f"--others {others!r}: expected approve or deny", EXIT_USAGE)
    if rule is not None and not always:
        raise _fail("--rule goes with --always", EXIT_USAGE)
    if edited is not None and always:
        raise _fail("--input and --always cannot be used together (an edited call is approved once)", EXIT_USAGE)
    new_input = None
    if edited is not None:
        try:
            new_input = _edited_input(edited)
        except _Refused as exc:
            raise _fail(str(exc), exc.code) from None

    def decide(run: RunDetail) -> dict[str, ResumeDecision]:
        named = _chosen(run, call_ids or [], all_calls, "approve")
        if new_input is not None and len(named) != 1:
            raise _Refused("--input edits one call: name exactly one call id", EXIT_USAGE)
        decisions: dict[str, ResumeDecision] = {}
        for call in named:
            if new_input is not None:
                decisions[call.call_id] = Approve(updated_input=new_input)
            elif always:
                decisions[call.call_id] = AllowAlways(rule)
            else:
                decisions[call.call_id] = Approve()
        decisions.update(_rest(run, named, others, reason))
        return decisions

    run, decisions = _decide(db, run_id, pause_id, decide, message)
    _report(run, decisions, output)


@runs_app.command()
def deny(
    run_id: str = typer.Argument(..., help="The paused run."),
    call_ids: list[str] = typer.Argument(None, help="The pending calls to deny."),
    all_calls: bool = typer.Option(False, "--all", help="Deny every pending call."),
    reason: str = typer.Option("denied with hookloop runs deny", "--reason", help="Why: the model reads it."),
    others: str | None = typer.Option(None, "--others", help="approve or deny the pending calls not named."),
    message: str | None = typer.Option(None, "--message", help="Also add this user message before continuing."),
    pause_id: str | None = typer.Option(None, "--pause", help="Refuse unless this is still the run's current pause."),
    output: str = typer.Option("text", "--format", help="text or json."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Deny pending calls of a paused run (each gets an error result with the reason); the run then continues."""
    _check_format(output, ("text", "json"))
    if others not in (None, "approve", "deny"):
        raise _fail(f"--others {others!r}: expected approve or deny", EXIT_USAGE)

    def decide(run: RunDetail) -> dict[str, ResumeDecision]:
        named = _chosen(run, call_ids or [], all_calls, "deny")
        decisions: dict[str, ResumeDecision] = {c.call_id: Reject(reason) for c in named}
        decisions.update(_rest(run, named, others, reason))
        return decisions

    run, decisions = _decide(db, run_id, pause_id, decide, message)
    _report(run, decisions, output)


@runs_app.command()
def cancel(
    run_id: str = typer.Argument(..., help="The run to cancel."),
    output: str = typer.Option("text", "--format", help="text or json."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Cancel a run from any process: queued or paused, it ends at once; running, it stops where it runs."""
    _check_format(output, ("text", "json"))

    async def action(store: RunStore) -> tuple[RunStatus, RunStatus]:
        before = (await store.get_run(run_id)).status
        if before in ("finished", "failed", "cancelled"):
            return before, before
        await store.cancel(run_id)
        return before, (await store.get_run(run_id)).status

    before, after = _with_store(db, action)
    ended = before in ("finished", "failed", "cancelled")
    if output == "json":
        _print_json({"run_id": run_id, "status": after, "was": before, "cancelled": not ended})
    elif ended:
        _err().print(f"run {run_id} already ended ({before}): nothing to cancel", markup=False)
    elif after == "cancelled":
        _err().print(f"run {run_id}: cancelled (it was {before})", markup=False)
    else:
        _err().print(f"run {run_id}: cancel requested; the worker executing it stops it (now {after})", markup=False)


@runs_app.command()
def resume(
    run_id: str = typer.Argument(..., help="A run that ended (finished, failed or cancelled)."),
    message: str = typer.Option(..., "--message", "-m", help="The new prompt the run continues with."),
    output: str = typer.Option("text", "--format", help="text or json."),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Continue a run that ended with a new prompt, on its own history; a worker process executes it.

    A paused run is continued by deciding its calls (approve / deny), not with resume.
    """
    _check_format(output, ("text", "json"))

    async def action(store: RunStore) -> None:
        run = await store.get_run(run_id)
        if run.status == "paused":
            raise _Refused(
                f"run {run_id} is paused: decide its pending calls (hookloop runs approve|deny {run_id} …)",
                EXIT_REFUSED,
            )
        if run.status in ("queued", "running"):
            raise _Refused(f"run {run_id} is {run.status}: wait for it to end before continuing it", EXIT_REFUSED)
        if not isinstance(store, _Continuable):
            raise _Refused("this run store cannot continue runs", EXIT_USAGE)
        await store.continue_run(run_id, message)

    _with_store(db, action)
    if output == "json":
        _print_json({"run_id": run_id, "status": "queued"})
    else:
        _err().print(f"run {run_id}: continuing; a worker executes it (hookloop worker)", markup=False)


def worker(
    url: str | None = typer.Argument(
        None, metavar="URL", help="The run database (default: $HOOKLOOP_DURABLE_URL, else HOOKLOOP_HOME)."
    ),
) -> None:
    """Execute queued durable runs (and recover crashed ones) until stopped; Ctrl-C or SIGTERM stops cleanly.

    Start as many as you like, on any machine attached to the same database (PostgreSQL for several machines);
    each run is executed by one of them. API keys come from this process's environment.
    """
    from hookloop.cli._durable import serve_worker

    raise typer.Exit(serve_worker(url))
