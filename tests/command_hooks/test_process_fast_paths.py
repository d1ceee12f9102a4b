"""The fast paths of hook processes and of the bridge give what the general paths give: one deadline timer per
process (an earlier deadline set later still times out first, alone), both ways of starting a process, the
answer-line parser against ``json.loads``, the bridge's remembered selections and decisions against computing
them afresh, and ``hookloop.hookserver``'s answer lines. Real processes where a process is involved."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookloop import ScriptedClient, Worker, _spawn, tool
from hookloop.command_hooks._firing import Firing
from hookloop.command_hooks.config import HookConfig
from hookloop.command_hooks.model import (
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    HookOutcome,
    HookSource,
    ProcessHandler,
)
from hookloop.command_hooks.processes import ProcessPool, _parse_answer
from hookloop.command_hooks.runner import RunnerOptions, run_all
from hookloop.command_hooks.translate import translate_outcome
from hookloop.hookserver import Answer, serve

pytestmark = pytest.mark.anyio

HOLDER = """
import asyncio, os, sys
from hookloop.hookserver import serve

fifo = sys.argv[1]
held = []

async def handle(event, data):
    command = data["tool_input"]["command"]
    if command == "hold":
        release = asyncio.get_running_loop().create_future()
        held.append(release)
        with open(fifo, "w") as f:  # the test reads it: the request is here and held
            f.write(str(len(held)))
        await release
        return {"held": True}
    if command == "release":
        for release in held:
            if not release.done():
                release.set_result(None)
        return {"released": len(held)}
    if command == "crash":
        os._exit(5)
    return {"pid": os.getpid()}

serve(handle)
"""


class Holder:
    """One hook process, reached by hooks with different timeouts (the same command line: the same process)."""

    def __init__(self, root: Path) -> None:
        self.project = root / "project"
        self.project.mkdir()
        self.script = root / "holder.py"
        self.script.write_text(HOLDER)
        self.fifo = root / "fifo"
        os.mkfifo(self.fifo)
        self.pool = ProcessPool(output_cap=1 << 20, kill_grace=0.5)
        self.options = RunnerOptions(processes=self.pool, kill_grace=0.5)

    def hook(self, timeout: float, place: int) -> ConfiguredHook:
        handler = ProcessHandler(command=sys.executable, args=(str(self.script), str(self.fifo)), timeout=timeout)
        source = HookSource(kind="hookloop-project", path=str(self.project / ".hookloop/settings.json"))
        return ConfiguredHook(event="PreToolUse", matcher=None, handler=handler, source=source, json_path=str(place))

    async def fire(self, hook: ConfiguredHook, command: str) -> HookOutcome:
        payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}
        [outcome] = await run_all([hook], payload, project_dir=self.project, options=self.options)
        return outcome

    async def held(self) -> str:
        return await asyncio.to_thread(self.fifo.read_text)


@pytest.fixture
async def holder(tmp_path: Path):  # type: ignore[no-untyped-def]
    h = Holder(tmp_path)
    yield h
    await h.pool.close()


async def test_a_later_firing_with_an_earlier_deadline_times_out_first_and_alone(
    holder: Holder, caplog: pytest.LogCaptureFixture
) -> None:
    long, short = holder.hook(30, 0), holder.hook(0.5, 1)
    first = await holder.fire(long, "ls")
    assert first.ok
    assert len(holder.pool.processes) == 1  # one command line: one process for both hooks
    waiting = asyncio.create_task(holder.fire(long, "hold"))
    assert await holder.held() == "1"
    timed_out = await holder.fire(short, "hold")  # its deadline is before the long firing's: it expires first
    assert await holder.held() == "2"
    assert timed_out.error_kind == "timeout"
    assert "did not answer within 0.5 seconds" in (timed_out.error or "")
    assert not waiting.done()
    again = await holder.fire(short, "hold")  # the timer is set again for a new earliest deadline
    assert await holder.held() == "3"
    assert again.error_kind == "timeout"
    assert not waiting.done()
    with caplog.at_level(logging.INFO, logger="hookloop.command_hooks.processes"):
        released = await holder.fire(long, "release")
        answered = await waiting
        assert (await holder.fire(long, "ls")).ok  # answered after the two late answers, which were read first
    assert json.loads(released.stdout) == {"released": 3}
    assert answered.ok
    assert json.loads(answered.stdout) == {"held": True}
    assert sum("which no firing waits for; dropped" in r.getMessage() for r in caplog.records) == 2
    assert [p.starts for p in holder.pool.processes.values()] == [1]


async def test_a_crash_fails_every_firing_waiting_and_leaves_no_timer_behind(holder: Holder) -> None:
    hook = holder.hook(30, 0)
    await holder.fire(hook, "ls")
    [process] = holder.pool.processes.values()
    waiting = asyncio.create_task(holder.fire(hook, "hold"))
    assert await holder.held() == "1"
    crashed = await holder.fire(hook, "crash")
    held = await waiting
    assert crashed.error_kind == held.error_kind == "crashed"
    assert "exited with status 5" in (held.error or "")
    assert process.pending == {}
    await holder.pool.close()
    assert process._timer is None  # nothing left to time out: the deadline timer was cancelled


@pytest.fixture(params=["default", "asyncio"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``default``: the pidfd spawn where the system allows it; ``asyncio``: asyncio's machinery, as without."""
    if request.param == "asyncio":
        monkeypatch.setattr(_spawn, "_PIDFD", False)
    return str(request.param)


