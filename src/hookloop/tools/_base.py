"""The Tool protocol, tool metadata, the execution context, and function tools built by ``@tool``."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeAlias, get_type_hints, overload, runtime_checkable

import anyio.to_thread
import pydantic

from hookloop._frozen import FrozenDict, freeze_object
from hookloop.errors import ItemError, ToolDefinitionError
from hookloop.items import ContentPart, DocumentPart, ImagePart, TextPart, adopt_parts, parts_text

__all__ = [
    "FunctionTool",
    "ReadFilter",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "ToolInputError",
    "ToolMeta",
    "ToolOutput",
    "tool",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolMeta:
    """What a tool is: the name the model calls, its description and JSON-schema input, and traits.

    ``read_only`` tools change nothing (permission modes allow them by default); ``server`` names the tool
    server that provides it (``"local"``, ``"mcp__<server>"``, …).

    ``sequential`` tools never run at the same time as another sequential call of the same ``server`` in one
    batch: the Worker runs the calls of a model reply in parallel, except that the sequential calls of each
    server run one after another, in the order the model gave them (each server's chain in parallel with the
    other calls). ``@tool(sequential=True)`` sets it for a local tool; :class:`hookloop.tools.mcp.MCPServer`
    sets it on every tool of a server that its annotations do not mark read-only (``sequential=False`` on the
    server turns that off). Calls of different batches never overlap anyway.

    ``performs_effects`` tools perform their own effects (a subagent's model and tool calls): with a durable
    backend the Worker calls them directly rather than recording each call as one tool step, and no
    ``tool_timeout`` applies to them (what they run has its own). hookloop's subagent tools set it.
    """

    name: str
    description: str
    input_schema: FrozenDict
    read_only: bool = False
    server: str = "local"
    sequential: bool = False
    performs_effects: bool = False


class ReadFilter(Protocol):
    """The paths a reading tool must leave out of this call: what Read permission rules keep from being read
    without a question (deny rules, and ask rules the call itself was not approved under).

    The Worker derives one from its permission policy for each call (``PermissionPolicy.read_filter``) and
    hands it to the tool in :attr:`ToolContext.read_filter`. A tool that reads files the policy never saw — a
    search walking a directory, a listing — asks it for every path and leaves out those it denies (and says how
    many it left out; never what they hold).

    It judges paths, not files: a hard link to a denied file, or its content copied or moved to a path the rules
    allow, is read like any file there.
    """

    def denies(self, path: str) -> bool:
        """Whether the rules cover ``path``, an absolute path with symbolic links and ``..`` already resolved
        (the tool resolves it: a walk that does not follow links yields such paths). A directory it denies
        covers everything inside it, so a walk may prune it. Thread-safe; never raises for a string."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Handed to each tool execution.

    ``idempotency_key`` (run id + call id) stays the same when a paused or crashed run is resumed or replayed
    elsewhere, so side effects can be made exactly-once. ``read_filter`` is set when permission rules restrict
    reading for this call (None: nothing to leave out); reading tools must honour it, see :class:`ReadFilter`.
    ``emit`` puts an event on the Worker's timeline (e.g. :class:`hookloop.timeline.ToolProgress` while the
    call runs); it is None when nobody follows the timeline, so a tool builds no event then.
    """

    run_id: str
    session_id: str
    call_id: str
    tool_name: str
    turn: int
    workspace: Path | None = None
    read_filter: ReadFilter | None = None
    emit: Callable[[Any], None] | None = None

    @property
    def idempotency_key(self) -> str:
        return f"{self.run_id}:{self.call_id}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """A tool's answer, when it wants to mark it as an error without raising, or answer with more than text.

    ``parts`` (text, :class:`~hookloop.items.ImagePart`, :class:`~hookloop.items.DocumentPart`, in order) is
    the full answer for the model; ``content`` is what hooks and text-only providers see and defaults to the
    parts' text rendering (text as is, a short note such as ``[image: image/png, 1234 bytes]`` per other part).

    ``structured`` is the tool's result as a JSON object for hooks that want it rather than the model-facing
    text (Claude Code's PostToolUse ``tool_response``: the built-in tools give Claude Code's shapes). It never
    reaches the model or the history; hooks see it as :attr:`~hookloop.hooks.PostToolCallInfo.structured`.
    """

    content: str = ""
    is_error: bool = False
    parts: Sequence[ContentPart] = ()
    structured: Mapping[str, object] | None = None


class ToolInputError(ValueError):
    """The arguments do not match the tool's input schema; the message names the offending fields."""


class ToolFailure(Exception):
    """Raise from a tool to fail the call with exactly this message as the error result."""


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call. Implement it directly, or build one from a function with :func:`tool`."""

    @property
    def meta(self) -> ToolMeta: ...

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        """Return the validated arguments or raise :class:`ToolInputError` naming the wrong fields."""
        ...

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        """Run with validated arguments. Return a str (or JSON-able value, or :class:`ToolOutput`).

        Raising makes an error result; cancellation propagates (the Worker records a "cancelled" result).
        """
        ...


def format_validation_error(tool_name: str, exc: pydantic.ValidationError) -> str:
    """One readable line per wrong field, e.g. ``field 'count': Input should be a valid integer``."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        lines.append(f"field '{loc}': {err['msg']}")
    return f"invalid arguments for tool {tool_name!r}: " + "; ".join(lines)


_AnyFn: TypeAlias = Callable[..., Any]


