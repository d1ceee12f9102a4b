"""``hookloop serve``: the web inbox over a folder of checkpoints or a durable backend's database."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

import typer

__all__ = ["serve"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    durable: str | None = typer.Option(
        None,
        "--durable",
        help="A durable backend's URL (sqlite:///… or postgresql://… with hookloop[dbos], temporal://HOST:PORT/NS "
        "with hookloop[temporal]; 'default': $HOOKLOOP_HOME/durable.sqlite).",
    ),
    checkpoint_dir: Path | None = typer.Option(
        None,
        "--checkpoint-dir",
        help="A folder of checkpoints `hookloop run` wrote (default: $HOOKLOOP_HOME/checkpoints).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on (loopback by default)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="The port (0: any free one)."),
    permission_mode: str | None = typer.Option(
        None, "--permission-mode", help="For runs continued from a checkpoint folder, as for `hookloop resume`."
    ),
    settings: list[Path] = typer.Option([], "--settings", help="An extra settings file for continued runs."),
    no_claude_settings: bool = typer.Option(False, "--no-claude-settings", help="Ignore .claude/ settings files."),
    trust_project_hooks: bool = typer.Option(
        False, "--trust-project-hooks", help="Run project hooks of continued runs without recorded trust."
    ),
) -> None:
    """Serve the web inbox: runs, their timelines (live), pending approvals and the decisions.

    A random access token is printed with the address: open that address (the token becomes a cookie). Paused
    runs of a checkpoint folder continue in this process once approved, with the Worker `hookloop resume`
    would build (the current settings decide the permission policy); with --durable, decisions go to the
    backend and its worker processes continue the runs.
    """
    from hookloop.cli._app import check_choice, fail

    check_choice(
        "--permission-mode", permission_mode, ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
    )
    if durable is not None and checkpoint_dir is not None:
        raise fail("--durable and --checkpoint-dir cannot be used together")
    try:
        import uvicorn

        from hookloop.serve import create_app, new_token
    except ImportError as exc:
        raise fail(
            f"the web inbox needs the serve extra: pip install 'hookloop[serve]' ({exc.name} is missing)"
        ) from None
    store: Any
    if durable is not None:
        from hookloop.cli._dbopen import StoreUnavailable, open_store

        try:  # DBOS (sqlite:///…, postgresql://…) or Temporal (temporal://…): each backend is a RunStore
            store = open_store(None if durable == "default" else durable)
        except StoreUnavailable as exc:  # the extra is missing, a bad URL, an unreachable database: one line
            raise fail(f"--durable {durable}: {exc}".splitlines()[0]) from None
        where = "the durable store" if durable == "default" else "a durable store"
    else:
        from hookloop._reaper import guard_descendants
        from hookloop.durable import CheckpointDirStore, ResumeSettings

        store = CheckpointDirStore(
            checkpoint_dir.resolve() if checkpoint_dir else None,
            resume=ResumeSettings(
                permission_mode=permission_mode,
                settings=tuple(p.resolve() for p in settings),
                include_claude=not no_claude_settings,
                trust_project_hooks=trust_project_hooks,
            ),
        )
        guard_descendants()  # tools of continued runs: nothing they start outlives this process
        where = str(store.folder)
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    loopback = _is_loopback(host)
    token = new_token()
    app = create_app(store, token=token, allowed_hosts=LOOPBACK_NAMES if loopback else None)
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    print(f"hookloop inbox for {where}", flush=True)
    print(f"  http://{shown}:{bound}/runs?token={token}", flush=True)
    if not loopback:
        print(
            f"warning: listening on {host}, not loopback: anyone who can reach it and has the token can act",
            file=sys.stderr,
        )
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)

    async def main() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            await store.close()

    asyncio.run(main())
