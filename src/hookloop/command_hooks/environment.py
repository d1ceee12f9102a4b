"""What a command hook's environment holds, and the session env files hooks may write (``CLAUDE_ENV_FILE``).

**The hook environment** (built by :func:`hook_environment_bytes` for every command hook and Cline script):

1. hookloop's own environment (or ``RunnerOptions.base_env``), with the settings ``env`` block applied on top
   (Claude Code's ``{"env": {"NAME": "value"}}``; higher layers win per name; a project file's block only once
   the project is trusted);
2. minus every **secret** (:func:`is_secret_name`), unless a user-level settings file passes it by name in
   ``commandHookAllowedEnvVars`` (exact names, or a prefix ending in ``*``);
3. plus the protocol variables, which no setting can override: ``CLAUDE_PROJECT_DIR``,
   ``HOOKLOOP_PROJECT_DIR``, ``CLAUDE_CODE_SESSION_ID``/``HOOKLOOP_SESSION_ID``, ``CLAUDE_ENV_FILE`` (see below),
   ``CLAUDECODE=1`` for command hooks (not Cline scripts), as Claude Code sets it, and, for plugin hooks,
   ``CLAUDE_PLUGIN_ROOT`` / ``CLAUDE_PLUGIN_DATA``.

**The secret rule** — a variable is withheld from hooks when its name, upper-cased,

* starts with a model-provider or cloud-credential prefix (:data:`SECRET_PREFIXES`: ``ANTHROPIC_``,
  ``OPENAI_``, ``AZURE_``, ``AWS_``, ``GOOGLE_``, ``GEMINI_``, ``VERTEX_``, ``MISTRAL_``, ``COHERE_``, ``GROQ_``,
  ``XAI_``, ``DEEPSEEK_``, ``OPENROUTER_``, ``TOGETHER_``, ``FIREWORKS_``, ``PERPLEXITY_``, ``REPLICATE_``,
  ``HF_``, ``HUGGINGFACE_``, ``HUGGING_FACE_``, ``VOYAGE_``, ``CLAUDE_CODE_OAUTH``, ``OTEL_``), or
* has an ``_``-separated word that names a credential (:data:`SECRET_WORDS`: ``KEY``, ``KEYS``, ``APIKEY``,
  ``TOKEN``, ``TOKENS``, ``SECRET``, ``SECRETS``, ``PASSWORD``, ``PASSWORDS``, ``PASSWD``, ``PASS``,
  ``PASSPHRASE``, ``CREDENTIAL``, ``CREDENTIALS``, ``CREDS``, ``AUTH``, ``PAT``, ``PRIVATE``, ``COOKIE``,
  ``DSN``), or
* ends with ``KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD`` glued to another word (``GHTOKEN``, ``APIKEY``),

or its value is a URL that carries a password (``scheme://user:password@host``) or starts like a well-known
credential (:data:`SECRET_VALUE` — ``sk-…``, ``ghp_…``, ``github_pat_…``, ``glpat-…``, ``xoxb-…``, ``AKIA…``,
``AIza…``, ``hf_…``, ``npm_…``, a PEM private key). ``OTEL_*`` is covered by the
prefixes (Claude Code removes it from every subprocess). hookloop's own per-spawn token (``HOOKLOOP_SPAWN``) is
added after the filter. The rule errs towards withholding: a hook that needs ``GITHUB_TOKEN`` or
``SSH_AUTH_SOCK`` gets it only when ``commandHookAllowedEnvVars`` names it.

**Session env files** (:class:`SessionEnvFiles`): SessionStart, Setup, CwdChanged and FileChanged hooks get
``CLAUDE_ENV_FILE``, a file in ``<hookloop home>/session-env/<session id>/`` (a private 0700 folder, one file per
event: ``setup.sh``, ``sessionstart.sh``, ``cwdchanged.sh``, ``filechanged.sh``) that they may append ``export``
lines to. Each firing of the event starts its file empty (so a CwdChanged for a new folder replaces the last
folder's exports). The Bash tool evaluates the files, in that order, at the start of every later command of the
session (Claude Code's session environment script), so the variables reach the commands the model runs.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_FILE_EVENTS",
    "SECRET_PREFIXES",
    "SECRET_VALUE",
    "SECRET_WORDS",
    "SessionEnvFiles",
    "env_allowed",
    "hook_environment_bytes",
    "is_secret",
    "is_secret_name",
]

SECRET_PREFIXES: tuple[str, ...] = (
    "ANTHROPIC_",
    "OPENAI_",
    "AZURE_",
    "AWS_",
    "GOOGLE_",
    "GEMINI_",
    "VERTEX_",
    "MISTRAL_",
    "COHERE_",
    "GROQ_",
    "XAI_",
    "DEEPSEEK_",
    "OPENROUTER_",
    "TOGETHER_",
    "FIREWORKS_",
    "PERPLEXITY_",
    "REPLICATE_",
    "HF_",
    "HUGGINGFACE_",
    "HUGGING_FACE_",
    "VOYAGE_",
    "CLAUDE_CODE_OAUTH",
    "OTEL_",
)
"""Name prefixes withheld from hooks: model providers, cloud credentials, OpenTelemetry."""

SECRET_WORDS: frozenset[str] = frozenset(
    {
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "AUTH",
        "PAT",
        "PRIVATE",
        "COOKIE",
        "DSN",
    }
)
"""``_``-separated name words that mark a credential."""

_GLUED_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
SECRET_VALUE = re.compile(
    r"\s*(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|hf_[A-Za-z0-9]{30,}"
    r"|npm_[A-Za-z0-9]{30,}|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)
"""Values that start like a well-known credential format, whatever the variable is called."""
_PROTECTED = frozenset({"HOOKLOOP_SPAWN"})

ENV_FILE_EVENTS: tuple[str, ...] = ("Setup", "SessionStart", "CwdChanged", "FileChanged")
"""Events whose hooks get ``CLAUDE_ENV_FILE``, in the order the Bash tool applies their files."""


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether the variable ``name`` is withheld from hooks by name (see the module docstring). Pure."""
    upper = name.upper()
    if upper in _PROTECTED:
        return False
    if upper.startswith(SECRET_PREFIXES):
        return True
    words = upper.split("_")
    if any(word in SECRET_WORDS for word in words):
        return True
    return any(word.endswith(_GLUED_SUFFIXES) for word in words if word)


