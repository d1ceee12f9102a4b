"""The ``hookloop`` command line (a thin layer over the public API). Needs the ``cli`` extra."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``hookloop`` console script.

    Usage errors (unknown flags, missing arguments, bad values) print one line and exit with code 2.
    """
    try:
        from hookloop.cli._app import app
    except ImportError as exc:  # typer/rich missing
        print(f"hookloop: the command line needs the cli extra: pip install 'hookloop[cli]' ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    if len(sys.argv) > 2 and sys.argv[1] == "run":
        from hookloop.cli._durable import durable_argv

        sys.argv[1:] = durable_argv(sys.argv[1:])  # `--durable` with its URL left out
    if len(sys.argv) <= 1:
        app()  # prints the help
        return
    try:
        code = app(standalone_mode=False)
    except Exception as exc:
        # typer vendors click: its exceptions are recognised by shape, not by class.
        format_message = getattr(exc, "format_message", None)
        exit_code = getattr(exc, "exit_code", None)
        if format_message is None or not isinstance(exit_code, int):
            raise
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
