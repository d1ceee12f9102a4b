"""The inbox's ASGI application (Starlette): runs, one run's timeline with live updates (server-sent events),
pending approvals, and the decisions — all through a :class:`~hookloop.durable.RunStore`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any, get_args
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hookloop.checkpoint import AllowAlways, Approve, PendingCall, Reject, ResumeDecision
from hookloop.durable import PauseConsumed, RunDetail, RunNotFound, RunStatus, RunStore, StaleDecision
from hookloop.serve._security import Guard, GuardMiddleware, SecretFilter
from hookloop.serve._views import age, allow_always_rule, cost, rows

__all__ = ["create_app"]

HERE = Path(__file__).parent
STATUSES: tuple[str, ...] = get_args(RunStatus)
LIVE = ("queued", "running")
MAX_FORM_BYTES = 1024 * 1024


class BadDecision(ValueError):
    """The form asked for something that cannot be (a bad JSON input, an unknown action): 400."""


def create_app(store: RunStore, *, token: str, allowed_hosts: Iterable[str] | None = None) -> Starlette:
    """The inbox over ``store``. Every request needs ``token`` (``?token=`` once, then a cookie, or an
    ``Authorization: Bearer`` header); every form carries a CSRF token; ``allowed_hosts`` (when given) are the
    only ``Host`` names served (against DNS rebinding)."""
    guard = Guard(token, allowed_hosts=allowed_hosts)
    secrets = SecretFilter([token])

    def finalize(value: object) -> object:
        if isinstance(value, str) and not isinstance(value, Markup):
            return secrets(value)
        return value

    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=finalize,
    )
    env.filters["tojson_pretty"] = _pretty
    env.filters["segment"] = lambda value: quote(str(value), safe="")  # a run id inside a URL path
    env.globals.update(csrf=guard.csrf, age=age, cost=cost, statuses=STATUSES, rule_for=allow_always_rule)

    def page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(**context), status_code=status_code)

    def error(message: str, status_code: int) -> HTMLResponse:
        return page("error.html", status_code, message=message, code=status_code)

    async def index(request: Request) -> Response:
        return RedirectResponse("/runs", status_code=303)

    async def runs(request: Request) -> Response:
        status = request.query_params.get("status") or None
        if status is not None and status not in STATUSES:
            return error(f"unknown status {status!r}: expected one of {', '.join(STATUSES)}", 400)
        records = await store.list_runs(status=status)  # type: ignore[arg-type]
        partial = request.headers.get("hx-request") == "true"
        return page("runs_table.html" if partial else "runs.html", runs=records, status=status)

    async def approvals(request: Request) -> Response:
        paused = await store.list_runs(status="paused")
        return page("approvals.html", runs=[r for r in paused if r.pending])

    async def run(request: Request) -> Response:
        try:
            detail = await store.get_run(request.path_params["run_id"])
        except RunNotFound as exc:
            return error(str(exc), 404)
        except StaleDecision as exc:
            return error(str(exc), 409)
        notice = {"approved": "Decision recorded: the run continues.", "cancelled": "Cancel requested."}.get(
            request.query_params.get("done", "")
        )
        return page("run.html", run=detail, rows=rows(detail.events), after=len(detail.events), notice=notice)

    async def events(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            after = max(0, int(request.query_params.get("after", "0")))
            await store.get_run(run_id)
        except ValueError:
            return error("after: expected a number", 400)
        except RunNotFound as exc:
            return error(str(exc), 404)
        return StreamingResponse(
            _stream(request, store, run_id, after, env), media_type="text/event-stream", headers=HEADERS_SSE
        )

    async def decide(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        form, detail, failed = await _checked(request, guard, store, run_id)
        if failed is not None:
            return failed
        assert detail is not None
        try:
            if form.get("action") == "continue":
                decisions: dict[str, ResumeDecision] = {}
                messages = str(form.get("message") or "").strip() or None
                if detail.pending:
                    raise BadDecision("this pause has calls waiting for a decision; decide them first")
            else:
                decisions, messages = _decisions(form, detail), None
            await store.approve(run_id, decisions, pause_id=str(form.get("pause_id") or ""), messages=messages)
        except BadDecision as exc:
            return _again(page, detail, str(exc), 400)
        except PauseConsumed as exc:
            return _again(page, detail, f"refused: {exc}", 409)
        except StaleDecision as exc:
            return _again(page, detail, f"refused: {exc}", 409)
        except RunNotFound as exc:
            return error(str(exc), 404)
        return RedirectResponse(f"/runs/{quote(run_id, safe='')}?done=approved", status_code=303)

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        _, _, failed = await _checked(request, guard, store, run_id)
        if failed is not None:
            return failed
        try:
            await store.cancel(run_id)
        except RunNotFound as exc:
            return error(str(exc), 404)
        return RedirectResponse(f"/runs/{quote(run_id, safe='')}?done=cancelled", status_code=303)

    async def not_found(request: Request, exc: Exception) -> Response:
        return error("no such page", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error("method not allowed", 405)

    routes = [
        Route("/", index),
        Route("/runs", runs),
        Route("/approvals", approvals),
        Route("/runs/{run_id}", run),
        Route("/runs/{run_id}/events", events),
        Route("/runs/{run_id}/decide", decide, methods=["POST"]),
        Route("/runs/{run_id}/cancel", cancel, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(GuardMiddleware, guard=guard)],
        exception_handlers={404: not_found, 405: not_allowed},
    )


def _pretty(value: object) -> str:
    from hookloop._frozen import thaw_object

    plain = thaw_object(value) if isinstance(value, Mapping) else value
    return json.dumps(plain, ensure_ascii=False, indent=2, default=str)


HEADERS_SSE = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


async def _checked(
    request: Request, guard: Guard, store: RunStore, run_id: str
) -> tuple[Mapping[str, Any], RunDetail | None, Response | None]:
    """The form (CSRF checked) and the run; or the refusal to send."""

    def refuse(message: str, code: int) -> tuple[Mapping[str, Any], None, Response]:
        return {}, None, HTMLResponse(f"<!doctype html><title>refused</title><h1>{code}</h1><p>{message}</p>", code)

    if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
        return refuse("the form is too large", 413)
    try:
        form = await request.form(max_files=0, max_fields=1000, max_part_size=MAX_FORM_BYTES)
    except Exception:  # malformed body: starlette raises its own errors
        return refuse("the form could not be read", 400)
    if not guard.csrf_ok(form.get("csrf")):
        return refuse("the form's CSRF token is missing or wrong (reload the page)", 403)
    values = {k: v for k, v in form.multi_items() if isinstance(v, str)}
    try:
        detail = await store.get_run(run_id)
    except RunNotFound:
        return refuse("no such run", 404)
    except StaleDecision as exc:
        return refuse(Markup.escape(str(exc)), 409)
    return values, detail, None


def _decisions(form: Mapping[str, Any], detail: RunDetail) -> dict[str, ResumeDecision]:
    """One decision per pending call from the form's ``action:<call id>`` (approve, always, deny, edit),
    ``reason:<call id>`` and ``input:<call id>`` fields."""
    if detail.status != "paused":
        raise PauseConsumed(f"run {detail.run_id} is {detail.status}: no pause waits (it was already decided)")
    out: dict[str, ResumeDecision] = {}
    for call in detail.pending:
        action = form.get(f"action:{call.call_id}")
        if action is None:
            raise BadDecision(f"{call.tool_name} ({call.call_id}): choose approve, allow always, deny or edit")
        out[call.call_id] = _decision(call, str(action), form, detail.workspace)
    return out


def _decision(call: PendingCall, action: str, form: Mapping[str, Any], workspace: str | None) -> ResumeDecision:
    reason = str(form.get(f"reason:{call.call_id}") or "").strip()
    if action == "approve":
        return Approve()
    if action == "always":
        rule = allow_always_rule(call, workspace)
        if rule is None:
            raise BadDecision(f"{call.tool_name}: no narrow rule covers this call; approve it once instead")
        return AllowAlways(rule)
    if action == "deny":
        return Reject(reason or "denied in the inbox")
    if action == "edit":
        text = str(form.get(f"input:{call.call_id}") or "")
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise BadDecision(f"the edited input of {call.tool_name} is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise BadDecision(f"the edited input of {call.tool_name} must be a JSON object")
        return Approve(updated_input=value)
    raise BadDecision(f"unknown action {action!r}")


def _again(page: Any, detail: RunDetail, message: str, code: int) -> Response:
    response: Response = page(
        "run.html", code, run=detail, rows=rows(detail.events), after=len(detail.events), failure=message
    )
    return response


def _sse(event: str, data: str) -> str:
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {event}\n{lines}\n"


async def _stream(request: Request, store: RunStore, run_id: str, after: int, env: Environment) -> AsyncIterator[str]:
    """New timeline rows (rendered and escaped) while the run goes on, then ``end`` with its status."""
    template = env.get_template("rows.html")
    wait = getattr(store, "wait_changed", None)
    while True:
        try:
            detail = await store.get_run(run_id)
        except RunNotFound:
            yield _sse("end", "gone")
            return
        if len(detail.events) > after:
            yield _sse("rows", template.render(rows=rows(detail.events[after:])))
            after = len(detail.events)
        if detail.status not in LIVE:
            yield _sse("end", detail.status)
            return
        if await request.is_disconnected():
            return
        if wait is not None:
            await wait(run_id, 1.0)  # woken at once by a new event; at worst a second late
        else:
            await asyncio.sleep(1.0)  # a store without change notification is polled
        yield ": keep-alive\n\n"
