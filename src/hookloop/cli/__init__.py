"""The ``hookloop`` command line (a thin layer over the public API). Needs the ``cli`` extra."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

__all__ = ["main"]


_ROOT_OPTIONS = frozenset({"-h", "--help", "-v", "--version", "--install-completion", "--show-completion"})


def print_mode(argv: list[str]) -> list[str]:
    """Claude Code's command line: ``claude -p PROMPT [flags]`` prints, ``claude [flags]`` talks. So
    ``hookloop -p …`` (or flags first, ``-p`` among them) is ``hookloop run …``, and flags without a command
    (``hookloop -c``, ``hookloop --model M``) are ``hookloop chat …``."""
    if not argv or argv[0] in _ROOT_OPTIONS or not argv[0].startswith("-"):
        return argv
    if argv[0] in ("-p", "--print"):
        return ["run", *argv[1:]]
    if "-p" in argv or "--print" in argv:
        return ["run", *argv]
    return ["chat", *argv]


_ONE_RULE = r"(?:[A-Z][A-Za-z0-9]*|mcp__[\w-]+)(?:\(.*\))?"
_RULE_WORD = re.compile(rf"^{_ONE_RULE}(?:,\s*{_ONE_RULE})*$")
_RULE_FLAGS = frozenset({"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools"})


def expand_rule_lists(argv: Sequence[str]) -> list[str]:
    """Claude Code's ``--allowedTools "Bash(git log:*)" "Bash(git diff:*)" Read``: after the flag's own value,
    every following argument that is a tool rule (``Name``, ``Name(…)``, ``mcp__…``, or a comma list of them)
    belongs to it too; repeated flags are what typer reads. A prompt (words with spaces, lower case) is never
    taken for a rule."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _RULE_FLAGS and i + 1 < len(argv):
            out.extend((arg, argv[i + 1]))
            i += 2
            while i < len(argv) and _RULE_WORD.match(argv[i]):
                out.extend((arg, argv[i]))
                i += 1
            continue
        out.append(arg)
        i += 1
    return out


def main() -> None:
    """Entry point of the ``hookloop`` console script.

    Usage errors (unknown flags, missing arguments, bad values) print one line and exit with code 2; an
    unexpected exception prints one line too and exits with code 1 (``HOOKLOOP_DEBUG=1``: the traceback).
    A process that talked to a Temporal server leaves without the interpreter's shutdown, where the SDK's native
    runtime can crash after the command succeeded (temporalio/sdk-python#300): the exit code stays the command's.
    """
    try:
        _main()
    except SystemExit as exc:
        temporal = sys.modules.get("hookloop.durable.temporal")
        if temporal is not None and temporal.connected():
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
            temporal.exit_now(exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1)
        raise


def _main() -> None:
    try:
        from hookloop.cli._app import register
    except ImportError as exc:  # typer/rich missing
        print(f"hookloop: the command line needs the cli extra: pip install 'hookloop[cli]' ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    # prog_name: the name in usage lines and the shell-completion variable (_HOOKLOOP_COMPLETE), whether this
    # runs as the console script, `python -m hookloop` or `python -c …`.
    if len(sys.argv) <= 1 or "_HOOKLOOP_COMPLETE" in os.environ:
        register()(prog_name="hookloop")  # prints the help (or answers a shell-completion request)
        return
    try:
        args = expand_rule_lists(print_mode(sys.argv[1:]))
        if len(args) > 1 and args[0] == "run":
            from hookloop.cli._dbopen import durable_argv

            args = durable_argv(args)  # `--durable` with its URL left out
        app = register(args[0] if args else None)  # only the command asked for is imported
        code = app(args=args, prog_name="hookloop", standalone_mode=False)
    except Exception as exc:
        # typer vendors click: its exceptions are recognised by shape, not by class.
        format_message = getattr(exc, "format_message", None)
        exit_code = getattr(exc, "exit_code", None)
        if format_message is None or not isinstance(exit_code, int):
            if os.environ.get("HOOKLOOP_DEBUG"):
                raise
            # A defect, not a usage error: still one line (HOOKLOOP_DEBUG=1 shows the traceback).
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            print(f"hookloop: internal error: {message} (HOOKLOOP_DEBUG=1 shows the traceback)", file=sys.stderr)
            raise SystemExit(1) from None
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__.startswith("NoArgsIsHelp") and ctx is not None:  # a group without a command
            print(ctx.get_help())
            raise SystemExit(0) from None
        where = ctx.command_path if ctx is not None else "hookloop"
        print(f"{where}: {format_message()}", file=sys.stderr)
        raise SystemExit(2 if exit_code == 2 else exit_code) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
