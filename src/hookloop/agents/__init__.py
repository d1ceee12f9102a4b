"""Subagents: a Worker delegates a task to another Worker, with hooks and permissions that follow the child.

Two tools run subagents: :meth:`hookloop.Worker.as_tool` (:class:`WorkerTool`) offers one Worker to another, and
:class:`AgentTool` is Claude Code's ``Agent`` tool (input ``description``, ``prompt``, ``subagent_type``) over
definitions in Claude Code's format (:func:`load_agents`: ``.claude/agents/NAME.md`` and ``~/.claude/agents/``).

**Rules that follow the child.** The parent's permission policy applies inside the child, and a definition can
only narrow it: the child gets only parent tools its ``tools`` list names exactly, and the stricter of the two
permission modes (:func:`narrow_mode`); an ``as_tool`` Worker's every call must also pass the caller's policy
(the strictest decision wins, also on resume and for an approval's edited input). The parent's
``pre_tool_call``, ``post_tool_call``, ``post_tool_batch``, ``notification``, ``subagent_start`` and
``subagent_stop`` hooks fire for the child too (before the child's own), its approvers decide the child's asks;
interceptors are per Worker. Hooks firing inside a subagent see ``agent_id`` / ``agent_type`` (command hooks get
them in their input).

**Events.** ``subagent_start`` (on the parent; ``Continue(additional_context=…)`` is context for the child only)
and ``subagent_stop`` (when the child answers without tool calls; ``ContinueWithMessages`` sends it back to work,
``stop_hook_active`` and the child's ``max_forced_continuations`` cap as for on_turn_end). Claude Code's
``SubagentStart`` / ``SubagentStop`` command hooks ride on them.

**Run semantics.** Agent calls of one batch run in parallel (``as_tool`` calls of one Worker one after another);
cancelling the parent cancels every child (each fires on_abort once; every call gets one result); a child that
pauses pauses the parent with one checkpoint holding the child's (its calls that need a decision are
``<call id>/<child call id>`` in ``Paused.pending``) and resume continues inside the child, in another process
too. The child's usage rolls up into the parent's. On the parent's timeline a child appears as
:class:`~hookloop.timeline.SubagentStarted`, its events wrapped in :class:`~hookloop.timeline.SubagentEvent`, and
:class:`~hookloop.timeline.SubagentEnded`; with a parent transcript each child writes its own,
``<transcript>/subagents/agent-<id>.jsonl``. ``max_depth`` (default 3) limits nesting. With a durable backend a
subagent call is not one opaque step: each of the child's effects is recorded under ``agent:<call id>/``.
"""

from hookloop._nested import AgentFrame, current_agent
from hookloop.agents._definition import AgentDefinition, AgentDefinitionError, LoadedAgents, load_agents, parse_agent
from hookloop.agents._tools import GENERAL_PURPOSE, AgentTool, WorkerTool, narrow_mode

__all__ = [
    "GENERAL_PURPOSE",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentFrame",
    "AgentTool",
    "LoadedAgents",
    "WorkerTool",
    "current_subagent",
    "load_agents",
    "narrow_mode",
    "parse_agent",
]


def current_subagent() -> AgentFrame | None:
    """The subagent the calling code runs inside (its ``agent_id``, ``agent_type``, ``depth``, the parent's
    ``call_id``), or None in a top-level Worker — for hooks of events whose input does not carry them."""
    return current_agent.get()
