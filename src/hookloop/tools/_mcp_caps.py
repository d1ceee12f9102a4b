"""MCP client capabilities: roots, sampling and elicitation, answered by hookloop. Private: the public surface is
:class:`hookloop.tools.mcp.MCPClientOptions` and :meth:`hookloop.tools.mcp.MCPServer.bind`.

Every server is offered ``roots`` and ``elicitation``; ``sampling`` only when its options opt in.

- **roots**: the configured ``roots``, else the workspace of the Worker the server is bound to, else none.
- **sampling** (opt-in per server): the request goes through the bound Worker's own LLM client, with its model;
  no tools are offered and ``max_tokens`` is capped by ``sampling_max_tokens``. The Worker's
  ``pre_llm_request`` hooks see it first — marked: ``run_id`` is ``"mcp-sampling:<server>"``, ``turn`` is 0
  and every item in ``new_items`` carries ``meta={"source": "mcp_sampling", "mcp_server": <server>}`` — and a
  ``Cancel`` refuses it. Interceptors do not see it (it is not part of the Worker's history). Unbound, or not
  opted in: the server gets an error.
- **elicitation**: routed as :mod:`hookloop.tools._elicitation` describes; by default declined.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp import types as mcp_types

from hookloop._frozen import freeze_object, thaw_object
from hookloop.errors import HookloopError
from hookloop.hooks.events import PRE_LLM_REQUEST
from hookloop.hooks.summaries import PreLlmRequestInfo
from hookloop.items import ContentPart, ImagePart, Message, TextPart
from hookloop.stream import StopEvent, StreamError, TextDelta
from hookloop.tools._elicitation import (
    ElicitationHandler,
    ElicitationRequest,
    elicitation_routing,
    route_elicitation,
)

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["ClientState", "MCPClientOptions"]

_log = logging.getLogger("hookloop.tools.mcp")
_STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}
SAMPLING_MARKER = "mcp_sampling"


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPClientOptions:
    """What hookloop answers when an MCP server asks the client (see :mod:`hookloop.tools._mcp_caps`).

    Args:
        roots: directories offered as the server's roots; ``None``: the bound Worker's workspace.
        sampling: let the server ask the bound Worker's model for completions (off by default: a server would
            otherwise spend your tokens and read the answers).
        sampling_max_tokens: upper bound on a sampling request's ``maxTokens``.
        elicitation: this server's elicitation handler; ``None``: the Worker-wide one
            (:func:`~hookloop.tools.mcp.elicitation_routing`), else decline.
    """

    roots: Sequence[str | os.PathLike[str]] | None = None
    sampling: bool = False
    sampling_max_tokens: int = 4096
    elicitation: ElicitationHandler | None = None

    def __post_init__(self) -> None:
        if isinstance(self.roots, str | os.PathLike):
            raise TypeError("MCPClientOptions.roots must be a sequence of paths, not one path")
        if not isinstance(self.sampling_max_tokens, int) or self.sampling_max_tokens < 1:
            raise ValueError("MCPClientOptions.sampling_max_tokens must be a positive integer")


class ClientState:
    """One open server's side of the capabilities: its options and the Worker it is bound to."""

    __slots__ = ("name", "options", "worker")

    def __init__(self, name: str, options: MCPClientOptions | None) -> None:
        self.name = name
        self.options = options or MCPClientOptions()
        self.worker: Worker | None = None

    def session_kwargs(self) -> dict[str, Any]:
        """The ``ClientSession`` callbacks (the SDK declares a capability for each callback given)."""
        kwargs: dict[str, Any] = {"list_roots_callback": self.list_roots, "elicitation_callback": self.elicit}
        if self.options.sampling:
            kwargs["sampling_callback"] = self.sample
        return kwargs

    def roots(self) -> list[Path]:
        configured = self.options.roots
        if configured is not None:
            return [Path(p).resolve() for p in configured]
        workspace = self.worker.workspace if self.worker is not None else None
        return [Path(workspace).resolve()] if workspace is not None else []

    async def list_roots(self, context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(
            roots=[mcp_types.Root(uri=path.as_uri(), name=path.name or str(path)) for path in self.roots()]
        )

    async def elicit(self, context: Any, params: Any) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        mode = getattr(params, "mode", "form")
        schema = getattr(params, "requested_schema", None)
        request = ElicitationRequest(
            server=self.name,
            message=str(params.message),
            mode="url" if mode == "url" else "form",
            requested_schema=freeze_object(schema) if isinstance(schema, dict) else None,
            url=getattr(params, "url", None),
            elicitation_id=getattr(params, "elicitation_id", None),
        )
        routing = elicitation_routing(self.worker) if self.worker is not None else None
        try:
            response = await route_elicitation(request, routing, self.options.elicitation)
        except Exception:
            _log.exception("MCP server %r: an elicitation handler failed; declined", self.name)
            return mcp_types.ElicitResult(action="decline")
        if response.action != "accept" or mode == "url":
            return mcp_types.ElicitResult(action=response.action)
        return mcp_types.ElicitResult(action="accept", content=thaw_object(response.content))

    async def sample(
        self, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        try:
            return await self._sample(params)
        except _Refused as exc:
            _log.info("MCP server %r: sampling refused: %s", self.name, exc)
            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=str(exc))
        except HookloopError as exc:
            _log.warning("MCP server %r: sampling failed: %s", self.name, exc)
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=f"sampling failed: {exc}")

    async def _sample(self, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        from hookloop.hooks._dispatch import run_chain
        from hookloop.providers.base import LLMRequest

        worker = self.worker
        if worker is None:
            raise _Refused(f"MCP server {self.name!r}: sampling needs a Worker bound to the server (server.bind)")
        if params.tools:
            raise _Refused(f"MCP server {self.name!r}: sampling with tools is not supported")
        meta = {"source": SAMPLING_MARKER, "mcp_server": self.name}
        items = [
            Message(role=m.role, content=_parts(self.name, m.content), meta=freeze_object(meta))
            for m in params.messages
        ]
        if not items:
            raise _Refused(f"MCP server {self.name!r}: a sampling request needs at least one message")
        run_id = f"mcp-sampling:{self.name}"
        chain = worker.hooks.chains[PRE_LLM_REQUEST.index]
        if chain:
            chars = sum(len(i.text) for i in items) + len(params.system_prompt or "")
            info = PreLlmRequestInfo(
                run_id=run_id,
                session_id=worker.session_id,
                turn=0,
                model=worker.model,
                item_count=len(items),
                token_estimate=chars // 4 + 1,
                new_items=tuple(items),
            )
            decided = await run_chain(PRE_LLM_REQUEST, chain, info)
            if decided is not None:
                result, handler = decided
                raise _Refused(f"sampling refused by hook {handler.name}: {getattr(result, 'reason', '')}")
        request = LLMRequest(
            system=params.system_prompt,
            items=items,
            tools=(),
            model=worker.model,
            max_tokens=min(max(1, params.max_tokens), self.options.sampling_max_tokens),
            run_id=run_id,
        )
        text: list[str] = []
        stop = "end_turn"
        stream = worker.client.stream(request)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, StopEvent):
                    stop = event.reason
                elif isinstance(event, StreamError):
                    raise HookloopError(f"the model reported an error: {event.message}")
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()  # release the provider connection however the stream ended
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="".join(text)),
            model=worker.model or worker.client.provider,
            stop_reason=_STOP_REASONS.get(stop, stop),
        )


class _Refused(Exception):
    """A sampling request hookloop will not run (the message goes to the server)."""


def _parts(server: str, content: Any) -> tuple[ContentPart, ...]:
    blocks: list[Any] = content if isinstance(content, list) else [content]
    parts: list[ContentPart] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(TextPart(text=str(block.text)))
        elif kind == "image":
            parts.append(ImagePart(media_type=str(block.mime_type), data=str(block.data)))
        else:
            raise _Refused(f"MCP server {server!r}: sampling content of type {kind!r} is not supported")
    return tuple(parts)
