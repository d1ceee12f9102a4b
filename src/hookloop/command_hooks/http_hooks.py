"""HTTP hooks (``{"type": "http", ...}``): POST the hook input as JSON, read the answer like stdout.

Claude Code's rules: 2xx + empty body = success, 2xx + JSON object = parsed like stdout, anything else is a
non-blocking error (HTTP hooks cannot block by status code). hookloop adds: only ``http://``/``https://``, an
optional URL allowlist (``allowedHttpHookUrls``, ``*`` wildcards), header values interpolating ``$VAR``/``${VAR}``
only for variables the hook lists in ``allowedEnvVars`` (and the optional global ``httpHookAllowedEnvVars``
allows) — other references become empty strings, as in Claude Code — and redirects are never followed (a 3xx is
a non-2xx answer, and cannot lead around the allowlist).

The request uses the standard library (``urllib``) in a worker thread: no extra dependency.
"""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Literal

from .model import OUTPUT_CAP, HookOutcome, HttpHandler

__all__ = ["interpolate_header", "run_http", "url_allowed"]

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def url_allowed(url: str, allowlist: Sequence[str] | None) -> bool:
    """Whether an HTTP hook may call ``url``: it must be http(s), and match an allowlist pattern (``*`` matches
    any characters) when there is an allowlist. ``()`` allows nothing."""
    if not url.lower().startswith(("http://", "https://")):
        return False
    if allowlist is None:
        return True
    return any(re.fullmatch(".*".join(map(re.escape, p.split("*"))), url) for p in allowlist)


def interpolate_header(value: str, allowed: Sequence[str], environ: Mapping[str, str]) -> str:
    """Claude Code's header rule: ``$VAR`` / ``${VAR}`` become the variable's value when ``VAR`` is allowed,
    and the empty string otherwise."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return environ.get(name, "") if name in allowed else ""

    return _ENV_REF.sub(substitute, value)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: a 3xx is a non-2xx answer (and cannot lead around the URL allowlist)."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class _HttpFailure(Exception):
    def __init__(self, kind: Literal["timeout", "connection"], detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def _post(url: str, body: bytes, headers: Mapping[str, str], timeout: float, cap: int) -> tuple[int, bytes, bool]:
    """Blocking POST (run in a worker thread): ``(status, body, truncated)``; raises :class:`_HttpFailure`."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            data = response.read(cap + 1)
            return int(response.status), data[:cap], len(data) > cap
    except urllib.error.HTTPError as exc:
        with exc:
            data = exc.read(cap + 1)
        return int(exc.code), data[:cap], len(data) > cap
    except TimeoutError as exc:
        raise _HttpFailure("timeout", str(exc) or "timed out") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _HttpFailure("timeout", str(exc.reason) or "timed out") from exc
        raise _HttpFailure("connection", str(exc.reason)) from exc
    except (OSError, ValueError) as exc:
        raise _HttpFailure("connection", str(exc) or type(exc).__name__) from exc


async def run_http(
    handler: HttpHandler,
    body: bytes,
    *,
    timeout: float,  # noqa: ASYNC109 -- also the socket timeout of the worker thread
    environ: Mapping[str, str],
    url_allowlist: Sequence[str] | None = None,
    env_allowlist: Sequence[str] | None = None,
    output_cap: int = OUTPUT_CAP,
) -> HookOutcome:
    """POST ``body`` (the hook input JSON) to ``handler.url``.

    The URL must be http(s) and pass ``url_allowlist``; header values interpolate only the variables both the
    hook's ``allowedEnvVars`` and ``env_allowlist`` (when set) allow — others become empty strings. Redirects
    are not followed. Outcomes: ``ok`` with ``http_status`` 2xx and the body as ``stdout``; ``http_error`` for
    non-2xx statuses and connection failures; ``timeout``; ``url_not_allowed``. The request runs in a worker
    thread (stdlib ``urllib``): on timeout or cancellation we stop waiting at once, and the thread itself ends
    within ``timeout`` (the socket timeout).
    """
    name = handler.url
    loop = asyncio.get_running_loop()
    started = loop.time()
    if not url_allowed(handler.url, url_allowlist):
        return HookOutcome(
            name=name,
            error_kind="url_not_allowed",
            error=f"HTTP hook {name} is not allowed (not http(s), or not matched by allowedHttpHookUrls)",
            timeout=timeout,
        )
    allowed = [v for v in handler.allowed_env_vars if env_allowlist is None or v in env_allowlist]
    headers = {key: interpolate_header(value, allowed, environ) for key, value in handler.headers}
    try:
        async with asyncio.timeout(timeout):
            status, data, truncated = await asyncio.to_thread(_post, handler.url, body, headers, timeout, output_cap)
    except TimeoutError:
        return _http_timeout(name, timeout, loop.time() - started)
    except _HttpFailure as failure:
        if failure.kind == "timeout":
            return _http_timeout(name, timeout, loop.time() - started)
        return HookOutcome(
            name=name,
            error_kind="http_error",
            error=f"HTTP hook {name} failed: {failure.detail}",
            timeout=timeout,
            duration=loop.time() - started,
        )
    ok = 200 <= status < 300
    error = None if ok else f"HTTP hook {name} answered {status}"
    if ok and truncated:  # a cut answer is no answer: never parsed
        error = f"HTTP hook {name} answered more than {output_cap} bytes (the output cap); the answer was discarded"
    return HookOutcome(
        name=name,
        error_kind=("output_too_large" if truncated else "ok") if ok else "http_error",
        error=error,
        http_status=status,
        stdout=data,
        stdout_truncated=truncated,
        timeout=timeout,
        duration=loop.time() - started,
    )


def _http_timeout(name: str, timeout: float, duration: float) -> HookOutcome:
    return HookOutcome(
        name=name,
        error_kind="timeout",
        error=f"HTTP hook {name} timed out after {timeout:g} s",
        timed_out=True,
        timeout=timeout,
        duration=duration,
    )
