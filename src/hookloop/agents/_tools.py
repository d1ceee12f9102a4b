"""The subagent tools: :class:`WorkerTool` (``Worker.as_tool``) and the built-in :class:`AgentTool`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hookloop._frozen import freeze_object
from hookloop._nested import NestedCall, NestedOutcome, nested_call
from hookloop.agents._definition import AgentDefinition
from hookloop.agents._run import Task, depth_now, run_subagent
from hookloop.tools._base import Tool, ToolContext, ToolFailure, ToolInputError, ToolMeta

if TYPE_CHECKING:
    from hookloop.permissions import PermissionMode, PermissionPolicy
    from hookloop.worker import Worker

__all__ = ["GENERAL_PURPOSE", "AgentTool", "WorkerTool", "narrow_mode"]

DEFAULT_MAX_DEPTH = 3

_STRICTNESS: dict[str, int] = {"bypassPermissions": 0, "acceptEdits": 1, "default": 2, "dontAsk": 3, "plan": 4}
"""How strict each mode is: a subagent's mode applies only when it is stricter than its parent's. ``dontAsk``
denies whatever ``default`` would ask about; ``plan`` runs nothing that is not read-only."""

MODEL_ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1", "haiku": "claude-haiku-4-5"}
"""Claude Code's model aliases, for a parent whose client is Anthropic's (other providers: the parent's model)."""

GENERAL_PURPOSE = AgentDefinition(
    name="general-purpose",
    description="A general-purpose agent for multi-step tasks: researching, searching code, running commands.",
    system_prompt=(
        "You are a subagent. Complete the task you are given with the tools you have, then answer with a "
        "concise report of what you found or did: it is all the caller will see."
    ),
)
"""The definition used for ``subagent_type: general-purpose`` unless one with that name is defined."""


def narrow_mode(parent: PermissionMode, wanted: PermissionMode | None) -> PermissionMode:
    """The mode a subagent runs in: ``wanted`` when it is stricter than ``parent``, else ``parent`` — a
    definition can make the mode stricter, never looser (``bypassPermissions`` under ``default`` stays
    ``default``)."""
    if wanted is None or _STRICTNESS.get(wanted, 0) <= _STRICTNESS.get(parent, 0):
        return parent
    return wanted


def _text(arguments: Mapping[str, object], key: str, tool: str, *, required: bool = True) -> str:
    value = arguments.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolInputError(f"invalid arguments for tool {tool!r}: field '{key}': expected a non-empty string")
    return value


def _current(tool: str) -> NestedCall:
    nested = nested_call.get()
    if nested is None:
        raise ToolFailure(f"tool {tool!r} runs a subagent and must be called by a Worker")
    return nested


def _depth_check(limit: int, tool: str) -> None:
    if depth_now() + 1 > limit:
        raise ToolFailure(
            f"tool {tool!r}: the subagent depth limit ({limit}) is reached; do the task here instead of delegating"
        )


class WorkerTool:
    """A Worker offered to another as a tool (see :meth:`hookloop.Worker.as_tool`). Input: ``prompt`` (the task)
    and an optional short ``description``. Calls run one after another: a Worker runs one run at a time."""

    __slots__ = ("_meta", "max_depth", "worker")

    def __init__(self, worker: Worker, *, name: str, description: str, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.worker = worker
        self.max_depth = max_depth
        self._meta = ToolMeta(
            name=name,
            description=description,
            input_schema=freeze_object(
                {
                    "type": "object",
                    "properties": {
                        "prompt": {"type": "string", "description": "The task, with everything the agent needs."},
                        "description": {"type": "string", "description": "A short (3-5 word) summary of the task."},
                    },
                    "required": ["prompt"],
                    "additionalProperties": False,
                }
            ),
            read_only=True,  # the delegation changes nothing itself: each call the subagent makes is decided
            server=f"agent:{name}",
            sequential=True,
            performs_effects=True,
        )

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        extra = sorted(set(arguments) - {"prompt", "description"})
        if extra:
            raise ToolInputError(f"invalid arguments for tool {self._meta.name!r}: unknown field(s) {', '.join(extra)}")
        name = self._meta.name
        return {
            "prompt": _text(arguments, "prompt", name),
            "description": _text(arguments, "description", name, required=False),
        }

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        nested = _current(self._meta.name)
        _depth_check(self.max_depth, self._meta.name)
        parent: Worker = nested.worker
        if parent is self.worker:
            raise ToolFailure(f"tool {self._meta.name!r}: a Worker cannot run itself as its own subagent")
        outer: tuple[PermissionPolicy, ...] = parent._outer_policies
        if parent.permissions is not None:
            outer = (*outer, parent.permissions)
        task = Task(
            agent_type=self._meta.name,
            description=str(arguments.get("description") or ""),
            prompt=str(arguments["prompt"]),
            outer_policies=outer,
        )
        return await run_subagent(self.worker, nested, task, fresh=False)


class AgentTool:
    """Claude Code's ``Agent`` tool: input ``description`` (3-5 words), ``prompt`` (the task) and
    ``subagent_type`` (a definition's name). Each call builds a new child Worker from the parent (its client,
    its tools narrowed by the definition, a copy of its permission policy in the stricter of the two modes, its
    workspace, limits and checkpoint key) with the definition's body as system prompt, so calls run in parallel.

    ``agents``: the definitions (e.g. ``load_agents().agents``); ``general-purpose`` is added unless defined (or
    ``general_purpose=False``).
    ``max_depth``: how deep subagents may nest (1: a subagent cannot delegate further).
    """

    __slots__ = ("_meta", "agents", "max_depth")

    def __init__(
        self,
        agents: Mapping[str, AgentDefinition] | Iterable[AgentDefinition] = (),
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        name: str = "Agent",
        general_purpose: bool = True,
    ) -> None:
        found = dict(agents) if isinstance(agents, Mapping) else {d.name: d for d in agents}
        if general_purpose:
            found.setdefault(GENERAL_PURPOSE.name, GENERAL_PURPOSE)
        self.agents: dict[str, AgentDefinition] = found
        self.max_depth = max_depth
        listing = "\n".join(f"- {d.name}: {d.description}" for d in found.values())
        self._meta = ToolMeta(
            name=name,
            description=(
                "Launch a subagent to handle a task on its own; it answers with one final report. Several "
                "calls in one reply run in parallel. Available subagent types:\n" + listing
            ),
            input_schema=freeze_object(
                {
                    "type": "object",
                    "properties": {
                        "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                        "prompt": {"type": "string", "description": "The task for the agent to perform"},
                        "subagent_type": {"type": "string", "enum": sorted(found)},
                    },
                    "required": ["description", "prompt", "subagent_type"],
                    "additionalProperties": False,
                }
            ),
            read_only=True,  # the delegation changes nothing itself: each call the subagent makes is decided
            performs_effects=True,
        )

    @property
    def meta(self) -> ToolMeta:
        return self._meta

    def only(self, names: Iterable[str]) -> AgentTool:
        """The same tool offering only the definitions named (unknown names give nothing)."""
        keep = set(names)
        return AgentTool(
            {n: d for n, d in self.agents.items() if n in keep},
            max_depth=self.max_depth,
            name=self._meta.name,
            general_purpose=False,
        )

    def validate(self, arguments: Mapping[str, object]) -> Mapping[str, object]:
        name = self._meta.name
        extra = sorted(set(arguments) - {"description", "prompt", "subagent_type", "model"})
        if extra:
            raise ToolInputError(f"invalid arguments for tool {name!r}: unknown field(s) {', '.join(extra)}")
        kind = _text(arguments, "subagent_type", name)
        if kind not in self.agents:
            raise ToolInputError(
                f"invalid arguments for tool {name!r}: field 'subagent_type': unknown subagent type {kind!r}; "
                f"the available types are: {', '.join(sorted(self.agents))}"
            )
        return {
            "description": _text(arguments, "description", name, required=False),
            "prompt": _text(arguments, "prompt", name),
            "subagent_type": kind,
        }

    async def execute(self, arguments: Mapping[str, object], ctx: ToolContext) -> object:
        nested = _current(self._meta.name)
        _depth_check(self.max_depth, self._meta.name)
        definition = self.agents[str(arguments["subagent_type"])]
        parent: Worker = nested.worker
        child = self.build_child(parent, definition, depth_now() + 1)
        task = Task(
            agent_type=definition.name,
            description=str(arguments.get("description") or ""),
            prompt=str(arguments["prompt"]),
            outer_policies=parent._outer_policies,
        )
        outcome: NestedOutcome = await run_subagent(child, nested, task, fresh=True)
        return outcome

    def build_child(self, parent: Worker, definition: AgentDefinition, depth: int) -> Worker:
        """The child Worker for one call of ``definition`` at ``depth`` (1: under the top-level Worker)."""
        from hookloop.worker import Worker

        parent_tools = {t.meta.name: t for t in parent.tools}
        wanted = set(definition.tools) if definition.tools is not None else set(parent_tools)
        wanted -= set(definition.disallowed_tools)
        tools: list[Tool] = []
        for tool_name, tool in parent_tools.items():  # only the parent's tools, by exact name: never more
            if tool_name not in wanted:
                continue
            if tool.meta.performs_effects and isinstance(tool, AgentTool):
                if depth >= self.max_depth:
                    continue  # at the depth limit the child cannot delegate further
                if definition.agents is not None:
                    tool = tool.only(definition.agents)
                    if not tool.agents:
                        continue
            tools.append(tool)
        policy = parent.permissions
        if policy is not None:
            policy = policy.copy(mode=narrow_mode(policy.mode, definition.permission_mode))
        elif definition.permission_mode not in (None, "bypassPermissions"):
            from hookloop.permissions import PermissionPolicy

            policy = PermissionPolicy(mode=definition.permission_mode, workspace=parent.workspace)
        return Worker(
            parent.client,
            tools=tools,
            system=definition.system_prompt or None,
            model=_model(parent, definition.model),
            max_tokens=parent.max_tokens,
            max_turns=definition.max_turns or parent.max_turns,
            max_forced_continuations=parent.max_forced_continuations,
            permissions=policy,
            workspace=parent.workspace,
            tool_timeout=parent.tool_timeout,
            context_cap=parent.context_cap,
            output_cap=parent.output_cap,
            session_id=parent.session_id,
            checkpoint_key=parent.checkpoint_key,
            checkpoint_ledger=parent.checkpoint_ledger,
        )


def _model(parent: Worker, wanted: str | None) -> str | None:
    if wanted is None:
        return parent.model
    if wanted in MODEL_ALIASES:
        return MODEL_ALIASES[wanted] if parent.client.provider == "anthropic" else parent.model
    return wanted
