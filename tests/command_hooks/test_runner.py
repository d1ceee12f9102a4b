"""The runner against real processes: real scripts in tmp_path, no sleeps in the test code itself."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from hookloop.command_hooks.model import ConfiguredHook
from hookloop.command_hooks.runner import (
    OUTPUT_CAP,
    HookOutcome,
    RunnerOptions,
    StreamName,
    run_all,
    run_hook,
)
from hookloop.command_hooks.translate import CommandDecision, translate_outcome

from .conftest import FAST, WriteScript, cline_hook, command_hook, is_alive, live_group_members, pgid_of

pytestmark = pytest.mark.anyio

PAYLOAD = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def lines_of(outcome: HookOutcome) -> list[str]:
    return outcome.stdout_text.splitlines()


def assert_group_gone(pgid: int | None, *pids: int) -> None:
    assert pgid is not None
    assert live_group_members(pgid) == []
    for pid in pids:
        assert not is_alive(pid), f"process {pid} survived"


# --- input, environment, working directory ------------------------------------------------------------------


async def test_stdin_receives_the_payload_exactly(project: Path, write_script: WriteScript, tmp_path: Path) -> None:
    received = tmp_path / "stdin.json"
    script = write_script("echo-stdin", f'cat > "{received}"')
    payload = {**PAYLOAD, "prompt": 'héllo ✓ \u2028 "quoted"', "big": "x" * 300_000}
    outcome = await run_hook(command_hook(str(script)), payload, project_dir=project, options=FAST)
    assert outcome.ok
    assert outcome.exit_code == 0
    assert json.loads(received.read_bytes()) == payload
    assert received.read_bytes() == json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


async def test_hook_that_never_reads_a_large_payload_does_not_deadlock(
    project: Path, write_script: WriteScript
) -> None:
    script = write_script("no-read", "echo ignored-input")
    outcome = await run_hook(
        command_hook(str(script)), b"{" + b" " * (8 << 20) + b"}", project_dir=project, options=FAST
    )
    assert outcome.ok
    assert outcome.exit_code == 0
    assert lines_of(outcome) == ["ignored-input"]


async def test_environment_and_working_directory(project: Path, write_script: WriteScript) -> None:
    script = write_script(
        "env",
        """
        pwd -P
        echo "$CLAUDE_PROJECT_DIR"
        echo "$HOOKLOOP_PROJECT_DIR"
        echo "$EXTRA_VAR"
        if [ -t 0 ]; then echo tty; else echo no-tty; fi
        """,
    )
    outcome = await run_hook(
        command_hook(str(script)), PAYLOAD, project_dir=project, options=FAST, extra_env={"EXTRA_VAR": "extra"}
    )
    assert lines_of(outcome) == [str(project), str(project), str(project), "extra", "no-tty"]


async def test_hook_leads_its_own_session(project: Path, write_script: WriteScript) -> None:
    script = write_script("sid", "ps -o sid= -o pgid= -p $$")
    outcome = await run_hook(command_hook(str(script)), PAYLOAD, project_dir=project, options=FAST)
    sid, pgid = (int(v) for v in outcome.stdout_text.split())
    assert sid == pgid == outcome.pid  # the sh -c leader is session and group leader


async def test_exec_form_passes_arguments_without_a_shell(
    project: Path, write_script: WriteScript, tmp_path: Path
) -> None:
    script = write_script(
        "argv.py", "import sys, json; print(json.dumps(sys.argv[1:]))", shebang="#!/usr/bin/env python3"
    )
    args = ("$(touch pwned)", "a; touch pwned2", "${CLAUDE_PROJECT_DIR}/x", "$HOME")
    outcome = await run_hook(command_hook(str(script), args=args), PAYLOAD, project_dir=project, options=FAST)
    assert json.loads(outcome.stdout_text) == ["$(touch pwned)", "a; touch pwned2", f"{project}/x", "$HOME"]
    assert not (project / "pwned").exists()
    assert not (project / "pwned2").exists()


async def test_shell_form_runs_through_sh(project: Path) -> None:
    outcome = await run_hook(command_hook('echo "$CLAUDE_PROJECT_DIR" | wc -c'), PAYLOAD, project_dir=project)
    assert int(outcome.stdout_text) == len(str(project)) + 1


# --- failures ------------------------------------------------------------------------------------------------


async def test_timeout_names_the_script_and_the_timeout(project: Path, write_script: WriteScript) -> None:
    script = write_script("slow", "sleep 30")
    outcome = await run_hook(command_hook(str(script), timeout=0.3), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == "timeout"
    assert outcome.timed_out
    assert outcome.error is not None
    assert str(script) in outcome.error
    assert "0.3 s" in outcome.error
    assert outcome.timeout == 0.3
    assert_group_gone(outcome.pid)


async def test_crash_by_signal_through_the_shell(project: Path, write_script: WriteScript) -> None:
    script = write_script("segv", "echo before\nkill -SEGV $$")
    outcome = await run_hook(command_hook(str(script)), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == "crashed"
    assert outcome.signal == signal.SIGSEGV
    assert outcome.error is not None
    assert "SIGSEGV" in outcome.error
    assert str(script) in outcome.error
    assert lines_of(outcome) == ["before"]


async def test_crash_by_signal_of_a_directly_launched_script(project: Path, write_script: WriteScript) -> None:
    script = write_script("PreToolUse", "kill -SEGV $$")
    outcome = await run_hook(cline_hook(script), {"hookName": "PreToolUse"}, project_dir=project, options=FAST)
    assert outcome.error_kind == "crashed"
    assert outcome.signal == signal.SIGSEGV
    assert outcome.exit_code is None


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("/nonexistent/hook.sh", "not_found"),  # sh exits 127
        ("python3 /nonexistent/hook.py", "not_found"),  # the interpreter exits 2: not a deliberate deny
    ],
)
async def test_could_not_run_through_the_shell(project: Path, command: str, kind: str) -> None:
    outcome = await run_hook(command_hook(command), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == kind
    assert outcome.error is not None
    assert command in outcome.error


async def test_not_executable(project: Path, write_script: WriteScript) -> None:
    script = write_script("plain", "echo hi", executable=False)
    shell = await run_hook(command_hook(str(script)), PAYLOAD, project_dir=project, options=FAST)
    direct = await run_hook(command_hook(str(script), args=()), PAYLOAD, project_dir=project, options=FAST)
    assert shell.error_kind == "not_executable"
    assert shell.exit_code == 126
    assert direct.error_kind == "not_executable"
    assert direct.exit_code is None
    assert direct.error is not None
    assert str(script) in direct.error


async def test_missing_program_in_exec_form(project: Path) -> None:
    outcome = await run_hook(command_hook("/nonexistent/prog", args=("x",)), PAYLOAD, project_dir=project)
    assert outcome.error_kind == "not_found"
    assert outcome.pid is None


async def test_missing_working_directory_is_a_spawn_failure(tmp_path: Path) -> None:
    outcome = await run_hook(command_hook("true"), PAYLOAD, project_dir=tmp_path / "gone", options=FAST)
    assert outcome.error_kind == "spawn_failed"


async def test_exit_2_is_an_answer_not_a_failure(project: Path) -> None:
    outcome = await run_hook(command_hook("echo nope >&2; exit 2"), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.ok
    assert outcome.exit_code == 2
    assert outcome.stderr_text == "nope\n"


async def test_garbage_output_is_captured_as_bytes(project: Path, write_script: WriteScript) -> None:
    garbage = bytes(range(256)) * 64
    (project / "garbage.bin").write_bytes(garbage)
    outcome = await run_hook(command_hook("cat garbage.bin; cat garbage.bin >&2"), PAYLOAD, project_dir=project)
    assert outcome.ok
    assert outcome.stdout == garbage
    assert outcome.stderr == garbage
    assert "\ufffd" in outcome.stdout_text


async def test_non_utf8_lines_are_streamed_with_replacement_characters(project: Path) -> None:
    seen: list[tuple[StreamName, str]] = []
    hook = command_hook(r"printf 'caf\351\n\377\376ok\r\nlast-no-newline'")
    await run_all([hook], PAYLOAD, project_dir=project, on_line=lambda h, s, line: seen.append((s, line)))
    assert seen == [("stdout", "caf\ufffd"), ("stdout", "\ufffd\ufffdok"), ("stdout", "last-no-newline")]


async def test_utf8_split_across_reads_is_decoded_whole(project: Path, write_script: WriteScript) -> None:
    script = write_script(
        "split.py",
        """
