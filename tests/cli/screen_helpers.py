"""The CLI in a real pseudo-terminal, read as a person sees it: the bytes go through ``pyte`` (a VT100
emulator), so ``\\r``, erase-line and cursor moves are applied and what a test reads is the rendered screen. Also the
command line (:data:`HOOKLOOP`) and the scripted-model file (:func:`script`) the CLI tests start it with."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]


def script(path: Path, turns: list[list[dict[str, Any]]]) -> Path:
    """Write a scripted model (``--model scripted:PATH``): one reply of ``blocks`` per turn."""
    path.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    return path


_WAITING = ("select", "poll", "n_tty_read", "wait_woken", "ep_poll", "futex")


def default_signals() -> None:
    """In the child, before exec: SIGINT and SIGTERM back to their defaults and no signal blocked. A child
    inherits an ignored SIGINT and the signal mask of the thread that started it (a library in the test process
    may have changed them), and a Python started with SIGINT ignored never raises KeyboardInterrupt."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def wait_until_idle(pid: int, timeout: float = 30) -> None:
    """Wait until the process's main thread sleeps in the kernel waiting for input (readline's select, the
    event loop's epoll, a blocking read): a Ctrl-C sent then reaches a program that is waiting, as when a person
    presses it — not one still busy drawing the line it was just given (readline acts on such a SIGINT only at
    the next key). A condition checked every few milliseconds, not a fixed sleep."""
    deadline = time.monotonic() + timeout
    wchan = Path(f"/proc/{pid}/wchan")
    stat = Path(f"/proc/{pid}/stat")
    while True:
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
            where = wchan.read_text()
        except OSError:
            return  # it is gone: nothing to wait for
        if state == "S" and any(w in where for w in _WAITING):
            return
        assert time.monotonic() < deadline, f"process {pid} never waited for input (state {state}, in {where})"
        time.sleep(0.005)


STARTED: list[subprocess.Popen[bytes]] = []
"""Every program a :class:`Screen` started; ``tests/cli/conftest.py`` kills what a failed test left running."""


def controlling_terminal() -> None:
    """In the child, before exec (after setsid): :func:`default_signals`, and the pty becomes the controlling
    terminal, so a typed Ctrl-C (``\\x03``) is delivered by the kernel as SIGINT, as in a shell."""
    default_signals()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Screen:
    """``hookloop ARGS`` on a ``columns`` x ``lines`` terminal (tall enough that nothing scrolls away), read as
    the rendered screen. ``controlling``: the pty is the program's controlling terminal (typed Ctrl-C works)."""

    def __init__(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: Path,
        *,
        columns: int = 120,
        lines: int = 300,
        controlling: bool = False,
        term: str = "xterm-256color",
    ) -> None:
        self.columns = columns
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        env = {**env, "COLUMNS": str(columns), "LINES": str(lines), "TERM": term}
        self.proc = subprocess.Popen(
            [*HOOKLOOP, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=controlling_terminal if controlling else default_signals,
        )
        os.close(slave)
        STARTED.append(self.proc)
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        self.closed = False

    def text(self) -> str:
        """The rendered screen, trailing blanks stripped."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    def lines(self) -> list[str]:
        return [line.strip() for line in self.text().splitlines()]

    def _read(self, timeout: float) -> bool:
        if self.closed:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed the terminal
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.raw += chunk
        self.stream.feed(chunk)
        return True

    def _until(self, shown: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not shown():
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {what} on the screen:\n{self.text()}"
            assert not self.closed, f"the program ended without showing {what}:\n{self.text()}"
            self._read(left)

    def wait_for(self, text: str, timeout: float = 30, *, count: int = 1) -> None:
        """Read until ``text`` is on the rendered screen (``count`` times)."""
        self._until(lambda: self.text().count(text) >= count, f"{text!r} ×{count}", timeout)

    def prompts(self, prompt: str = ">") -> int:
        """How many prompt lines (``>`` or ``approve? >``, then what was typed) the screen shows."""
        return sum(1 for line in self.screen.display if line.rstrip() == prompt or line.startswith(prompt + " "))

    def wait_prompt(self, count: int = 1, prompt: str = ">", timeout: float = 30) -> None:
        self._until(lambda: self.prompts(prompt) >= count, f"prompt {prompt!r} ×{count}", timeout)

    def prompt_line(self) -> str:
        """The line the cursor is on (the prompt being edited)."""
        return str(self.screen.display[self.screen.cursor.y]).rstrip()

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def end_of_input(self) -> None:
        """Ctrl-D once the program waits for input (wait for its prompt first when it shows one). Typed earlier,
        while the terminal is still in canonical mode, the kernel keeps it as an end-of-file mark, which is not
        a Ctrl-D once readline has switched the terminal to raw mode — and the program then waits for an end of
        input that never comes (text typed ahead is kept; only this is lost)."""
        wait_until_idle(self.proc.pid)
        self.type("\x04")

    def interrupt(self) -> None:
        """Ctrl-C as a person presses it: SIGINT to the program's process group once it waits for input."""
        wait_until_idle(self.proc.pid)
        os.killpg(self.proc.pid, signal.SIGINT)

    def finish(self, timeout: float = 30) -> int:
        """Read everything until the program closes the terminal; its exit code."""
        deadline = time.monotonic() + timeout
        while self._read(max(0.0, deadline - time.monotonic())) and time.monotonic() < deadline:
            pass
        code = self.proc.wait(timeout=timeout)
        os.close(self.master)
        return code


class HeldModel:
    """A real local OpenAI-compatible server whose reply waits until :meth:`release`: the time before the
    model's first byte, held open for as long as a test needs. It then streams ``answer``."""

    def __init__(self, answer: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.answer = answer
        self.requested = threading.Event()
        self.released = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                held.requested.set()
                held.released.wait(60)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in held.chunks():
                    self.wfile.write(f"data: {chunk}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chunks(self) -> list[str]:
        import json

        def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "held", "choices": [choice]}
            return json.dumps({**body, **extra})

        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        return [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": self.answer}),
            chunk({}, "stop"),
            json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "held", "choices": [],
                        "usage": usage}),
        ]  # fmt: skip

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