class FunctionTool:
    """A tool built from a typed Python function (see :func:`tool`)."""

    __slots__ = ("_async", "_ctx_param", "_field_names", "_fn", "_meta", "_model", "_threaded")

    def __init__(
        self,
        fn: _AnyFn,
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        threaded: bool = True,
        sequential: bool = False,
    ) -> None:
        self._fn = fn
        self._async = inspect.iscoroutinefunction(fn)
        self._threaded = threaded
        tool_name = name or fn.__name__
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise ToolDefinitionError(f"tool {tool_name!r}: cannot resolve type hints: {exc}") from exc
        fields: dict[str, Any] = {}
        self._ctx_param: str | None = None
        for param in inspect.signature(fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(f"tool {tool_name!r}: *args/**kwargs parameter {param.name!r}")
            annotation = hints.get(param.name)
            if annotation is None:
                raise ToolDefinitionError(f"tool {tool_name!r}: parameter {param.name!r} has no type hint")
            if annotation is ToolContext:
                self._ctx_param = param.name
                continue
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (annotation, default)
        model_name = "".join(p.capitalize() for p in tool_name.replace("-", "_").split("_")) + "Input"
        try:
            self._model: type[pydantic.BaseModel] = pydantic.create_model(
                model_name, __config__=pydantic.ConfigDict(extra="forbid"), **fields
            )
            schema = self._model.model_json_schema()
        except Exception as exc:
            raise ToolDefinitionError(f"tool {tool_name!r}: cannot build an input schema: {exc}") from exc
        self._field_names = tuple(self._model.model_fields)  # looked up once (the class property is slow)
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        doc = inspect.getdoc(fn) or ""
        self._meta = ToolMeta(
            name=tool_name,
            description=description if description is not None else doc,
            input_schema=freeze_object(schema),
            read_only=read_only,
            sequential=sequential,
        )

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        try:  # what model_validate calls, without its frame, on a dict (pydantic reads other mappings slowly)
            model = self._model.__pydantic_validator__.validate_python(dict(arguments))
        except pydantic.ValidationError as exc:
            raise ToolInputError(format_validation_error(self._meta.name, exc)) from None
        values = model.__dict__  # the fields' values (a model's attributes read them from there)
        return {name: values[name] for name in self._field_names}

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        if self._ctx_param is None:
            if self._async:
                return await self._fn(**arguments)  # a fresh keyword dict, as below
            kwargs = dict(arguments)
        else:
            kwargs = dict(arguments)
            kwargs[self._ctx_param] = ctx
        if self._async:
            return await self._fn(**kwargs)
        if self._threaded:
            return await anyio.to_thread.run_sync(functools.partial(self._fn, **kwargs), abandon_on_cancel=True)
        return self._fn(**kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The decorated function stays callable as itself."""
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<FunctionTool {self._meta.name!r}>"


@overload
def tool(fn: _AnyFn, /) -> FunctionTool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    threaded: bool = True,
    sequential: bool = False,
) -> Callable[[_AnyFn], FunctionTool]: ...
def tool(
    fn: _AnyFn | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    threaded: bool = True,
    sequential: bool = False,
) -> FunctionTool | Callable[[_AnyFn], FunctionTool]:
    """Make a tool from a typed function: name from the function, description from the docstring,
    JSON schema from the type hints (pydantic). Arguments are validated before the function runs.

    A parameter annotated :class:`ToolContext` receives the execution context and is not part of the schema.
    Sync functions run in a worker thread (``threaded=False`` runs them inline, for trivial tools).
    ``sequential=True``: calls of this tool (and of the other sequential local tools) in one model reply run
    one after another in the model's order, not in parallel (see :class:`ToolMeta`).
    """

    def build(f: _AnyFn) -> FunctionTool:
        return FunctionTool(
            f, name=name, description=description, read_only=read_only, threaded=threaded, sequential=sequential
        )

    return build(fn) if fn is not None else build


_NO_PARTS: tuple[ContentPart, ...] = ()


def render_output(value: object) -> tuple[str, bool, tuple[ContentPart, ...]]:
    """Turn what a tool returned into (content, is_error, parts). Non-JSON values become a clear error.

    A :class:`ToolOutput` with parts, a lone image / document part, or a list of content parts gives ``parts``
    (adopted: exact, read-only copies) and their text rendering as ``content`` unless the output set one.
    """
    if isinstance(value, str):
        return value, False, _NO_PARTS
    if isinstance(value, ToolOutput):
        if not value.parts:
            return value.content, value.is_error, _NO_PARTS
        return _rich(value.parts, value.content, value.is_error)
    if value is None:
        return "", False, _NO_PARTS
    if isinstance(value, (ImagePart, DocumentPart)):
        return _rich((value,), "", False)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _PART_TYPES) for v in value):
        return _rich(value, "", False)
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump_json(), False, _NO_PARTS
    try:
        return json.dumps(value, ensure_ascii=False, default=_reject), False, _NO_PARTS
    except (TypeError, ValueError) as exc:
        return f"tool returned a value that is neither text nor JSON: {exc}", True, _NO_PARTS


_PART_TYPES = (TextPart, ImagePart, DocumentPart)


def _rich(parts: object, content: str, is_error: bool) -> tuple[str, bool, tuple[ContentPart, ...]]:
    try:
        adopted = adopt_parts(parts, "tool output parts")
    except ItemError as exc:
        return f"tool returned invalid content parts: {exc}", True, _NO_PARTS
    return content or parts_text(adopted), is_error, adopted


def _reject(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
