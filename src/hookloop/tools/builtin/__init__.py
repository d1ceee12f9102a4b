"""Built-in coding tools named and shaped exactly like Claude Code's: ``Read``, ``Write`` and ``Edit`` so far.

Same names and same ``tool_input`` fields, so permission rules (``Bash(npm run test:*)``, ``Read(./src/**)``),
matchers and hook scripts written for Claude Code work on them unchanged::

    from hookloop import Worker
    from hookloop.tools.builtin import Workspace, builtin_tools

    worker = Worker(client, tools=builtin_tools(Workspace(".")), workspace=".")

Every path is resolved against the :class:`Workspace` root and refused outside it (and its additional
directories) unless the workspace allows it; files are opened without following a symbolic link swapped in after
that check.
"""

from __future__ import annotations

import os

from hookloop.tools._base import Tool
from hookloop.tools.builtin._files import EditTool, ReadTool, WriteTool
from hookloop.tools.builtin._workspace import Workspace, WorkspaceError

__all__ = [
    "EditTool",
    "ReadTool",
    "Workspace",
    "WorkspaceError",
    "WriteTool",
    "builtin_tools",
]


def builtin_tools(workspace: Workspace | str | os.PathLike[str]) -> list[Tool]:
    """Fresh ``Read``, ``Write`` and ``Edit`` tools sharing one workspace (a path becomes ``Workspace(path)``)."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    return [ReadTool(ws), WriteTool(ws), EditTool(ws)]
