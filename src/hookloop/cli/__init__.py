"""The ``hookloop`` command line (a thin layer over the public API). Needs the ``cli`` extra."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``hookloop`` console script."""
    try:
        from hookloop.cli._app import app
    except ImportError as exc:  # typer/rich missing
        print(f"hookloop: the command line needs the cli extra: pip install 'hookloop[cli]' ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    app()