def is_secret(name: str, value: str) -> bool:
    """Whether ``name=value`` is withheld from hooks: a secret name, a value that is a URL with a password, or
    one that starts like a well-known credential (:data:`SECRET_VALUE`)."""
    return is_secret_name(name) or _secret_value(value)


def _secret_value(value: str) -> bool:
    return ("://" in value and _URL_PASSWORD.search(value) is not None) or SECRET_VALUE.match(value) is not None


def env_allowed(name: str, allowlist: Iterable[str]) -> bool:
    """Whether ``commandHookAllowedEnvVars`` passes ``name``: an exact name, or a pattern ending in ``*`` that
    is a prefix of it (case-sensitive, as environment names are)."""
    return any(pattern == name or (pattern.endswith("*") and name.startswith(pattern[:-1])) for pattern in allowlist)


def hook_environment_bytes(
    base: Mapping[str, str] | None,
    *,
    settings_env: Mapping[str, str],
    allowlist: tuple[str, ...],
    scrub: bool,
    overrides: Mapping[str, str],
) -> dict[bytes, bytes]:
    """The hook environment, encoded for ``exec``: ``base`` (``None``: this process's environment) with
    ``settings_env`` on top, secrets removed (unless ``scrub`` is false or ``allowlist`` passes them), then
    ``overrides`` (the protocol variables). Copies ``os.environ``'s own bytes dict when it can (no decoding)."""
    raw = getattr(os.environ, "_data", None) if base is None else None
    if isinstance(raw, dict):
        env: dict[bytes, bytes] = dict(raw)
    else:
        env = {os.fsencode(k): os.fsencode(v) for k, v in (os.environ if base is None else base).items()}
    for key, value in settings_env.items():
        env[os.fsencode(key)] = os.fsencode(value)
    if scrub:
        last_env, last_withheld = _LAST
        if last_env is not None and last_env == env:  # C-speed: values compare by identity first
            withheld = last_withheld
        else:
            withheld = tuple(raw_key for raw_key, raw_value in env.items() if _withheld(raw_key, raw_value))
            _LAST[:] = [dict(env), withheld]
        for raw_key in withheld:
            if not (allowlist and env_allowed(os.fsdecode(raw_key), allowlist)):
                del env[raw_key]
    for key, value in overrides.items():
        env[os.fsencode(key)] = os.fsencode(value)
    return env


_LAST: list[Any] = [None, ()]
"""The last environment judged and the names it withholds: the environment rarely changes between spawns, so
one dict comparison usually replaces the rule."""


def _withheld(key: bytes, value: bytes) -> bool:
    return _secret_key(key) or _secret_value(os.fsdecode(value))


@functools.lru_cache(maxsize=4096)
def _secret_key(key: bytes) -> bool:
    return is_secret_name(os.fsdecode(key))


_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class SessionEnvFiles:
    """The ``CLAUDE_ENV_FILE`` files of every session under ``root`` (``<hookloop home>/session-env``).

    ``path_for`` empties and returns the file one firing's hooks append to; ``script`` is what the Bash tool
    evaluates before each command of that session (the files' text, in :data:`ENV_FILE_EVENTS` order, or
    ``None`` when there is nothing). Folders are created 0700. A session id that is not a plain name is hashed
    into one, so no id can point outside ``root``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def folder(self, session_id: str) -> Path:
        """The session's folder (not created)."""
        name = session_id if _SAFE_ID.fullmatch(session_id) and session_id not in (".", "..") else None
        if name is None:
            name = "id-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.root / name

    def path_for(self, session_id: str, event: str) -> str:
        """Create the session folder if needed, empty ``event``'s file and return its path."""
        folder = self.folder(session_id)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{event.lower()}.sh"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        return str(path)

    def script(self, session_id: str) -> str | None:
        """The session's env files joined in event order; ``None`` when none has content."""
        folder = self.folder(session_id)
        parts: list[str] = []
        for event in ENV_FILE_EVENTS:
            try:
                text = (folder / f"{event.lower()}.sh").read_text(encoding="utf-8", errors="surrogateescape")
            except OSError:
                continue
            if text.strip():
                parts.append(text if text.endswith("\n") else text + "\n")
        return "".join(parts) or None
