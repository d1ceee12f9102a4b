"""Provider errors: what a real model client raises, whatever SDK it wraps.

::

    ClientError                      (hookloop.errors; the Worker's "the model provider failed")
    └── ProviderError                a provider failure with its HTTP status, request id and error type
        ├── AuthenticationError      401/403: missing, wrong or unauthorised key            not retryable
        ├── RateLimitError           429 (``retry_after`` seconds when the provider said)   retryable
        ├── OverloadedError          529/503, ``overloaded_error``, ``server_error`` events retryable
        ├── ContextOverflowError     the prompt does not fit the model's context window     not retryable
        ├── InvalidRequestError      400/404/422 and other request errors                   not retryable
        ├── ProviderConnectionError  connection refused/reset, stream cut mid-message        retryable
        └── ProviderTimeoutError     the request or the stream timed out                    retryable

Anthropic errors are classified by their error ``type`` first (:func:`classify_anthropic`): the same type means
the same class whether it came as an HTTP error or as an ``event: error`` inside a 200 stream.

Clients map SDK exceptions at the boundary with ``raise … from exc`` (the SDK error stays in ``__cause__``);
the SDK has already applied its own retry policy (``max_retries``) before an error reaches hookloop.
These classes import no SDK, so ``except RateLimitError`` works whichever extras are installed.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

from hookloop.errors import ClientError

__all__ = [
    "AuthenticationError",
    "ContextOverflowError",
    "InvalidRequestError",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
]


class ProviderError(ClientError):
    """A model provider failed. Carries what the provider said: ``status_code`` (the HTTP status; for a
    failure inside a stream the HTTP-like code the error carried, if any; None without either),
    ``error_type`` (the provider's own error type or code) and ``request_id``."""

    default_retryable = True

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        retryable: bool | None = None,
        status_code: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(
            message, provider=provider, retryable=self.default_retryable if retryable is None else retryable
        )
        self.status_code = status_code
        self.error_type = error_type
        self.request_id = request_id


class AuthenticationError(ProviderError):
    """The API key is missing, wrong, or not allowed to use this model (401/403)."""

    default_retryable = False


class RateLimitError(ProviderError):
    """Too many requests (429). ``retry_after`` is the wait in seconds the provider asked for, if it did."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        retryable: bool | None = None,
        status_code: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message,
            provider=provider,
            retryable=retryable,
            status_code=status_code,
            error_type=error_type,
            request_id=request_id,
        )
        self.retry_after = retry_after


class OverloadedError(ProviderError):
    """The provider is overloaded or temporarily unavailable (529, 503, an ``overloaded_error`` event)."""


class ContextOverflowError(ProviderError):
    """The request does not fit the model's context window: compact the history or pick a larger model."""

    default_retryable = False


class InvalidRequestError(ProviderError):
    """The provider rejected the request itself (bad parameter, unknown model, malformed history)."""

    default_retryable = False


class ProviderConnectionError(ProviderError):
    """The connection failed or was cut before the reply was complete. ``url`` is the request's URL when the
    client knew it (the message names it too)."""

    url: str | None = None


class ProviderTimeoutError(ProviderConnectionError):
    """The request or the stream timed out."""


# -- classification (pure, shared by every client) ---------------------------------------------------------

_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "context length",
    "too many tokens",
    "input is too long",
    "exceeds the context",
)


_OVERFLOW_CODES = ("context_length_exceeded", "model_context_window_exceeded")


