"""Built-in coding tools named and shaped exactly like Claude Code's: ``Bash``, ``Read``, ``Write``, ``Edit``,
``Glob`` and ``Grep``.

Same names and same ``tool_input`` fields, so permission rules (``Bash(npm run test:*)``, ``Read(./src/**)``),
matchers and hook scripts written for Claude Code work on them unchanged::

    from hookloop import Worker
    from hookloop.tools.builtin import Workspace, builtin_tools

    worker = Worker(client, tools=builtin_tools(Workspace(".")), workspace=".")

Every path is resolved against the :class:`Workspace` root and refused outside it (and its additional
directories) unless the workspace allows it; files are opened without following a symbolic link swapped in after
that check. ``Bash`` is not confined that way: its commands can reach anything the process can, so govern it with
permission rules, or run it in the OS sandbox (``builtin_tools(..., sandbox=...)``, see :mod:`hookloop.sandbox`).

``Read``, ``Glob`` and ``Grep`` honour Read permission rules on every path they touch, not only on their
arguments: under a Worker with a policy they get a read filter (:attr:`hookloop.tools.ToolContext.read_filter`),
and a search leaves out what Read deny and ask rules cover, ending with ``(N paths left out by Read permission
rules)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hookloop.tools._base import Tool
from hookloop.tools.builtin._bash import BashTool
from hookloop.tools.builtin._files import EditTool, ReadTool, WriteTool
from hookloop.tools.builtin._search import Backend, GlobTool, GrepTool
from hookloop.tools.builtin._workspace import Workspace, WorkspaceError

if TYPE_CHECKING:
    from hookloop.sandbox import Sandbox

__all__ = [
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "Workspace",
    "WorkspaceError",
    "WriteTool",
    "builtin_tools",
]


def builtin_tools(
    workspace: Workspace | str | os.PathLike[str],
    *,
    bash_env: Mapping[str, str] | None = None,
    grep_backend: Backend = "auto",
    sandbox: Sandbox | None = None,
) -> list[Tool]:
    """Fresh ``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob`` and ``Grep`` tools sharing one workspace.

    A path or string becomes ``Workspace(path)``. ``bash_env`` is added to the environment of Bash commands;
    ``grep_backend`` chooses Grep's backend (see :class:`GrepTool`); ``sandbox`` runs Bash commands in an OS
    sandbox (see :mod:`hookloop.sandbox`). The Bash tool keeps its working directory
    between calls, so give each agent session its own set.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    return [
        BashTool(ws, env=bash_env, sandbox=sandbox),
        ReadTool(ws),
        WriteTool(ws),
        EditTool(ws),
        GlobTool(ws),
        GrepTool(ws, backend=grep_backend),
    ]
