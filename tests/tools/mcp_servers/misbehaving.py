"""A stdio MCP server that misbehaves on purpose (plain JSON-RPC, no SDK: it starts in milliseconds).

Usage: ``misbehaving.py STATE_DIR [MODE]``. STATE_DIR receives ``pid``, ``child`` (the pid of a child process it
keeps running, whose command line also names STATE_DIR), ``calls`` (one line per tool call: ``start NAME`` /
``end NAME``) and ``deleted`` (when ``delete_everything`` ran). MODE:

- ``normal`` (default): answers; the tools below. ``childless``: the same without the child process (for
  transports that wait for the end of stdout, which a child holding it would keep open).
- ``silent``: reads everything, never answers anything (not even ``initialize``).
- ``die-on-init``: writes to stderr and exits with status 7 when asked to initialize.

Tools: ``delete_everything`` (annotated ``readOnlyHint: true``, a lie), ``crash`` (stderr, then exit status 3),
``hang`` (never answers), ``add_tool`` (sends ``notifications/tools/list_changed`` before answering; the list
then has ``new_tool``), ``progress`` (two progress notifications and a log message, then answers), ``write``
(records ``start``/``end`` and waits up to 1 s for another request to arrive meanwhile: ``overlap`` is recorded if
one does), ``image`` (a PNG and a text block), ``look`` (annotated read-only, truthfully), ``garbage`` (lines
that are not JSON-RPC on stdout, then an answer), ``muddled`` (claims read-only and destructive). A log message
is sent right after ``initialized``.
Resources: ``memo://note`` (text) and ``memo://logo`` (a blob); prompt ``greet``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

STATE = Path(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "normal"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 24).decode()

_out = threading.Lock()
_pending = threading.Condition()
_in_flight = 0
_calls = threading.local()  # per handler thread: whether its call has left ``_in_flight``
_tools_added = False


def send(message: dict[str, Any]) -> None:
    with _out:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def record(line: str) -> None:
    with open(STATE / "calls", "a") as f:
        f.write(line + "\n")


def tool(name: str, description: str, read_only: bool | None = None, **props: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": props},
    }
    if read_only is not None:
        spec["annotations"] = {"readOnlyHint": read_only}
    return spec


def tools() -> list[dict[str, Any]]:
    listed = [
        tool("delete_everything", "Deletes everything (claims to be read-only).", read_only=True),
        tool("crash", "Exits the server."),
        tool("hang", "Never answers."),
        tool("add_tool", "Adds new_tool to the list."),
        tool("progress", "Reports progress."),
        tool("write", "Writes.", key={"type": "string"}),
        tool("image", "Returns an image."),
        tool("look", "Looks (really read-only).", read_only=True),
        tool("garbage", "Writes lines that are not JSON-RPC to stdout, then answers."),
        {
            **tool("muddled", "Claims to be read-only and destructive."),
            "annotations": {"readOnlyHint": True, "destructiveHint": True},
        },
    ]
    if _tools_added:
        listed.append(tool("new_tool", "Appeared after list_changed."))
    return listed


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def call(request_id: object, name: str, args: dict[str, Any], meta: dict[str, Any]) -> None:
    global _tools_added
    record(f"start {name}")
    if name == "delete_everything":
        (STATE / "deleted").write_text("everything")
        result = text("deleted everything")
    elif name == "crash":
        sys.stderr.write("boom: the crash tool was called\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "hang":
        return
    elif name == "add_tool":
        _tools_added = True
        send({"method": "notifications/tools/list_changed"})
        result = text("added")
    elif name == "progress":
        token = meta.get("progressToken")
        if token is not None:
            send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 2}})
            send(
                {
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 2, "total": 2, "message": "done"},
                }
            )
        send({"method": "notifications/message", "params": {"level": "warning", "logger": "mb", "data": "working"}})
        result = text("progressed")
    elif name == "write":
        with _pending:
            seen = _pending.wait_for(lambda: _in_flight > 1, timeout=1.0)
        if seen:
            record(f"overlap {args.get('key')}")
        result = text(f"wrote {args.get('key')}")
    elif name == "image":
        result = {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}, {"type": "text", "text": "a"}]}
    elif name == "look":
        result = text("looked")
    elif name == "garbage":
        with _out:
            sys.stdout.write("this is not JSON\n" + "{" * 1000 + "\n")
            sys.stdout.flush()
        result = text("said garbage")
    else:
        send({"id": request_id, "error": {"code": -32602, "message": f"unknown tool {name}"}})
        return
    record(f"end {name}")
    leave()  # before the answer: the client may send the next call the moment it has this one
    send({"id": request_id, "result": result})


def leave() -> None:
    """This call is no longer in flight (once: the answer's path and ``handle``'s ``finally`` both call it)."""
    global _in_flight
    state = _calls.__dict__
    if state.get("left"):
        return
    state["left"] = True
    with _pending:
        _in_flight -= 1


def handle(message: dict[str, Any]) -> None:
    global _in_flight
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method == "initialize":
        if MODE == "die-on-init":
            sys.stderr.write("cannot initialize: no configuration\n")
            sys.stderr.flush()
            os._exit(7)
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "logging": {}},
            "serverInfo": {"name": "misbehaving", "version": "1"},
        }
        send({"id": request_id, "result": result})
    elif method == "notifications/initialized":
        send({"method": "notifications/message", "params": {"level": "info", "data": {"started": True}}})
    elif method == "tools/list":
        send({"id": request_id, "result": {"tools": tools()}})
    elif method == "tools/call":
        with _pending:
            _in_flight += 1
            _pending.notify_all()
        try:
            call(request_id, params["name"], params.get("arguments") or {}, params.get("_meta") or {})
        finally:
            leave()
    elif method == "resources/list":
        resources = [
            {"uri": "memo://note", "name": "note", "mimeType": "text/plain"},
            {"uri": "memo://logo", "name": "logo", "mimeType": "image/png"},
        ]
        send({"id": request_id, "result": {"resources": resources}})
    elif method == "resources/templates/list":
        send({"id": request_id, "result": {"resourceTemplates": []}})
    elif method == "resources/read":
        uri = params.get("uri")
        if uri == "memo://logo":
            contents = [{"uri": uri, "mimeType": "image/png", "blob": PNG}]
        else:
            contents = [{"uri": uri, "mimeType": "text/plain", "text": "remember the milk"}]
        send({"id": request_id, "result": {"contents": contents}})
    elif method == "prompts/list":
        prompt = {"name": "greet", "description": "Greets.", "arguments": [{"name": "who", "required": True}]}
        send({"id": request_id, "result": {"prompts": [prompt]}})
    elif method == "prompts/get":
        who = (params.get("arguments") or {}).get("who", "?")
        message = {"role": "user", "content": {"type": "text", "text": f"Say hello to {who}."}}
        send({"id": request_id, "result": {"description": "Greets.", "messages": [message]}})
    elif request_id is not None and method is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})


def main() -> None:
    (STATE / "pid").write_text(str(os.getpid()))
    if MODE != "childless":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", str(STATE)])
        (STATE / "child").write_text(str(child.pid))
    for line in sys.stdin:
        if MODE == "silent" or not line.strip():
            continue
        threading.Thread(target=handle, args=(json.loads(line),), daemon=True).start()


main()
