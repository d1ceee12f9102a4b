"""The same guard as guard.js, written with hookloop.hookserver (the Python side of the "process" handler)."""

import re

from hookloop.hookserver import deny, serve

RM_RF = re.compile(r"\brm\s+-[a-z]*(rf|fr)")


def guard(event: str, data: dict) -> object:
    command = data.get("tool_input", {}).get("command", "")
    if RM_RF.search(command):
        return deny("the python guard refuses rm -rf")
    return None  # exit 0, no output: the call goes on


serve(guard)
