"""The inbox's guards: the access token (query once, then a cookie), CSRF tokens on forms, allowed Host names,
security headers, and the secret filter every rendered string goes through."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp

__all__ = ["Guard", "SecretFilter", "new_token"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
REFUSED = (
    "<!doctype html><meta charset=utf-8><title>hookloop inbox: token required</title>"
    "<h1>Access token required</h1><p>Open the address <code>hookloop serve</code> printed when it started "
    "(it ends in <code>?token=…</code>).</p>"
)


def new_token() -> str:
    """A random access token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


class Guard:
    """What a request must show: the access token, the CSRF token of a form, an allowed Host."""

    def __init__(self, token: str, *, allowed_hosts: Iterable[str] | None = None) -> None:
        if len(token) < 16:
            raise ValueError("the access token must have at least 16 characters")
        self.token = token
        digest = hashlib.sha256(token.encode()).hexdigest()
        self.cookie = f"hookloop_inbox_{digest[:12]}"  # servers on other ports keep their own cookie
        self.csrf = hmac.new(token.encode(), b"hookloop-inbox-csrf", hashlib.sha256).hexdigest()
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    def token_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def csrf_ok(self, value: object) -> bool:
        return isinstance(value, str) and hmac.compare_digest(value.encode(), self.csrf.encode())

    def host_ok(self, request: Request) -> bool:
        if self.allowed_hosts is None:
            return True
        host = request.headers.get("host", "").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return host in self.allowed_hosts or name in self.allowed_hosts


class GuardMiddleware(BaseHTTPMiddleware):
    """Refuses (403) every request without the token; a valid ``?token=`` sets the cookie and redirects to the
    same address without it (so the token stays out of the history and logs). Adds the security headers."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        super().__init__(app)
        self.guard = guard

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        guard = self.guard
        if not guard.host_ok(request):
            return _headers(HTMLResponse("<h1>Unknown host</h1>", status_code=421))
        query = request.query_params.get("token")
        if query is not None:
            if not guard.token_ok(query):
                return _headers(HTMLResponse(REFUSED, status_code=403))
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = URL(path=request.url.path, query=urlencode(rest))
            response: Response = RedirectResponse(str(target), status_code=303)
            response.set_cookie(guard.cookie, guard.token, httponly=True, samesite="strict", path="/")
            return _headers(response)
        bearer = request.headers.get("authorization", "")
        presented = bearer[7:] if bearer.lower().startswith("bearer ") else request.cookies.get(guard.cookie)
        if not guard.token_ok(presented):
            return _headers(HTMLResponse(REFUSED, status_code=403))
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and origin != "null" and _host_of(origin) != request.headers.get("host", ""):
                return _headers(HTMLResponse("<h1>Cross-origin request refused</h1>", status_code=403))
        return _headers(await call_next(request))


def _host_of(origin: str) -> str:
    return origin.split("://", 1)[-1].rstrip("/")


def _headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


class SecretFilter:
    """Replaces the values of this process's secret environment variables (API keys, tokens, passwords — the
    rule command hooks use, :func:`hookloop.command_hooks.environment.is_secret`) wherever they appear in
    rendered text, and the inbox's own access token."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        from hookloop.command_hooks.environment import is_secret

        values = {v for k, v in os.environ.items() if len(v) >= 8 and is_secret(k, v)}
        values.update(v for v in extra if len(v) >= 8)
        self.values = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, "[secret withheld]")
        return text


Handler = Callable[[Request], Awaitable[Response]]