async def test_both_ways_of_starting_a_process_answer_restart_and_kill_alike(spawn_path: str, holder: Holder) -> None:
    hook = holder.hook(30, 0)
    one = await holder.fire(hook, "ls")
    two = await holder.fire(hook, "ls")
    pid = json.loads(one.stdout)["pid"]
    assert one.ok
    assert two.ok
    assert json.loads(two.stdout)["pid"] == pid == one.pid
    crashed = await holder.fire(hook, "crash")
    assert crashed.error_kind == "crashed"
    restarted = await holder.fire(hook, "ls")
    new_pid = json.loads(restarted.stdout)["pid"]
    assert new_pid != pid
    waiting = asyncio.create_task(holder.fire(hook, "hold"))
    assert await holder.held() == "1"
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    with pytest.raises(ProcessLookupError):
        os.kill(new_pid, 0)  # killed with the firing that was cancelled, and reaped


# -- the answer-line parser -------------------------------------------------------------------------------


def reference_parse(raw: bytes | bytearray) -> tuple[str, int, bytes, bytes] | str:
    """The answer rule written plainly with ``json.loads`` (what the parser must agree with)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return f"not JSON: {raw[:60]!r}"
    if not isinstance(data, dict) or not isinstance(data.get("id"), (str, int)) or isinstance(data["id"], bool):
        return 'expected an object with an "id"'
    exit_code = data.get("exit_code", 0)
    if isinstance(exit_code, bool) or not isinstance(exit_code, int):
        return '"exit_code" must be an integer'
    stdout = data.get("stdout", "")
    if isinstance(stdout, (dict, list)):
        stdout = json.dumps(stdout)
    stderr = data.get("stderr", "")
    if not isinstance(stdout, str) or not isinstance(stderr, str):
        return '"stdout" and "stderr" must be text (stdout may be a JSON object)'
    return str(data["id"]), exit_code, stdout.encode(), stderr.encode()


scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.just(1.5), st.sampled_from(["", "7", "é\n"]))
values = scalars | st.lists(scalars, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), scalars, max_size=2)
answers = st.dictionaries(st.sampled_from(["id", "exit_code", "stdout", "stderr", "extra"]), values, max_size=5)


@settings(max_examples=200, deadline=None)
@given(answer=answers, ascii_only=st.booleans(), prefix=st.sampled_from([b"", b" ", b"\xef\xbb\xbf", b"\xff"]))
def test_the_answer_parser_agrees_with_json_loads(answer: dict[str, Any], ascii_only: bool, prefix: bytes) -> None:
    raw = prefix + json.dumps(answer, ensure_ascii=ascii_only).encode()
    assert _parse_answer(raw) == reference_parse(raw)
    assert _parse_answer(bytearray(raw + b"\r")) == reference_parse(bytearray(raw + b"\r"))
    for tail in (b" \t ", b" x", b"}", b"\xc2\xa0"):  # whitespace, text, a brace, a no-break space after it
        assert _parse_answer(raw + tail) == reference_parse(raw + tail)


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=40))
def test_the_answer_parser_agrees_with_json_loads_on_any_bytes(raw: bytes) -> None:
    assert _parse_answer(raw) == reference_parse(raw)
    assert _parse_answer(b"{" + raw) == reference_parse(b"{" + raw)


# -- the bridge's memos ---------------------------------------------------------------------------------------


def firing(hooks: tuple[ConfiguredHook, ...], project: Path) -> Firing:
    @tool(name="Bash")
    async def bash(command: str) -> str:
        """Unused: only its metadata is needed."""
        return command

    worker = Worker(ScriptedClient([]), tools=[bash], session_id="s")
    return Firing(
        worker, HookConfig(hooks=hooks), project_dir=str(project), options=RunnerOptions(), background_grace=1
    )


SOURCE = HookSource(kind="hookloop-project", path="/p/.hookloop/settings.json")
claude = ConfiguredHook(event="PreToolUse", matcher="Bash", handler=CommandHandler(command="x"), source=SOURCE)
closed = ConfiguredHook(
    event="PreToolUse", matcher=None, handler=CommandHandler(command="y", fail_closed=True), source=SOURCE
)
cline = ConfiguredHook(event="PreToolUse", matcher=None, handler=ClineScript(path="/p/PreToolUse"), source=SOURCE)
stdouts = st.sampled_from(
    [
        b"",
        b"plain text",
        b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}',
        b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
        b'"permissionDecisionReason": "no"}}',
        b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls"}}}',
        b'{"continue": false, "stopReason": "stop"}',
        b'{"decision": "nonsense"}',
        b'{"cancel": true, "errorMessage": "cancelled"}',
        b'{"contextModification": "more"}',
        b"\xff\xfe not utf-8",
    ]
)
outcomes = st.builds(
    HookOutcome,
    name=st.just("x"),
    error_kind=st.sampled_from(["ok", "ok", "ok", "timeout", "crashed"]),
    error=st.none() | st.just("went wrong"),
    exit_code=st.sampled_from([0, 0, 1, 2, None]),
    http_status=st.sampled_from([None, None, 200, 500]),
    stdout=stdouts,
    stderr=st.sampled_from([b"", b"why\nmore", b"x" * 5000]),
    stdout_truncated=st.booleans(),
)


REMEMBERING: list[Firing] = []


@settings(max_examples=400, deadline=None)
@given(outcome=outcomes, hook=st.sampled_from([claude, closed, cline]))
def test_remembered_decisions_are_the_decisions_computed_afresh(
    tmp_path_factory: pytest.TempPathFactory, outcome: HookOutcome, hook: ConfiguredHook
) -> None:
    if not REMEMBERING:  # one installation for every example: its memo sees them all
        REMEMBERING.append(firing((claude, closed, cline), tmp_path_factory.getbasetemp()))
    f = REMEMBERING[0]
    expected = translate_outcome(hook, outcome)
    assert f.translate(hook, outcome) == expected
    assert f.translate(hook, outcome) == expected  # the second time from the memo, when remembered


def test_an_if_rule_keeps_its_selection_out_of_the_memo(tmp_path: Path) -> None:
    plain = ConfiguredHook(event="PreToolUse", matcher="Bash", handler=CommandHandler(command="a"), source=SOURCE)
    rule = ConfiguredHook(
        event="PreToolUse",
        matcher="Bash",
        handler=CommandHandler(command="b", condition="Bash(rm *)"),
        source=SOURCE,
        json_path="1",
    )
    other = ConfiguredHook(event="PreToolUse", matcher="Read", handler=CommandHandler(command="c"), source=SOURCE)
    f = firing((plain, rule, other), tmp_path)
    for _ in range(2):  # the second round from the memo where there is one
        assert f.select("PreToolUse", target="Bash", tool=("Bash", {"command": "rm -rf x"})) == (plain, rule)
        assert f.select("PreToolUse", target="Bash", tool=("Bash", {"command": "ls"})) == (plain,)
        assert f.select("PreToolUse", target="Read", tool=("Read", {"file_path": "/x"})) == (other,)
    assert list(f.selected) == [("PreToolUse", None, "Read")]


# -- hookserver ---------------------------------------------------------------------------------------------


def served(handler: Any, *requests: bytes) -> list[dict[str, Any]]:
    out = io.BytesIO()
    serve(handler, stdin=io.BytesIO(b"".join(requests)), stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_plain_hookserver_answers_every_kind_of_result() -> None:
    results: dict[int, Any] = {
        1: None,
        2: "text",
        3: {"decision": "block", "reason": "é"},
        4: Answer(exit_code=2, stderr="blocked"),
        5: Answer(stdout={"a": 1}),
    }
    lines = [b'{"id": %d, "event": "PreToolUse", "input": {"n": %d}}\n' % (n, n) for n in results]
    answers = served(lambda event, data: results[data["n"]], *lines)
    assert answers == [
        {"id": 1, "exit_code": 0, "stdout": "", "stderr": ""},
        {"id": 2, "exit_code": 0, "stdout": "text", "stderr": ""},
        {"id": 3, "exit_code": 0, "stdout": {"decision": "block", "reason": "é"}, "stderr": ""},
        {"id": 4, "exit_code": 2, "stdout": "", "stderr": "blocked"},
        {"id": 5, "exit_code": 0, "stdout": {"a": 1}, "stderr": ""},
    ]


def test_a_plain_hookserver_answers_bad_lines_and_awaitables_with_an_error_and_goes_on() -> None:
    class Late:
        def __await__(self) -> Any:
            yield None

    def handler(event: str, data: dict[str, Any]) -> Any:
        return Late() if data.get("late") else None

    answers = served(
        handler,
        b'\xef\xbb\xbf{"id": "bom", "event": "E", "input": {}}\n',
        b'{"id": "bad utf-8 \xff", "event": "E", "input": {}}\n',
        b'{"id": "late", "event": "E", "input": {"late": true}}\n',
        b'{"id": "ok", "event": "E", "input": {}}\n',
    )
    assert [a["exit_code"] for a in answers] == [0, 1, 1, 0]  # a byte-order mark is read, as json.loads does
    assert [a["id"] for a in answers] == ["bom", None, "late", "ok"]
    assert "a plain handler returned an awaitable" in answers[2]["stderr"]


class SwitchedSandbox:
    """A hook sandbox that covers every hook once switched on (a refused process handler opens no command)."""

    covering = False

    def covers_hook(self, hook: ConfiguredHook) -> bool:
        return self.covering

    def open_command(self, argv: Any, *, cwd: str, env: Any = None) -> Any:
        raise AssertionError("a process handler must not be spawned under the sandbox")


async def test_the_sandbox_check_is_made_at_every_firing_not_remembered(holder: Holder) -> None:
    hook = holder.hook(30, 0)
    sandbox = SwitchedSandbox()
    options = RunnerOptions(processes=holder.pool, kill_grace=0.5, sandbox=sandbox)
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    for _ in range(2):  # not covered: it runs (and its process is remembered for these options)
        [one, two] = await run_all([hook, hook], payload, project_dir=holder.project, options=options)
        assert one.ok
        assert two.ok
    sandbox.covering = True
    for hooks in ([hook], [hook, hook]):
        for outcome in await run_all(hooks, payload, project_dir=holder.project, options=options):
            assert outcome.error_kind == "spawn_failed"
            assert "cannot run under the hook sandbox" in (outcome.error or "")
    assert [p.starts for p in holder.pool.processes.values()] == [1]
