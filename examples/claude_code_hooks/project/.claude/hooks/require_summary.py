#!/usr/bin/env python3
"""Stop: do not let the model finish until its answer ends with a SUMMARY line.

{"decision": "block", "reason": ...} sends the model back to work with the reason. stop_hook_active is true when
the model is already continuing because of a Stop hook: let it stop then, so a stubborn model cannot loop.
"""

import json
import sys

payload = json.load(sys.stdin)
message = payload.get("last_assistant_message") or ""
lines = message.strip().splitlines()
if not payload.get("stop_hook_active") and not (lines and lines[-1].startswith("SUMMARY:")):
    print(json.dumps({"decision": "block", "reason": "End your answer with a line 'SUMMARY: <one sentence>'."}))
sys.exit(0)
