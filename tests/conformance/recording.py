"""The recording file shape, where recordings live, and the request text normalisation.

A recording is one JSON file: ``{"name", "source": {"repo", "path", "commit"}, "interactions": [...]}``; each
interaction holds the request ``uri`` and JSON ``request`` body, the response ``status``, its ``headers``
(content-type, retry-after, request-id when the cassette kept them) and the response ``body`` as text (an
event stream or a JSON document, byte for byte what the cassette holds).

Folders: ``HOOKLOOP_RECORDINGS`` (one folder, or several separated by ``os.pathsep``) when set, else
``<repository parent>/shared/provider-recordings`` when it exists; this repository's ``tests/recordings/`` is
always added.
"""

from __future__ import annotations

import json
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "API",
    "Interaction",
    "Recording",
    "RecordingError",
    "load",
    "normalise_text",
    "recording_dirs",
    "recording_paths",
]

REPO = Path(__file__).resolve().parents[2]
OWN = REPO / "tests" / "recordings"
SHARED = REPO.parent / "shared" / "provider-recordings"

API = Literal["anthropic", "chat", "responses"]


class RecordingError(ValueError):
    """A recording file that does not have the documented shape (the message names the file and the field)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Interaction:
    uri: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: str

    @property
    def streamed(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")


@dataclass(frozen=True, slots=True, kw_only=True)
class Recording:
    name: str
    path: Path
    source: dict[str, str]
    interactions: tuple[Interaction, ...]

    @property
    def api(self) -> API:
        """Which client replays it: by the request path of the first interaction."""
        path = urlsplit(self.interactions[0].uri).path
        if path.endswith("/messages"):
            return "anthropic"
        if path.endswith("/chat/completions"):
            return "chat"
        if path.endswith("/responses"):
            return "responses"
        raise RecordingError(f"{self.path}: no client for request path {path!r}")


def _field(data: Any, key: str, kind: type, where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise RecordingError(f"{where}: missing {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise RecordingError(f"{where}: {key!r} must be {kind.__name__}, not {type(value).__name__}")
    return value


def load(path: Path) -> Recording:
    """Read and check one recording file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{path}: not readable JSON ({exc})") from exc
    where = str(path)
    interactions = []
    for n, raw in enumerate(_field(data, "interactions", list, where)):
        at = f"{where}: interactions[{n}]"
        headers = _field(raw, "headers", dict, at)
        interactions.append(
            Interaction(
                uri=_field(raw, "uri", str, at),
                request=_field(raw, "request", dict, at),
                status=_field(raw, "status", int, at),
                headers={str(k).lower(): str(v) for k, v in headers.items()},
                body=_field(raw, "body", str, at),
            )
        )
    if not interactions:
        raise RecordingError(f"{where}: no interactions")
    return Recording(
        name=_field(data, "name", str, where),
        path=path,
        source=dict(_field(data, "source", dict, where)),
        interactions=tuple(interactions),
    )


def recording_dirs() -> list[Path]:
    """The folders to read recordings from, existing ones only (see the module docstring)."""
    env = os.environ.get("HOOKLOOP_RECORDINGS")
    dirs = [Path(p) for p in env.split(os.pathsep) if p] if env else [SHARED]
    dirs.append(OWN)
    seen: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [s.resolve() for s in seen]:
            seen.append(d)
    return seen


def recording_paths(dirs: list[Path] | None = None) -> list[Path]:
    return [p for d in (recording_dirs() if dirs is None else dirs) for p in sorted(d.glob("*.json"))]


# pydantic-ai's cassettes store request bodies with typographic punctuation made ASCII and NFKC applied
# (tests/json_body_serializer.py); every request is normalised the same way before two are compared.
_ASCII = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u2026": "...",
        "\u00a0": " ",
    }
)


def normalise_text(text: str) -> str:
    return unicodedata.normalize("NFKC", text.translate(_ASCII))


def normalise(value: Any) -> Any:
    """``value`` with every string normalised (dict keys too)."""
    if isinstance(value, str):
        return normalise_text(value)
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {normalise_text(k): normalise(v) for k, v in value.items()}
    return value
