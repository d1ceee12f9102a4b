"""The built-in tools' structured results (:attr:`hookloop.tools.ToolOutput.structured`): Claude Code's
``tool_response`` objects, which PostToolUse command hooks receive. Pure functions.

=========  ================================================================================================
tool       shape
=========  ================================================================================================
Bash       ``{stdout, stderr, interrupted, isImage}``: hookloop runs a command with one output stream, so
           ``stdout`` holds stdout and stderr interleaved and ``stderr`` is ``""``
Read       ``{type: "text", file: {filePath, content, numLines, startLine, totalLines}}``; ``content`` is the
           lines shown, without line numbers
Write      ``{type: "create" | "update", filePath, content, structuredPatch, originalFile}``; on an update
           whose old content the call may not read, ``originalFile`` is ``null`` and the patch empty
Edit       ``{filePath, oldString, newString, originalFile, structuredPatch, userModified, replaceAll}``
Glob       ``{filenames, durationMs, numFiles, truncated}`` (absolute paths, as listed)
Grep       ``{mode, numFiles, filenames}`` and, in ``content`` / ``count`` mode, ``content`` and ``numLines`` /
           ``numMatches``
=========  ================================================================================================

``structuredPatch`` hunks are ``{oldStart, oldLines, newStart, newLines, lines}`` with ``lines`` prefixed
``" "``, ``"-"`` or ``"+"`` (the ``diff`` package's structured patch, three lines of context).
"""

from __future__ import annotations

import difflib

from hookloop._frozen import JSONValue

__all__ = ["bash_response", "edit_response", "read_response", "structured_patch", "write_response"]

_CONTEXT = 3


def structured_patch(old: str, new: str) -> list[JSONValue]:
    """The hunks turning ``old`` into ``new``."""
    a, b = old.split("\n"), new.split("\n")
    hunks: list[JSONValue] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(_CONTEXT):
        first, last = group[0], group[-1]
        lines: list[JSONValue] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[i1:i2])
                continue
            lines.extend("-" + line for line in a[i1:i2])
            lines.extend("+" + line for line in b[j1:j2])
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunks.append(
            {
                "oldStart": first[1] + 1 if old_lines else first[1],
                "oldLines": old_lines,
                "newStart": first[3] + 1 if new_lines else first[3],
                "newLines": new_lines,
                "lines": lines,
            }
        )
    return hunks


def bash_response(output: str, *, interrupted: bool = False) -> dict[str, JSONValue]:
    return {"stdout": output, "stderr": "", "interrupted": interrupted, "isImage": False}


def read_response(path: str, lines: list[str], *, start: int, total: int) -> dict[str, JSONValue]:
    return {
        "type": "text",
        "file": {
            "filePath": path,
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": start,
            "totalLines": total,
        },
    }


def write_response(path: str, content: str, *, original: str | None, created: bool) -> dict[str, JSONValue]:
    return {
        "type": "create" if created else "update",
        "filePath": path,
        "content": content,
        "structuredPatch": structured_patch(original, content) if original is not None else [],
        "originalFile": original,
    }


def edit_response(
    path: str, old_string: str, new_string: str, *, original: str, updated: str, replace_all: bool
) -> dict[str, JSONValue]:
    return {
        "filePath": path,
        "oldString": old_string,
        "newString": new_string,
        "originalFile": original,
        "structuredPatch": structured_patch(original, updated),
        "userModified": False,
        "replaceAll": replace_all,
    }
