#!/usr/bin/env python3
"""PostToolUse (matcher Write|Edit): append every written file to .claude/writes.log.

tool_input.file_path is absolute (as Claude Code sends it); tool_response is the tool's structured result.
"""

import json
import os
import sys

payload = json.load(sys.stdin)
project = os.environ["CLAUDE_PROJECT_DIR"]
path = os.path.relpath(payload["tool_input"]["file_path"], project)
with open(os.path.join(project, ".claude", "writes.log"), "a", encoding="utf-8") as log:
    log.write(f"{payload['hook_event_name']} {payload['tool_name']} {path}\n")
