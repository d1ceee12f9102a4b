"""Tool-output truncation: cap what a tool result puts in front of the model, keeping head and tail."""

from __future__ import annotations

from hookloop.interceptors._base import ToolResultView

__all__ = ["ToolOutputTruncation", "truncate_middle"]

_READ_HINT = {
    "Read": "read the file again with offset and limit to see the cut part",
    "Bash": "re-run the command with a narrower output (head, tail, grep) to see the cut part",
    "Grep": "narrow the pattern or path, or use head_limit, to see the cut part",
}


def truncate_middle(text: str, max_chars: int, *, head_ratio: float = 0.5, hint: str = "") -> tuple[str, int]:
    """Keep ``max_chars`` characters (head and tail) and mark the cut; returns (text, characters cut)."""
    if len(text) <= max_chars:
        return text, 0
    head = int(max_chars * head_ratio)
    tail = max_chars - head
    # Cut at line boundaries when one is near, so the model never sees half a line at the seam.
    head_text = text[:head]
    newline = head_text.rfind("\n")
    if newline > head * 0.8:
        head_text = head_text[: newline + 1]
    tail_text = text[len(text) - tail :] if tail else ""
    newline = tail_text.find("\n")
    if 0 <= newline < tail * 0.2:
        tail_text = tail_text[newline + 1 :]
    cut = len(text) - len(head_text) - len(tail_text)
    lines = text.count("\n", len(head_text), len(text) - len(tail_text))
    how = f"; {hint}" if hint else ""
    marker = (
        f"\n[… {cut} characters (≈{cut // 4} tokens, {lines} lines) cut by hookloop from a {len(text)}-character "
        f"output{how} …]\n"
    )
    return head_text + marker + tail_text, cut


class ToolOutputTruncation:
    """Caps every tool result at ``max_chars`` characters — or ``max_tokens`` estimated tokens (≈4 characters
    each), whichever is smaller — keeping the head and the tail and inserting a marker that says how much was
    cut and how to get the rest. The original length is recorded in the result's ``meta``.
    """

    def __init__(self, max_chars: int = 30_000, *, max_tokens: int | None = None, head_ratio: float = 0.5) -> None:
        if max_chars < 1 or (max_tokens is not None and max_tokens < 1):
            raise ValueError("max_chars and max_tokens must be positive")
        if not 0.0 <= head_ratio <= 1.0:
            raise ValueError("head_ratio must be between 0 and 1")
        self.limit = min(max_chars, max_tokens * 4) if max_tokens is not None else max_chars
        self.head_ratio = head_ratio

    async def post_tool_call(self, result: ToolResultView) -> None:
        if len(result.content) <= self.limit:
            return
        hint = _READ_HINT.get(result.tool_name, "ask for a smaller part to see the cut part")
        original = len(result.content)
        result.content, cut = truncate_middle(result.content, self.limit, head_ratio=self.head_ratio, hint=hint)
        result.notes["truncated"] = {"original_chars": original, "cut_chars": cut}
