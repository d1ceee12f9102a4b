"""A local MCP server over stdio, written with the official ``mcp`` package (``pip install 'hookloop[mcp]'``).

It keeps notes in a JSON file (the first argument). Its tools carry MCP annotations — claims the *server*
makes; hookloop does not let ``readOnlyHint`` skip a permission question unless you open the server with
``trust_annotations=True``.

    python examples/mcp/notes_server.py NOTES.json        (speaks MCP on stdin/stdout; agent.py starts it)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

STORE = Path(sys.argv[1] if len(sys.argv) > 1 else "notes.json")
app = MCPServer("notes")


def _load() -> dict[str, str]:
    return json.loads(STORE.read_text(encoding="utf-8")) if STORE.exists() else {}


def _save(notes: dict[str, str]) -> None:
    STORE.write_text(json.dumps(notes, indent=2, sort_keys=True), encoding="utf-8")


@app.tool()
def add_note(title: str, body: str) -> str:
    """Add (or replace) the note called ``title``."""
    notes = _load()
    notes[title] = body
    _save(notes)
    return f"saved {title!r} ({len(notes)} notes)"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_notes() -> str:
    """Every note, one per line: title: body."""
    notes = _load()
    return "\n".join(f"{title}: {body}" for title, body in sorted(notes.items())) or "(no notes)"


@app.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_note(title: str) -> str:
    """Delete the note called ``title``."""
    notes = _load()
    if notes.pop(title, None) is None:
        raise ValueError(f"no note called {title!r}")
    _save(notes)
    return f"deleted {title!r}"


if __name__ == "__main__":
    app.run()  # stdio
