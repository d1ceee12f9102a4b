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


def http_like_code(fields: Mapping[str, object]) -> int | None:
    """The HTTP status an error object carries in its own fields (``status_code``, ``status``, a numeric
    ``code``: what OpenRouter, Groq and other gateways put in errors inside a 200 stream), else None."""
    for key in ("status_code", "status", "code", "http_status"):
        value = fields.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, str) and len(value) == 3 and value.isdigit():
            value = int(value)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    return None


class _ErrorBody(NamedTuple):
    code: str | None  # the provider's error code (a name such as "tool_use_failed"; numbers are in status)
    type: str | None  # the provider's error type ("invalid_request_error", "overloaded_error", …)
    message: str | None
    status: int | None  # an HTTP-like status carried by the error object itself


def _error_body(body: object) -> _ErrorBody:
    """What a provider error body (``{"error": {...}}`` or the inner object itself) says."""
    if not isinstance(body, Mapping):
        return _ErrorBody(None, None, body if isinstance(body, str) and body else None, None)
    inner = body.get("error", body)
    if not isinstance(inner, Mapping):
        return _ErrorBody(None, None, inner if isinstance(inner, str) and inner else None, http_like_code(body))
    code, kind, message = inner.get("code"), inner.get("type"), inner.get("message")
    return _ErrorBody(
        code if isinstance(code, str) and code and not code.isdigit() else None,
        kind if isinstance(kind, str) and kind and kind != "error" else None,
        message if isinstance(message, str) and message else None,
        http_like_code(inner),
    )


def classify_error_object(
    fields: Mapping[str, object] | object,
    *,
    provider: str,
    what: str = "stream error",
    status_code: int | None = None,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    default_message: str | None = None,
) -> ProviderError:
    """The hookloop error for a provider error object: ``{"error": {...}}``, the inner object, or an error
    event's own fields (``code``, ``type``, ``message``, ``status_code``).

    An error inside a 200 stream is classified by the HTTP-like code it carries (``{"error": {"code": 400}}``,
    Groq's ``"status_code": 400``), like an HTTP error with that status: 4xx other than 408/429 is not
    retryable; 429, 5xx and overloaded stay retryable. ``status_code`` (the real HTTP status) wins over it.
    """
    error = _error_body(fields)
    status = status_code if status_code is not None else error.status
    label = error.code or error.type or (str(status) if status is not None else "error")
    return classify(
        provider=provider,
        message=f"{provider} {what} ({label}): {error.message or default_message or 'no message'}",
        status_code=status,
        error_type=error.code or error.type,
        other_type=error.type if error.code else None,
        request_id=request_id,
        headers=headers,
    )


def _request_url(exc: BaseException) -> str | None:
    """The URL of the request an SDK or httpx exception is about (without its query), if it says."""
    try:
        request = getattr(exc, "request", None)
        url = getattr(request, "url", None)
    except RuntimeError:  # httpx raises when an error has no request attached
        return None
    if url is None:
        return None
    text = str(url)
    return text.split("?", 1)[0] or None


def map_sdk_error(exc: BaseException, *, provider: str, sdk: SdkErrors) -> ProviderError | None:
    """The hookloop error for an SDK (or transport) exception, or None when it is not a provider failure."""
    url = _request_url(exc)
    where = f" to {url}" if url else ""
    if isinstance(exc, (sdk.timeout, sdk.transport_timeout)):
        timed_out = ProviderTimeoutError(f"{provider}: the request{where} timed out ({exc})", provider=provider)
        timed_out.url = url
        return timed_out
    if isinstance(exc, sdk.connection):
        cause = exc.__cause__
        detail = str(cause) if cause is not None and str(cause) else str(exc)
        failed = ProviderConnectionError(f"{provider}: cannot connect{where} ({detail})", provider=provider)
        failed.url = url
        return failed
    if isinstance(exc, sdk.transport):
        return ProviderConnectionError(
            f"{provider}: the connection broke mid-stream ({type(exc).__name__}: {exc})", provider=provider
        )
    body: object = getattr(exc, "body", None)
    sdk_message = getattr(exc, "message", None) or str(exc)
    if not isinstance(body, Mapping) or not body:
        body = {"message": sdk_message, "code": getattr(exc, "code", None), "type": getattr(exc, "type", None)}
    if isinstance(exc, sdk.status):
        status: int | None = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None)
        request_id = getattr(exc, "request_id", None)
        in_stream = response is not None and getattr(response, "status_code", None) == 200
        return classify_error_object(
            body,
            provider=provider,
            # an error event inside a 200 stream: the 200 says nothing; the error's own code may
            what="stream error" if in_stream else f"HTTP {status}",
            status_code=None if in_stream else status,
            request_id=request_id if isinstance(request_id, str) else None,
            headers=getattr(response, "headers", None),
            default_message=sdk_message,
        )
    if isinstance(exc, sdk.api):
        return classify_error_object(body, provider=provider, default_message=sdk_message)
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
