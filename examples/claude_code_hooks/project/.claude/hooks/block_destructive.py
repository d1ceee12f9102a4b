#!/usr/bin/env python3
"""PreToolUse (matcher Bash): refuse destructive commands.

Claude Code's contract: the event as JSON on stdin (tool_name, tool_input, cwd, session_id, ...). Exit 2 blocks
the call and the stderr text goes to the model; exit 0 lets it through (the permission rules still apply).
"""

import json
import re
import sys

payload = json.load(sys.stdin)
command = payload.get("tool_input", {}).get("command", "")
if re.search(r"\b(rm|rmdir|shred|mkfs|dd)\b|git\s+(reset\s+--hard|clean\b)", command):
    print(f"Blocked by block_destructive.py: {command!r} deletes data. Ask the user instead.", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
