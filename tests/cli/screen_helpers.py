"""The CLI in a real pseudo-terminal, read as a person sees it: the bytes go through ``pyte`` (a VT100
emulator), so ``\\r``, erase-line and cursor moves are applied and what a test reads is the rendered screen."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte

HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]
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


class Screen:
    """``hookloop ARGS`` on a ``columns`` x ``lines`` terminal (tall enough that nothing scrolls away)."""

    def __init__(
        self, args: list[str], env: dict[str, str], cwd: Path, *, columns: int = 120, lines: int = 300
    ) -> None:
        self.columns = columns
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        env = {**env, "COLUMNS": str(columns), "LINES": str(lines), "TERM": "xterm-256color"}
        self.proc = subprocess.Popen(
            [*HOOKLOOP, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=default_signals,
        )
        os.close(slave)
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

    def wait_for(self, text: str, timeout: float = 30, *, count: int = 1) -> None:
        """Read until ``text`` is on the rendered screen (``count`` times)."""
        deadline = time.monotonic() + timeout
        while self.text().count(text) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r} on the screen:\n{self.text()}"
            assert not self.closed, f"the program ended without showing {text!r}:\n{self.text()}"
            self._read(left)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def interrupt(self) -> None:
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
