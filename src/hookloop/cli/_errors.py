"""How the command line words an error: one line (whatever the message held, and however narrow or redirected
stderr is), the command line's own advice (a flag, a variable) instead of the library's (``pass api_key=``),
and for a connection failure the URL that failed and what to check."""

from __future__ import annotations

from rich.console import Console

from hookloop.errors import HookloopError

__all__ = ["describe_error", "error_console", "one_line", "print_error"]


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of blanks folded into single spaces."""
    return " ".join(text.split())


def describe_error(exc: BaseException) -> str:
    """The message of ``exc`` as the command line says it (one line, no library advice)."""
    from hookloop.errors import CheckpointError
    from hookloop.providers import AuthenticationError, ProviderConnectionError, ProviderTimeoutError

    text = exc.message if isinstance(exc, HookloopError) else str(exc)
    if isinstance(exc, CheckpointError) and "already resumed" in text:
        text += " (hookloop resume --fork resumes it again as a new run)"
    elif isinstance(exc, ProviderTimeoutError):
        text += f"{_at(exc)}: the model did not answer in time; try again, or check the server and your network"
    elif isinstance(exc, ProviderConnectionError):
        text += f"{_at(exc)}: {_connection_advice(exc)}"
    elif isinstance(exc, AuthenticationError):
        text += f": check the API key ({_key_variable(exc.provider)})"
    return one_line(text)


def _at(exc: BaseException) -> str:
    url = getattr(exc, "url", None)
    return f" [{url}]" if url and url not in str(exc) else ""


def _connection_advice(exc: BaseException) -> str:
    provider = getattr(exc, "provider", "")
    if provider == "openai-compatible":
        return "is the server running at that URL? (the URL after @ in --model, or OPENAI_BASE_URL)"
    variable = "ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL"
    return f"check your network or proxy, and {variable} if you set it"


def _key_variable(provider: str) -> str:
    if provider == "anthropic":
        return "ANTHROPIC_API_KEY"
    if provider == "openai-compatible":
        return "OPENAI_COMPATIBLE_API_KEY"
    return "OPENAI_API_KEY"


def error_console() -> Console:
    """A stderr console that never wraps a line (a pipe is 80 columns to rich)."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


def print_error(message: str | BaseException, console: Console | None = None) -> None:
    """``hookloop: <message>`` on one line of stderr."""
    text = describe_error(message) if isinstance(message, BaseException) else one_line(message)
    (console or error_console()).print(f"hookloop: {text}", markup=False, highlight=False, soft_wrap=True)