def is_context_overflow(message: str, code: str | None) -> bool:
    """Whether an error message or code says the prompt did not fit the context window."""
    if code in _OVERFLOW_CODES:
        return True
    lowered = message.lower()
    return any(marker in lowered for marker in _OVERFLOW_MARKERS)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def classify(
    *,
    provider: str,
    message: str,
    status_code: int | None,
    error_type: str | None,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    other_type: str | None = None,
) -> ProviderError:
    """Build the hookloop error for a provider failure from its status, error type/code and message.

    ``error_type`` is the provider's type or code (``overloaded_error``, ``rate_limit_exceeded``,
    ``context_length_exceeded`` …), ``other_type`` a second one when the provider gave both (Groq: code
    ``tool_use_failed``, type ``invalid_request_error``); a known one decides first, then the HTTP status
    (for an error inside a stream: the HTTP-like code it carried).
    """
    kind = (error_type or "").lower()
    kinds = (kind, (other_type or "").lower())

    def build(cls: type[ProviderError]) -> ProviderError:
        return cls(message, provider=provider, status_code=status_code, error_type=error_type, request_id=request_id)

    def known(*names: str) -> bool:
        return kinds[0] in names or kinds[1] in names

    if (is_context_overflow(message, kind) or known(*_OVERFLOW_CODES)) and status_code in (None, 400, 413, 422):
        return build(ContextOverflowError)
    if known("authentication_error", "permission_error", "invalid_api_key") or status_code in (401, 403):
        return build(AuthenticationError)
    if known("rate_limit_error", "rate_limit_exceeded", "insufficient_quota") or status_code == 429:
        return RateLimitError(
            message,
            provider=provider,
            status_code=status_code,
            error_type=error_type,
            request_id=request_id,
            retry_after=parse_retry_after(headers),
            # OpenAI's insufficient_quota is a 429 that no retry cures.
            retryable=not known("insufficient_quota"),
        )
    if known("overloaded_error", "overloaded", "server_is_overloaded", "slow_down") or status_code in (503, 529):
        return build(OverloadedError)
    if known("timeout_error", "request_timeout") or status_code in (408, 504):
        return build(ProviderTimeoutError)
    if known("invalid_request_error", "not_found_error", "request_too_large", "invalid_prompt") or (
        status_code is not None and 400 <= status_code < 500
    ):
        return build(InvalidRequestError)
    # api_error / server_error / other 5xx / unknown: the provider's fault; a retry may help.
    return build(ProviderError)


# -- Anthropic (the Messages API's error types: https://docs.anthropic.com/en/api/errors) ----------------------

_ANTHROPIC_TYPES: Mapping[str, tuple[type[ProviderError], bool]] = {
    "invalid_request_error": (InvalidRequestError, False),
    "not_found_error": (InvalidRequestError, False),
    "request_too_large": (InvalidRequestError, False),
    "conflict_error": (InvalidRequestError, False),
    "memory_precondition_failed_error": (InvalidRequestError, False),
    "memory_path_conflict_error": (InvalidRequestError, False),
    "authentication_error": (AuthenticationError, False),
    "permission_error": (AuthenticationError, False),
    "billing_error": (ProviderError, False),  # credit balance / payment: no retry cures it
    "rate_limit_error": (RateLimitError, True),
    "timeout_error": (ProviderTimeoutError, True),
    "api_error": (ProviderError, True),
    "overloaded_error": (OverloadedError, True),
}


def classify_anthropic(
    *,
    provider: str,
    message: str,
    status_code: int | None,
    error_type: str | None,
    request_id: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The hookloop error for an Anthropic failure (an HTTP error, or an ``event: error`` inside a stream).

    The error's ``type`` decides, whatever the message says (a ``rate_limit_error`` about "too many tokens" is
    a rate limit, not a context overflow): ``overloaded_error``, ``api_error``, ``rate_limit_error`` and
    ``timeout_error`` are retryable; ``invalid_request_error`` (a :class:`ContextOverflowError` when its message
    says the prompt is too long), ``not_found_error``, ``request_too_large``, ``authentication_error``,
    ``permission_error`` and ``billing_error`` are not. An absent or unknown type falls back to
    :func:`classify` (the HTTP status, then the message).
    """
    known = _ANTHROPIC_TYPES.get(error_type or "")
    if known is None:
        error = classify(
            provider=provider, message=message, status_code=status_code, error_type=error_type, request_id=request_id
        )
        if isinstance(error, RateLimitError):
            error.retry_after = retry_after
        return error
    cls, retryable = known
    if error_type == "invalid_request_error" and is_context_overflow(message, None):
        cls = ContextOverflowError
    if cls is RateLimitError:
        return RateLimitError(
            message,
            provider=provider,
            status_code=status_code,
            error_type=error_type,
            request_id=request_id,
            retry_after=retry_after,
            retryable=retryable,
        )
    return cls(
        message,
        provider=provider,
        retryable=retryable,
        status_code=status_code,
        error_type=error_type,
        request_id=request_id,
    )
