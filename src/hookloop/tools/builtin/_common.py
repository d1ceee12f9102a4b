"""What the built-in tools share: the input-model base class, cancellable worker threads, output capping."""

from __future__ import annotations

import asyncio
import codecs
import threading
from abc import abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

import pydantic

from hookloop._frozen import FrozenDict
from hookloop.tools._base import ReadFilter, ToolContext, ToolFailure, ToolInputError, ToolMeta, format_validation_error
from hookloop.tools.builtin._workspace import Workspace, WorkspaceError

__all__ = [
    "BuiltinTool",
    "HeadTail",
    "Input",
    "Stopped",
    "left_out_note",
    "plural",
    "refuse_if_read_denied",
    "run_in_thread",
    "truncate_line",
]

T = TypeVar("T")


class Input(pydantic.BaseModel):
    """Base of the tools' input models: unknown fields are an error (Claude Code's schemas are closed too)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


M = TypeVar("M", bound=Input)


class BuiltinTool(Generic[M]):
    """A built-in tool: a pydantic input model, a hand-written JSON schema (Claude Code's exact shape) and a
    typed ``run``. ``validate`` parses the arguments and runs :meth:`check` (early path checks);
    ``execute`` parses again (cheap, and safe when called without ``validate``) and calls :meth:`run`."""

    input_model: ClassVar[type[Input]]
    name: ClassVar[str]
    description: ClassVar[str]
    schema: ClassVar[FrozenDict]
    read_only: ClassVar[bool] = False

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._meta = ToolMeta(
            name=self.name,
            description=self.description,
            input_schema=self.schema,
            read_only=self.read_only,
        )

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    def parse(self, arguments: Mapping[str, object]) -> M:
        """The arguments as the input model; raises :class:`ToolInputError` naming the wrong fields."""
        try:
            model = self.input_model.model_validate(dict(arguments))
        except pydantic.ValidationError as exc:
            raise ToolInputError(format_validation_error(self.name, exc)) from None
        return model  # type: ignore[return-value]  # input_model is the model class M of the subclass

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        """Parse and check the arguments; returns them as given (aliases kept, defaults not added)."""
        model = self.parse(arguments)
        try:
            self.check(model)
        except WorkspaceError as exc:
            raise ToolInputError(f"{self.name}: {exc}") from None
        return model.model_dump(by_alias=True, exclude_unset=True)

    def check(self, args: M) -> None:
        """Checks that need no I/O beyond resolving paths (raise :class:`WorkspaceError`). Default: none."""

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        return await self.run(self.parse(arguments), ctx)

    @abstractmethod
    async def run(self, args: M, ctx: ToolContext) -> object:
        """Do the work; raise ``ToolFailure`` with a clear sentence on a clean failure."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} in {self._workspace.root}>"


class Stopped(Exception):
    """Raised inside a worker thread that noticed its call was cancelled."""


async def run_in_thread(fn: Callable[[threading.Event], T]) -> T:
    """Run ``fn(stop)`` in a worker thread. When the caller is cancelled, ``stop`` is set and the call waits
    for ``fn`` to notice and return (``fn`` checks ``stop`` between files or chunks) before the cancellation
    propagates, so no thread outlives the tool call."""
    stop = threading.Event()
    future = asyncio.get_running_loop().run_in_executor(None, fn, stop)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([future])
        if not future.cancelled():
            future.exception()  # retrieved, so asyncio does not log it as never retrieved
        raise


def truncate_line(line: str, limit: int) -> str:
    """``line`` cut at ``limit`` characters, with a marker saying how much was cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [{len(line) - limit} more characters]"


class HeadTail:
    """Collects a byte stream of any length in bounded memory: the first and last ``cap // 2`` characters'
    worth of bytes (4 bytes a character at most in UTF-8), and the total number of characters."""

    __slots__ = ("_cap", "_decoder", "_head", "_keep", "_tail", "chars")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._keep = 4 * (cap // 2 + 1)
        self._head = bytearray()
        self._tail = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.chars = 0

    def feed(self, data: bytes) -> None:
        self.chars += len(self._decoder.decode(data))
        room = self._keep - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self._keep:
                del self._tail[: len(self._tail) - self._keep]

    def text(self) -> str:
        """The decoded text (undecodable bytes replaced), cut in the middle with a marker when over the cap."""
        self.chars += len(self._decoder.decode(b"", final=True))
        if self.chars <= self._cap:
            return bytes(self._head + self._tail).decode("utf-8", errors="replace")
        half = self._cap // 2
        head = bytes(self._head).decode("utf-8", errors="replace")[:half]
        tail = bytes(self._tail[-self._keep :]).decode("utf-8", errors="replace")[-half:]
        return f"{head}\n\n[… {self.chars - len(head) - len(tail)} characters omitted …]\n\n{tail}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def left_out_note(count: int) -> str:
    """The line a reading tool ends its result with when ``count`` paths were left out by its read filter."""
    return f"({plural(count, 'path')} left out by Read permission rules)"


def refuse_if_read_denied(read_filter: ReadFilter | None, real: Path, verb: str) -> None:
    """Raise :class:`ToolFailure` when the read filter denies the resolved path ``real`` (the tool's own path
    argument: the policy normally refused the call already; this holds when the tool is called directly)."""
    if read_filter is not None and read_filter.denies(str(real)):
        raise ToolFailure(f"Cannot {verb} {real}: Read permission rules do not allow reading it.")
