"""Helpers shared by the real provider clients: SDK error mapping, arguments JSON, images, usage.

SDK-free at import time: the SDK exception classes are handed in by each client module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Generic, NamedTuple, Protocol, Self, TypeVar

from hookloop._frozen import to_json_default
from hookloop.items import ImagePart, ToolCall
from hookloop.providers._errors import (
    InvalidRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    classify,
)
from hookloop.providers.base import LLMRequest

__all__: list[str] = []


class _ClosableSdk(Protocol):
    async def close(self) -> None: ...


SdkT = TypeVar("SdkT", bound=_ClosableSdk)


class SdkOwner(Generic[SdkT]):
    """What every SDK-backed client shares: its provider name, the SDK client it wraps, and closing that SDK
    client — only when it built it (one handed in via ``sdk_client=`` belongs to the caller)."""

    _sdk: SdkT
    _owned: bool
    _provider: str

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def sdk_client(self) -> SdkT:
        """The underlying SDK client (for calls hookloop does not wrap)."""
        return self._sdk

    async def aclose(self) -> None:
        """Close the HTTP connection pool (only when this client built the SDK client)."""
        if self._owned:
            await self._sdk.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


JSONDict = dict[str, Any]
"""A provider wire payload (only at the wire edge; never in a public signature)."""


class SdkErrors(NamedTuple):
    """The exception classes of one SDK (anthropic and openai share their shape)."""

    status: type[BaseException]  # APIStatusError: has status_code, response, body
    timeout: type[BaseException]  # APITimeoutError (a subclass of connection)
    connection: type[BaseException]  # APIConnectionError
    api: type[BaseException]  # APIError: the base; raised for errors inside a stream
    transport: type[BaseException]  # httpx2.TransportError (the SDK lets some escape mid-stream)
    transport_timeout: type[BaseException]  # httpx2.TimeoutException

    @classmethod
    def of(cls, sdk: Any) -> SdkErrors:
        """The classes of an SDK module (``anthropic`` or ``openai``: both name them alike) and of its transport."""
        import httpx2

        return cls(
            status=sdk.APIStatusError,
            timeout=sdk.APITimeoutError,
            connection=sdk.APIConnectionError,
            api=sdk.APIError,
            transport=httpx2.TransportError,
            transport_timeout=httpx2.TimeoutException,
        )


def _body_error(body: object) -> tuple[str | None, str | None]:
    """(error type or code, message) from a provider error body, if it has them."""
    if not isinstance(body, Mapping):
        return None, None
    inner = body.get("error", body)
    if not isinstance(inner, Mapping):
        return None, inner if isinstance(inner, str) else None
    kind = inner.get("code") or inner.get("type")
    message = inner.get("message")
    return (str(kind) if kind is not None else None), (message if isinstance(message, str) else None)


def map_sdk_error(exc: BaseException, *, provider: str, sdk: SdkErrors) -> ProviderError | None:
    """The hookloop error for an SDK (or transport) exception, or None when it is not a provider failure."""
    if isinstance(exc, (sdk.timeout, sdk.transport_timeout)):
        return ProviderTimeoutError(f"{provider}: the request timed out ({exc})", provider=provider)
    if isinstance(exc, sdk.connection):
        cause = exc.__cause__
        detail = f": {cause}" if cause is not None and str(cause) else ""
        return ProviderConnectionError(f"{provider}: connection failed ({exc}{detail})", provider=provider)
    if isinstance(exc, sdk.transport):
        return ProviderConnectionError(
            f"{provider}: the connection broke mid-stream ({type(exc).__name__}: {exc})", provider=provider
        )
    if isinstance(exc, sdk.status):
        status: int | None = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        body = getattr(exc, "body", None)
        kind, api_message = _body_error(body)
        kind = getattr(exc, "code", None) or kind or getattr(exc, "type", None)
        request_id = getattr(exc, "request_id", None)
        if response is not None and getattr(response, "status_code", None) == 200:
            status = None  # an error event inside a 200 stream: the status says nothing
        where = f"HTTP {status}" if status is not None else "stream error"
        text = api_message or getattr(exc, "message", None) or str(exc)
        return classify(
            provider=provider,
            message=f"{provider} {where} ({kind or 'error'}): {text}",
            status_code=status,
            error_type=kind,
            request_id=request_id if isinstance(request_id, str) else None,
            headers=headers,
        )
    if isinstance(exc, sdk.api):
        body = getattr(exc, "body", None)
        kind, api_message = _body_error(body if isinstance(body, Mapping) and "error" in body else {"error": body})
        kind = getattr(exc, "code", None) or getattr(exc, "type", None) or kind
        text = api_message or getattr(exc, "message", None) or str(exc)
        return classify(
            provider=provider,
            message=f"{provider} stream error ({kind or 'error'}): {text}",
            status_code=None,
            error_type=kind,
        )
    return None


def arguments_json(call: ToolCall) -> str:
    """The call's arguments as the model wrote them: the raw text when it was not a JSON object."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False, default=to_json_default)


def data_url(part: ImagePart) -> str:
    """An image part as a URL (its own, or a base64 data URL)."""
    if part.url is not None:
        return part.url
    return f"data:{part.media_type};base64,{part.data or ''}"


def parse_data_url(url: str) -> ImagePart:
    """Inverse of :func:`data_url`."""
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        return ImagePart(media_type=head[5:], data=data)
    return ImagePart(media_type="", url=url)


def require_model(request: LLMRequest, default: str | None, provider: str) -> str:
    """The model for this request: the request's, else the client's default; a clear error otherwise."""
    model = request.model or default
    if not model:
        raise InvalidRequestError(
            f"{provider}: no model given; pass model=... to the Worker or to the client",
            provider=provider,
            retryable=False,
        )
    return model


def split_tokens(total_input: int, cache_read: int, cache_write: int) -> tuple[int, int, int]:
    """OpenAI counts cached tokens inside the input total; hookloop (like Anthropic) reports them apart:
    ``input_tokens + cache_read_tokens + cache_write_tokens`` is the whole prompt."""
    uncached = max(0, total_input - cache_read - cache_write)
    return uncached, cache_read, cache_write
