"""The text renderer of ``hookloop run`` / ``resume`` / ``demo``: the model's words on stdout, everything else
(tool calls, hook decisions, calls that did not run, spinners) on stderr.

Both streams usually share one terminal, and a spinner redraws its line with ``\\r`` + erase-line. So the
renderer keeps one rule: **the model's text line is closed (a newline) before anything else is drawn** — a
spinner, a tool line, a hook line, an approval prompt — and a spinner is stopped before the model's text goes
on. The model's last line is therefore never erased, and an answer always ends with a newline.

Spinners: "waiting for <model>" from the model request's start until its first text (and while the model is
thinking or writing a tool call), "running <tool or hook>" while tools and command hooks run; the elapsed
seconds tick. On a stderr that is not a terminal no spinner is drawn at all.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.spinner import Spinner
from rich.text import Text as RichText

from hookloop._frozen import FrozenDict, dumps
from hookloop.cli._agents import SUBAGENT_EVENTS, render_subagent
from hookloop.items import ToolCall, ToolResult
from hookloop.stream import TextDelta, ThinkingDelta, ToolCallDelta
from hookloop.timeline import (
    HookDecision,
    HookOutputLine,
    HookStarted,
    ItemAppended,
    ModelRequestEnded,
    ModelRequestStarted,
    RunEnded,
    TimelineEvent,
    ToolEnded,
    ToolStarted,
)

__all__ = ["TextRenderer"]

_RED = frozenset({"Deny", "Abort", "Cancel", "HookFailed", "HookError", "Reject"})


class TextRenderer:
    """A timeline subscriber that draws a run for a person (see the module docstring).

    ``out`` receives the model's text, ``err`` everything else; they may be the same console (the demo).
    :meth:`pause` closes the text line and stops the spinner (before a prompt); the spinner comes back with
    the next event that needs it.
    """

    def __init__(self, out: Console, err: Console) -> None:
        self.out, self.err = out, err
        self.live: Live | None = None
        self.spinner = Spinner("dots", text="")
        self.running: dict[str, tuple[str, float]] = {}
        self.waiting: tuple[str, float] | None = None
        """What the model is doing while no text streams ("waiting for …", "thinking", …) and since when."""
        self.model = "the model"
        self.in_text = False
        """The model's text was written and its line not closed yet."""
        self.calls: dict[str, tuple[str, FrozenDict | None]] = {}
        self.started: set[str] = set()
        self.hook_stderr: dict[str, list[str]] = {}
        """The stderr lines each hook showed since its last decision (a failure's reason quotes the first)."""

    # -- the two rules: close the text line; never draw text under a spinner --------------------------------
    def _end_text(self) -> None:
        if self.in_text:
            self.stop_spinner()
            self.out.print()
            self.in_text = False

    def _label(self) -> str:
        # Called from the spinner's refresh thread too: read each shared field once (a C-level copy).
        running = tuple(self.running.values())
        waiting = self.waiting
        if running:
            names = ", ".join(dict.fromkeys(name for name, _ in running))
            started = min(t for _, t in running)
            return f"running {names} ({time.monotonic() - started:.1f}s)"
        if waiting is None:
            return ""
        what, since = waiting
        return f"{what} ({time.monotonic() - since:.1f}s)"

    def _frame(self) -> RenderableType:
        self.spinner.update(text=self._label())
        return self.spinner

    def _refresh(self) -> None:
        if not (self.running or self.waiting):
            self.stop_spinner()
            return
        if self.live is None:
            self._end_text()
            self.live = Live(
                console=self.err,
                get_renderable=self._frame,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                refresh_per_second=12.5,
            )
            self.live.start(refresh=True)
        else:
            self.live.refresh()

    def stop_spinner(self) -> None:
        """Erase the spinner line (the cursor stays at its start)."""
        if self.live is not None:
            live, self.live = self.live, None
            live.stop()

    def pause(self) -> None:
        """Before asking the person something: the text line closed, no spinner."""
        self._end_text()
        self.stop_spinner()

    def _say(self, message: str | RichText, **options: object) -> None:
        """A line on stderr, below the model's (closed) text line."""
        self._end_text()
        self.err.print(message, highlight=False, **options)  # type: ignore[arg-type]

    # -- events ---------------------------------------------------------------------------------------------
    def __call__(self, event: TimelineEvent) -> None:
        if isinstance(event, SUBAGENT_EVENTS):  # nested progress (hookloop.cli._agents)
            self.stop_spinner()
            render_subagent(self, event)
        elif isinstance(event, TextDelta):
            if self.waiting is not None:
                self.waiting = None
            self.stop_spinner()
            if event.text:
                self.out.print(event.text, end="", markup=False, highlight=False, emoji=False, soft_wrap=True)
                self.in_text = not event.text.endswith("\n")
        elif isinstance(event, ModelRequestStarted):
            self.model = event.model or event.provider or "the model"
            self.waiting = (f"waiting for {self.model}", time.monotonic())
            self._refresh()
        elif isinstance(event, ThinkingDelta):
            if self.waiting is not None and not self.waiting[0].startswith(f"{self.model} is thinking"):
                self.waiting = (f"{self.model} is thinking", self.waiting[1])
                self._refresh()
        elif isinstance(event, ToolCallDelta):
            if self.waiting is None or not self.waiting[0].endswith("tool call"):
                self.waiting = (f"{self.model} is writing a tool call", time.monotonic())
                self._refresh()
        elif isinstance(event, ModelRequestEnded):
            self.waiting = None
            self._refresh()
        elif isinstance(event, ItemAppended):
            self._item(event)
        elif isinstance(event, ToolStarted):
            self.started.add(event.call_id)
            args = dumps(event.arguments, ensure_ascii=False)
            self._say(f"[yellow]●[/] {escape(event.tool_name)} {escape(args[:200])}")
            self.running[event.call_id] = (event.tool_name, time.monotonic())
            self._refresh()
        elif isinstance(event, ToolEnded):
            self.running.pop(event.call_id, None)
            self._refresh()
            mark = "[red]error[/]" if event.is_error else "[green]ok[/]"
            self._say(f"  └ {escape(event.tool_name)} {mark} ({event.seconds:.2f}s)")
        elif isinstance(event, HookStarted):
            self.running[f"hook:{event.hook}:{event.call_id}"] = (Path(event.hook.split()[0]).name, time.monotonic())
            self._refresh()
        elif isinstance(event, HookDecision):
            self._decision(event)
        elif isinstance(event, HookOutputLine):
            if event.stream == "stderr":
                self.hook_stderr.setdefault(event.hook, []).append(event.line.strip())
                self._say(RichText(f"  {event.hook} │ {event.line}", style="dim"))
        elif isinstance(event, RunEnded):
            self.running.clear()
            self.waiting = None
            self._end_text()
            self.stop_spinner()

    def _item(self, event: ItemAppended) -> None:
        item = event.item
        if isinstance(item, ToolCall):
            self.calls[item.call_id] = (item.name, item.arguments)
        elif isinstance(item, ToolResult) and item.call_id not in self.started:
            # A call that never ran (denied by a rule, a hook or the person; unknown tool; bad arguments):
            # no ToolStarted announced it, so show it here, with why.
            name, arguments = self.calls.get(item.call_id, (item.name, None))
            args = "" if arguments is None else " " + dumps(arguments, ensure_ascii=False)[:200]
            why = item.content.strip().splitlines()[0] if item.content.strip() else "no reason given"
            self._say(f"[red]✗[/] {escape(name + args)} [red]not run[/]: {escape(why[:300])}")

    def _decision(self, event: HookDecision) -> None:
        if self.running.pop(f"hook:{event.hook}:{event.call_id}", None) is not None:
            self._refresh()
        if event.decision in ("Continue", "Finish") and event.reason is None:
            return
        if event.source == "command hooks":
            return  # the command-hook bridge reports each script itself; this is their merged answer
        colour = "red" if event.decision in _RED else "magenta"
        text = event.reason or ""
        shown = self.hook_stderr.pop(event.hook, [])
        if event.decision == "HookFailed" and shown and text.endswith(f": {shown[0]}"):
            text = text[: -len(shown[0]) - 2]  # its stderr is on the screen just above
        reason = f": {escape(text)}" if text else ""
        self._say(
            f"  [{colour}]hook[/] {escape(event.hook)} [dim]({escape(event.source)})[/] on {event.event} → "
            f"[{colour}]{event.decision}[/]{reason} [dim]{event.seconds * 1000:.0f} ms[/]"
        )
