"""Where durable runs are kept, for every command that opens a run database (``hookloop run --durable``,
``worker``, ``runs``, ``serve``): the URL (``--db``/``--durable``, else ``$HOOKLOOP_DURABLE_URL``, else the SQLite
file under ``HOOKLOOP_HOME``), how it is shown in a message (password masked), and the store it opens. Light on
purpose: importing it loads neither the Worker nor a backend, so ``hookloop runs list`` starts fast."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from hookloop._checkpoint_auth import resolve_hookloop_home
from hookloop.errors import HookloopError

__all__ = ["URL_ENV", "StoreUnavailable", "describe_url", "durable_argv", "first_line", "open_store", "resolve_url"]

URL_ENV = "HOOKLOOP_DURABLE_URL"
_URL = re.compile(r"^(sqlite|postgres|postgresql|temporal)(\+[a-z0-9_]+)?://", re.IGNORECASE)
_ANY_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
"""What ``--durable`` takes as its URL (then checked against :data:`_URL`): any ``scheme://``."""


class StoreUnavailable(HookloopError):
    """The run database cannot be opened: a bad URL, or the durable backend is not installed."""


def resolve_url(url: str | None) -> str | None:
    """``url``, else ``$HOOKLOOP_DURABLE_URL``, else None (the backend's default SQLite file under
    ``HOOKLOOP_HOME``). A URL that is neither ``sqlite://…`` nor ``postgresql://…`` is a StoreUnavailable."""
    chosen = url or os.environ.get(URL_ENV) or None
    if chosen is not None and not _URL.match(chosen):
        raise StoreUnavailable(
            f"database URL {describe_url(chosen)!r}: expected sqlite:///PATH, postgresql://USER@HOST/DB or "
            "temporal://HOST:PORT/NAMESPACE"
        )
    return chosen


def describe_url(url: str | None) -> str:
    """The URL to show in a message: its password masked; the default database by name."""
    chosen = url or os.environ.get(URL_ENV)
    if not chosen:
        return f"the default database ({resolve_hookloop_home() / 'durable.sqlite'})"
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", chosen)


def open_store(url: str | None, *, read_only: bool = False) -> Any:
    """The durable backend for ``url`` (see :func:`resolve_url`): a :class:`~hookloop.durable.RunStore` that
    can also execute runs. StoreUnavailable when the ``dbos`` extra is missing or the URL is not one.
    ``read_only``: only list and show are needed (on DBOS: a reader that imports neither ``dbos`` nor, on a SQLite
    file, SQLAlchemy: fast to start)."""
    chosen = resolve_url(url)
    if chosen is not None and chosen.lower().startswith("temporal://"):
        return _open_temporal(chosen)
    try:
        if read_only:
            from hookloop.durable._dbos_read import open_reader as opener
        else:
            from hookloop.durable.dbos import DBOSBackend as opener  # type: ignore[import-not-found,unused-ignore,no-redef]
    except ImportError as exc:
        raise StoreUnavailable(f"durable runs need the DBOS backend: pip install 'hookloop[dbos]' ({exc})") from None
    try:
        return opener(chosen)
    except Exception as exc:  # a bad URL, an unreachable server, a file that is not a database
        raise StoreUnavailable(f"cannot open {describe_url(chosen)}: {first_line(exc)}") from None


def _open_temporal(url: str) -> Any:
    """The Temporal backend (``temporal://HOST:PORT/NAMESPACE``); it connects on first use."""
    try:
        from hookloop.durable.temporal import TemporalBackend
    except ImportError as exc:
        raise StoreUnavailable(f"durable runs on Temporal need: pip install 'hookloop[temporal]' ({exc})") from None
    try:
        return TemporalBackend(url)
    except ValueError as exc:
        raise StoreUnavailable(str(exc)) from None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (database drivers write whole paragraphs), credentials masked."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return re.sub(r"(://[^/@:\s]*:)[^/@\s]*@", r"\1***@", line)


def durable_argv(argv: Sequence[str]) -> list[str]:
    """``--durable`` takes an optional URL: when the next word is not a database URL, it means the default
    database (so ``hookloop run --durable "fix it"`` keeps its prompt)."""
    out: list[str] = []
    words = list(argv)
    for i, word in enumerate(words):
        out.append(word)
        if word == "--":
            out.extend(words[i + 1 :])
            break
        if word == "--durable":
            following = words[i + 1] if i + 1 < len(words) else None
            if following is None or not _ANY_URL.match(following):
                out[-1] = "--durable=default"
    return out