import sys, time
out = sys.stdout.buffer
data = "é✓".encode()
out.write(data[:1]); out.flush(); time.sleep(0.05)
out.write(data[1:] + b"\\n"); out.flush()
""",
        shebang="#!/usr/bin/env python3",
    )
    seen: list[str] = []
    await run_all(
        [command_hook(str(script))], PAYLOAD, project_dir=project, on_line=lambda h, s, line: seen.append(line)
    )
    assert seen == ["é✓"]


async def test_stderr_over_the_cap_is_drained_and_truncated(project: Path) -> None:
    # A 5 MiB burst: if we stopped reading at the cap the hook would block and time out.
    hook = command_hook("head -c 5242880 /dev/zero | tr '\\0' y >&2; echo done-at-exit", timeout=20)
    outcome = await run_hook(hook, PAYLOAD, project_dir=project, options=FAST)
    assert outcome.ok
    assert outcome.exit_code == 0
    assert not outcome.timed_out
    assert outcome.stdout == b"done-at-exit\n"
    assert len(outcome.stderr) == OUTPUT_CAP
    assert outcome.stderr_truncated


BIG = 2 << 20  # 2 MiB, twice the cap
ALLOW = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'


@pytest.mark.parametrize(
    "body",
    [
        f"head -c {BIG} /dev/zero | tr '\\0' x",
        f"echo '{ALLOW}'; head -c {BIG} /dev/zero | tr '\\0' ' '",  # valid JSON first, then padding
        f"head -c {BIG} /dev/zero | tr '\\0' ' '; echo '{ALLOW}'",  # padding, then valid JSON past the cap
        f"head -c {BIG} /dev/zero | tr '\\0' x; exit 2",
    ],
    ids=["garbage", "json-first", "json-last", "exit-2"],
)
async def test_stdout_over_the_cap_is_a_loud_error_never_an_answer(
    project: Path, write_script: WriteScript, body: str
) -> None:
    script = write_script("big-answer", f"cat > /dev/null\n{body}")
    outcome = await run_hook(command_hook(str(script), timeout=20), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == "output_too_large"
    assert not outcome.ok
    assert outcome.error is not None
    assert str(script) in outcome.error
    assert "1 MiB" in outcome.error
    assert outcome.stdout_truncated
    assert len(outcome.stdout) == OUTPUT_CAP
    hook = command_hook(str(script))
    assert translate_outcome(hook, outcome) == CommandDecision(errors=(outcome.error,))  # fail-open: no decision
    closed = translate_outcome(command_hook(str(script), fail_closed=True), outcome)
    assert closed.kind == "deny"
    assert closed.reason is not None
    assert "1 MiB" in closed.reason


async def test_endless_stdout_is_stopped_at_the_cap_not_at_the_timeout(project: Path) -> None:
    seen = 0

    def count(hook: ConfiguredHook, stream: StreamName, line: str) -> None:
        nonlocal seen
        seen += 1

    outcome = (
        await run_all([command_hook("yes", timeout=600)], PAYLOAD, project_dir=project, options=FAST, on_line=count)
    )[0]
    assert outcome.error_kind == "output_too_large"
    assert not outcome.timed_out
    assert outcome.duration < 30  # the 600 s timeout never came into play
    assert len(outcome.stdout) == OUTPUT_CAP
    assert outcome.stdout_truncated
    assert seen == OUTPUT_CAP // 2  # "y\n" lines up to the cap, then streaming stops
    assert_group_gone(outcome.pid)


async def test_an_endless_line_is_streamed_in_pieces(project: Path) -> None:
    pieces: list[str] = []
    hook = command_hook("head -c 200000 /dev/zero | tr '\\0' z")
    await run_all([hook], PAYLOAD, project_dir=project, on_line=lambda h, s, line: pieces.append(line))
    assert "".join(pieces) == "z" * 200_000
    assert max(map(len, pieces)) <= 64 * 1024


# --- process groups, grandchildren, SIGTERM --------------------------------------------------------------------


async def test_script_ignoring_sigterm_is_killed(project: Path, write_script: WriteScript) -> None:
    script = write_script("stubborn", "trap '' TERM\necho $$\nsleep 1000 &\necho $!\nwait")
    outcome = await run_hook(command_hook(str(script), timeout=0.3), PAYLOAD, project_dir=project, options=FAST)
    assert outcome.error_kind == "timeout"
    script_pid, grandchild = (int(v) for v in lines_of(outcome))
    assert_group_gone(outcome.pid, script_pid, grandchild)


async def test_grandchildren_are_killed_on_timeout(project: Path, write_script: WriteScript) -> None:
    script = write_script("spawner", "sleep 1000 &\necho $!\nsleep 1000")
    outcome = await run_hook(command_hook(str(script), timeout=0.3), PAYLOAD, project_dir=project, options=FAST)
    grandchild = int(lines_of(outcome)[0])
    assert outcome.error_kind == "timeout"
    assert_group_gone(outcome.pid, grandchild)


@pytest.mark.parametrize("redirect", ["", ">/dev/null 2>&1"], ids=["holds-stdout", "detached-from-pipes"])
async def test_leftovers_are_killed_after_the_leader_exits(
    project: Path, write_script: WriteScript, redirect: str
) -> None:
    script = write_script("leaves-child", f'sleep 1000 {redirect} &\necho $!\necho \'{{"decision": "block"}}\'')
    outcome = await run_hook(command_hook(str(script)), PAYLOAD, project_dir=project, options=FAST)
    grandchild = int(lines_of(outcome)[0])
    assert outcome.ok
    assert outcome.exit_code == 0
    assert not outcome.timed_out
    assert lines_of(outcome)[1] == '{"decision": "block"}'
    assert_group_gone(outcome.pid, grandchild)


async def test_output_of_a_background_child_within_the_drain_window_is_kept(project: Path) -> None:
    # The leader exits at once; its child writes after a moment, well within the (default 0.5 s) drain window.
    outcome = await run_hook(command_hook("(sleep 0.05; echo late) &"), PAYLOAD, project_dir=project)
    assert lines_of(outcome) == ["late"]


# --- cancellation ---------------------------------------------------------------------------------------------


async def test_cancel_kills_every_running_hook_group(project: Path, write_script: WriteScript) -> None:
    hooks = []
    for index in range(3):
        trap = "trap '' TERM\n" if index == 1 else ""
        script = write_script(f"long{index}", f"{trap}sleep 1000 &\necho child $!\necho leader $$\nsleep 1000")
        hooks.append(command_hook(str(script)))
    pids: dict[str, list[int]] = {"child": [], "leader": []}
    all_ready = asyncio.Event()

    def collect(hook: ConfiguredHook, stream: StreamName, line: str) -> None:
        role, pid = line.split()
        pids[role].append(int(pid))
        if len(pids["leader"]) == len(hooks):
            all_ready.set()

    task = asyncio.ensure_future(run_all(hooks, PAYLOAD, project_dir=project, options=FAST, on_line=collect))
    await all_ready.wait()
    groups = {pgid_of(pid) for pid in pids["leader"]}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(groups) == 3
    for pgid in groups:
        assert live_group_members(pgid) == []
    for pid in pids["child"] + pids["leader"]:
        assert not is_alive(pid)


# --- parallelism and order -------------------------------------------------------------------------------------


async def test_hooks_of_one_event_run_in_parallel_and_report_in_config_order(
    project: Path, write_script: WriteScript, tmp_path: Path
) -> None:
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    hooks = []
    for index in range(3):
        # Each hook announces itself, then waits until all three have: only possible if they overlap.
        # Hook 0 then lingers so that it finishes last although it is first in configuration order.
        linger = "sleep 0.3" if index == 0 else "true"
        script = write_script(
            f"barrier{index}",
            f"""
            touch "{barrier}/{index}"
            for i in $(seq 1 500); do
              [ "$(ls "{barrier}" | wc -l)" -ge 3 ] && {{ {linger}; echo "saw-all {index}"; date +%s%N; exit 0; }}
              sleep 0.01
            done
            echo "alone {index}"
            """,
        )
        hooks.append(command_hook(str(script), timeout=15))
    outcomes = await run_all(hooks, PAYLOAD, project_dir=project, options=FAST)
    assert [lines_of(o)[0] for o in outcomes] == ["saw-all 0", "saw-all 1", "saw-all 2"]
    finished = [int(lines_of(o)[1]) for o in outcomes]
    assert finished[0] > max(finished[1:])  # completion order differs; result order is configuration order


async def test_cline_scripts_get_the_cline_payload(project: Path, write_script: WriteScript, tmp_path: Path) -> None:
    cline = write_script("PreToolUse", "cat")
    claude = command_hook("cat")
    cline_payload = {"hookName": "PreToolUse", "preToolUse": {"toolName": "execute_command", "parameters": {}}}
    outcomes = await run_all(
        [claude, cline_hook(cline)], PAYLOAD, cline_payload=cline_payload, project_dir=project, options=FAST
    )
    assert json.loads(outcomes[0].stdout) == PAYLOAD
    assert json.loads(outcomes[1].stdout) == cline_payload
    with pytest.raises(ValueError, match="cline_payload"):
        await run_all([cline_hook(cline)], PAYLOAD, project_dir=project)


async def test_command_hooks_run_with_claudecode_set_as_under_claude_code(
    project: Path, write_script: WriteScript
) -> None:
    # Claude Code sets CLAUDECODE=1 for its hooks; public scripts test it. Cline's scripts do not get it.
    show = write_script("PreToolUse", 'echo "claudecode=${CLAUDECODE-unset}"')
    outcomes = await run_all(
        [command_hook(str(show)), cline_hook(show)],
        PAYLOAD,
        cline_payload={"hookName": "PreToolUse"},
        project_dir=project,
        options=FAST,
    )
    assert [o.stdout_text.strip() for o in outcomes] == ["claudecode=1", "claudecode=unset"]


async def test_cline_script_without_a_shebang_runs_through_sh(project: Path, write_script: WriteScript) -> None:
    script = write_script("PreToolUse", "echo '{\"cancel\": false}'", shebang=None)
    outcome = await run_hook(cline_hook(script), {"hookName": "PreToolUse"}, project_dir=project, options=FAST)
    assert outcome.ok
    assert outcome.stdout_text.strip() == '{"cancel": false}'


async def test_cline_scripts_default_to_a_30_second_timeout(project: Path, write_script: WriteScript) -> None:
    script = write_script("PreToolUse", "true")
    outcome = await run_hook(cline_hook(script), {}, project_dir=project, options=RunnerOptions())
    assert outcome.timeout == 30.0


async def test_no_hooks_no_work(project: Path) -> None:
    assert await run_all([], PAYLOAD, project_dir=project) == ()


# --- streaming -------------------------------------------------------------------------------------------------


async def test_lines_stream_while_the_hook_runs(project: Path, write_script: WriteScript, tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = write_script(
        "streamer",
        f"""
        echo first
        echo warn-1 >&2
        # Wait until the test has seen "first": proves lines arrive before the hook exits.
        for i in $(seq 1 500); do [ -e "{go}" ] && break; sleep 0.01; done
        [ -e "{go}" ] || {{ echo "never-streamed"; exit 1; }}
        echo second
        echo warn-2 >&2
        """,
    )
    seen: list[tuple[str, StreamName, str]] = []

    def on_line(hook: ConfiguredHook, stream: StreamName, line: str) -> None:
        seen.append((hook.name, stream, line))
        if line == "first":
            go.touch()

    outcome = (await run_all([command_hook(str(script), timeout=15)], PAYLOAD, project_dir=project, on_line=on_line))[0]
    assert outcome.exit_code == 0
    assert [line for _, s, line in seen if s == "stdout"] == ["first", "second"]
    assert [line for _, s, line in seen if s == "stderr"] == ["warn-1", "warn-2"]
    assert {name for name, _, _ in seen} == {str(script)}


async def test_a_failing_line_callback_does_not_break_the_run(project: Path) -> None:
    def explode(hook: ConfiguredHook, stream: StreamName, line: str) -> None:
        raise RuntimeError("subscriber bug")

    outcome = (await run_all([command_hook("echo a; echo b")], PAYLOAD, project_dir=project, on_line=explode))[0]
    assert outcome.ok
    assert lines_of(outcome) == ["a", "b"]
