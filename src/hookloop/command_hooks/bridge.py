"""Command hooks on a Worker: Claude Code and Cline hook scripts, unmodified, through the public Hook API.

:class:`CommandHooks` loads the configuration (settings layers, Cline script folders, trust) and
:meth:`CommandHooks.install` registers **one** in-process hook, named ``"command hooks"``, per hookloop event some
configured hook needs (plus an approver for PermissionRequest). At each firing that hook builds the stdin
(:mod:`hookloop.command_hooks.payloads`), selects the matching handlers (matcher, then the ``if`` rule), runs them
in parallel (:func:`~hookloop.command_hooks.runner.run_all`), translates and merges their answers
(:mod:`hookloop.command_hooks.translate`) and returns an ordinary hook result — so every effect goes through the
same checks as an in-process hook's: a hook's ``allow`` never bypasses a deny or ask rule, an ``updatedInput``
is validated against the tool's schema and the rules see it.

=====================================  ==================  =====================================================
command-hook event (Claude / Cline)    hookloop event      result
=====================================  ==================  =====================================================
SessionStart / TaskStart, TaskResume   session_start       context → ``Continue(additional_context)``; a stop
                                                           (``continue: false``, Cline ``cancel``) raises
                                                           :class:`CommandHookCancelled`
UserPromptSubmit (both)                on_prompt_submit    block or stop → ``Cancel``; context → ``Continue``
PreToolUse (both)                      pre_tool_call       deny → ``Deny``; ask → ``Ask``; defer → ``Pause``;
                                                           allow → ``Allow(updated_input=…)``; ``updatedInput``
                                                           alone → ``Continue(updated_input=…)``; ``continue:
                                                           false`` → ``Abort``; Cline ``cancel`` raises
                                                           :class:`CommandHookCancelled`; context is delivered
                                                           with the call's result (or the deny reason)
PermissionRequest                      approver            allow → ``Approve``, its ``updatedPermissions``
                                                           applied for the session (:mod:`.session_permissions`);
                                                           deny → ``Reject``; deny with ``interrupt`` or a stop
                                                           raises :class:`CommandHookCancelled`; no decision →
                                                           ``None``
PostToolUse / PostToolUseFailure;      post_tool_call      block reason and context → ``Continue(additional_
Cline PostToolUse                      (by ``is_error``)   context)``; ``updatedToolOutput`` (a string) →
                                                           ``replace_output``; stop or Cline cancel → ``Stop``
Stop                                   on_turn_end         block → ``ContinueWithMessages(reason)``; context
                                                           also continues; stop → ``Finish``; then asyncRewake
                                                           exit-2 messages wake the model (:mod:`.rewake`)
SubagentStart (matcher: agent type)    subagent_start      context → ``Continue(additional_context)`` for the
                                                           subagent only (it cannot block)
SubagentStop (matcher: agent type)     subagent_stop       block → ``ContinueWithMessages(reason)``: the
                                                           subagent goes on; stop → ``Finish``
StopFailure                            on_abort            fire-and-forget, for provider errors only
Notification (both)                    notification        fire-and-forget (never blocks the run)
PreCompact (both)                      pre_compact         block → ``Cancel`` (no compaction); stop raises
PostCompact                            post_compact        side effects only
Elicitation / ElicitationResult        MCP elicitation     ``hookSpecificOutput.action``/``content`` answers
                                       (``elicitation_     before the application / replaces the answer after
                                       routing``)          it; exit 2 declines (see ``_elicitation``)
SessionEnd / TaskComplete, TaskCancel  session_end         side effects only; then background hooks are drained
PermissionDenied                       ``Worker.denial_    a policy denial (rule or mode); ``retry: true``
                                       observers``         appends a may-retry note to the denial
CwdChanged, FileChanged, ConfigChange  after each tool     Bash's ``cd``; a watched file (matcher names and
                                       call, at a prompt   ``watchPaths``); a settings file changed mid-run (it
                                                           applies from the next load; see ``_watch``)
=====================================  ==================  =====================================================

Setup and InstructionsLoaded (no init mode, no CLAUDE.md loading), the task, team and worktree events are
never fired (:data:`~hookloop.command_hooks.model.NEVER_FIRED_EVENTS`).

Handler types: ``command`` and ``http`` run through :mod:`~hookloop.command_hooks.runner`; ``prompt`` and
``agent`` (a model judges, :mod:`~hookloop.command_hooks._llm_handlers`) and ``mcp_tool`` (a tool of an MCP
server on the Worker, :mod:`~hookloop.command_hooks._mcp_handler`) run in process, in parallel with the rest. A
judge's "not ok" on PreToolUse/PostToolUse ends the turn unless ``continueOnBlock``: the run finishes after the
batch (``stopped_by_hook``).

Inside a subagent (:mod:`hookloop.agents`) the parent's tool hooks fire for the child's calls and every input
carries ``agent_id`` / ``agent_type``, as in Claude Code.

A hookloop *run* (or resume) is a Claude Code session and a Cline task: SessionStart/TaskStart fire when it starts,
SessionEnd/TaskComplete/TaskCancel when it ends, and Cline's ``taskId`` is the run id (a resume keeps it). A run
that continues a conversation (the Worker's history is not empty) is Claude Code's ``claude -p --continue``:
SessionStart's ``source`` is ``resume``, so ``startup``-only hooks run once per conversation.

What hooks receive: Claude Code's stdin (``transcript_path`` a Claude Code–format transcript,
:mod:`.transcript`; PostToolUse ``tool_response`` each built-in tool's structured object), Cline's stdin with
Cline's tool names and parameters (:mod:`.cline_tools`). Context reaches the model with one cap and one wrapper,
the protocol's, per hook (:func:`~hookloop.command_hooks._events.context_blocks`).

Fire-and-forget hooks (Notification, StopFailure, and handlers marked ``async``) run in tasks the installation
owns; at session_end each run waits for them up to ``background_grace`` seconds, then cancels them, which kills
their process groups — none outlives the run. What a hook that answered left running (``afplay … &``,
``nohup … &``) is kept until the same deadline, then ended (:mod:`hookloop.command_hooks.kept`). ``async``
handlers never decide anything; their context reaches the model through ``worker.notify``; an ``asyncRewake``
handler's exit 2 wakes the model at the turn end, or starts the next run (:mod:`hookloop.command_hooks.rewake`).
PostToolBatch maps to ``post_tool_batch``: block or ``continue: false`` finishes the run before the next model
request; context follows the batch's last result.

Observability: each handler's outcome becomes a :class:`~hookloop.timeline.HookDecision` (``event`` = the
command-hook event, ``hook`` = the command, script path or URL, ``source`` = ``"<label>: <settings file>"``), a
handler that could not run is ``"HookFailed"`` and one that answered with an error ``"HookError"`` — both also a
``logging`` warning —, one cut short by a cancellation or by the end of the run is ``"HookCancelled"``, and every
output line is a :class:`~hookloop.timeline.HookOutputLine` as it arrives.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ._events import EventHooks
from ._firing import HOOK_NAME, CommandHookCancelled
from .config import (
    HookConfig,
    SettingsLayer,
    merge_layers,
    plugin_hooks,
    read_settings_file,
    resolve_hookloop_home,
    settings_sources,
)
from .discovery import cline_hook_dirs, discover_cline_scripts
from .dryrun import runner_options
from .model import ConfiguredHook, Diagnostic, HookSource, PythonHandler
from .python_hooks import install_python_hooks
from .runner import RunnerOptions
from .trust import apply_trust, is_trusted

if TYPE_CHECKING:
    from hookloop.worker import Worker

__all__ = ["HOOK_NAME", "CommandHookCancelled", "CommandHooks"]

_log = logging.getLogger(__name__)


class CommandHooks:
    """A loaded command-hook configuration, ready to :meth:`install` on Workers.

    Args:
        config: the hooks to run (already filtered by trust; see :meth:`load`).
        project_dir: where hooks run (``cwd``, ``CLAUDE_PROJECT_DIR``, ``HOOKLOOP_PROJECT_DIR``).
        options: runner knobs (timeouts, kill grace, output cap …); the configuration's HTTP allowlists fill
            the ones left unset.
        background_grace: seconds a run's end waits for fire-and-forget hooks still running, and for what hooks
            left running after they answered (:mod:`hookloop.command_hooks.kept`), before ending them.
        diagnostics: extra diagnostics to report with the configuration's own.
        transcript_dir: where the Claude Code–format transcripts hooks receive as ``transcript_path`` are written
            (``<session id>.jsonl``); default beside the Worker's own transcript, else a private temporary
            folder (:class:`~hookloop.command_hooks.transcript.TranscriptKeeper`).
        rewake_wait: at most how many seconds a turn end waits for ``asyncRewake`` handlers still running
            (``None``, the default: as long as they run, each bounded by its own timeout); see
            :mod:`hookloop.command_hooks.rewake`.
        log: log the error and warning :attr:`diagnostics` (on the first install) and each hook that could not
            run or misbehaved to the ``hookloop.command_hooks.bridge`` logger, so a skipped or failed hook is
            never silent. A caller that shows the diagnostics and the timeline's ``HookDecision`` events itself
            (the command line does) passes False, so nothing is said twice.
    """

    def __init__(
        self,
        config: HookConfig,
        *,
        project_dir: str | os.PathLike[str],
        options: RunnerOptions | None = None,
        background_grace: float = 1.5,
        diagnostics: Sequence[Diagnostic] = (),
        settings_files: Sequence[HookSource] = (),
        hookloop_home: Path | None = None,
        transcript_dir: str | os.PathLike[str] | None = None,
        rewake_wait: float | None = None,
        log: bool = True,
    ) -> None:
        opts = runner_options(config, options, hookloop_home=hookloop_home)
        self.log = log
        self.config = config
        self.project_dir = str(Path(project_dir).resolve())
        self.options = opts
        self.background_grace = background_grace
        self.transcript_dir = transcript_dir
        self.rewake_wait = rewake_wait
        self._diagnostics = (*config.diagnostics, *diagnostics)
        self._reported = False
        self._installed: weakref.WeakSet[Worker] = weakref.WeakSet()
        self.settings_files = tuple(settings_files)
        """The settings files ConfigChange hooks watch (:meth:`load` sets every layer's; default: the files
        the hooks come from)."""

    @classmethod
    def load(
        cls,
        project_dir: str | os.PathLike[str],
        *,
        include_claude: bool = True,
        include_cline: bool = True,
        trust_project: bool = False,
        hookloop_home: Path | None = None,
        home: Path | None = None,
        options: RunnerOptions | None = None,
        background_grace: float = 1.5,
        extra_settings: Sequence[str | os.PathLike[str]] = (),
        transcript_dir: str | os.PathLike[str] | None = None,
        rewake_wait: float | None = None,
        log: bool = True,
    ) -> CommandHooks:
        """Load every settings layer and hook folder for ``project_dir`` (see
        :func:`~hookloop.command_hooks.config.load_hook_config`) and apply trust: project-level hooks of an
        untrusted (new or changed) configuration are left out with a warning diagnostic, unless
        ``trust_project`` — the explicit non-interactive trust, which records nothing and says so in an info
        diagnostic. ``log``: see the class. ``extra_settings`` are settings files named explicitly
        (``--settings``): the highest layers,
        trusted like the user's own (the user chose them). ``transcript_dir`` and ``rewake_wait`` are passed on
        (see the class). ``home`` and ``hookloop_home`` default to the user's;
        tests point them at temporary folders. Never raises for bad configuration content (it becomes
        diagnostics)."""
        project = Path(project_dir).resolve()
        own_home = hookloop_home if hookloop_home is not None else resolve_hookloop_home(home=home)
        config = _load_config(
            project,
            home=home if home is not None else Path.home(),
            hookloop_home=own_home,
            include_claude=include_claude,
            include_cline=include_cline,
            platform=(options or RunnerOptions()).platform,
            extra_settings=[Path(p).resolve() for p in extra_settings],
        )
        extra: list[Diagnostic] = []
        if not trust_project:
            config = apply_trust(config, project, hookloop_home=own_home)
        elif config.project_hooks and not is_trusted(project, hookloop_home=own_home):
            count = len(config.project_hooks)
            message = f"{count} project hook(s) run without recorded trust (trust_project=True)"
            extra.append(Diagnostic(severity="info", file=str(project), path="", message=message))
        watched = [
            *settings_sources(project, home=home if home is not None else Path.home(), hookloop_home=own_home,
                              include_claude=include_claude),
            *(HookSource(kind="hookloop-user", path=str(Path(p).resolve())) for p in extra_settings),
        ]  # fmt: skip
        return cls(
            config,
            project_dir=project,
            options=options,
            background_grace=background_grace,
            diagnostics=extra,
            settings_files=watched,
            hookloop_home=own_home,
            transcript_dir=transcript_dir,
            rewake_wait=rewake_wait,
            log=log,
        )

    @property
    def hooks(self) -> tuple[ConfiguredHook, ...]:
        """The hooks that will run, in configuration order."""
        return self.config.hooks

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Everything worth telling the user about the configuration: malformed entries, skipped untrusted
        project hooks, duplicates, events that never fire."""
        return self._diagnostics

    def install(self, worker: Worker) -> None:
        """Register the in-process hooks on ``worker``: one ``"command hooks"`` hook per hookloop event some
        configured hook needs, and an approver for PermissionRequest hooks. A configuration without hooks
        registers nothing; a second install on the same Worker does nothing. The first install logs every error
        and warning diagnostic (a skipped hook is never silent), unless ``log=False``."""
        if not self._reported and self.log:
            self._reported = True
            for diagnostic in self._diagnostics:
                if diagnostic.severity != "info":
                    _log.warning("command hooks: %s", diagnostic)
        if worker not in self._installed:
            self._attach_bash(worker)
        if self.config.hooks and worker not in self._installed:
            self._installed.add(worker)
            config = self.config
            if any(isinstance(hook.handler, PythonHandler) for hook in config.hooks):
                install_python_hooks(worker, config.hooks)  # typed hooks of their own, not command firings
                kept = tuple(hook for hook in config.hooks if not isinstance(hook.handler, PythonHandler))
                config = dataclasses.replace(config, hooks=kept)
                if not kept:
                    return
            events = EventHooks(
                worker,
                config,
                project_dir=self.project_dir,
                options=self.options,
                background_grace=self.background_grace,
                transcript_dir=self.transcript_dir,
                rewake_wait=self.rewake_wait,
            )
            events.log_failures = self.log
            events.register(self.settings_files)

    def _attach_bash(self, worker: Worker) -> None:
        """Give the Worker's Bash tools the settings ``env`` block and the session env files that
        SessionStart / Setup / CwdChanged / FileChanged hooks write (``CLAUDE_ENV_FILE``)."""
        from hookloop.tools.builtin import BashTool

        files = self.options.session_env_files
        env = dict(self.options.settings_env)
        for tool in worker.tools:
            if isinstance(tool, BashTool):
                tool.attach_session_env(env, None if files is None else files.script)


def _load_config(
    project: Path,
    *,
    home: Path,
    hookloop_home: Path,
    include_claude: bool,
    include_cline: bool,
    platform: str,
    extra_settings: Sequence[Path],
) -> HookConfig:
    """:func:`~hookloop.command_hooks.config.load_hook_config` plus explicit settings files as the highest
    layers (labelled as the user's); a missing explicit file is an error diagnostic."""
    sources = [
        *settings_sources(project, home=home, hookloop_home=hookloop_home, include_claude=include_claude),
        *(HookSource(kind="hookloop-user", path=str(path)) for path in extra_settings),
    ]
    explicit = {str(path) for path in extra_settings}
    layers: list[SettingsLayer] = []
    missing: list[Diagnostic] = []
    for source in sources:
        layer = read_settings_file(source)
        if layer is not None:
            layers.append(layer)
        elif source.path in explicit:
            missing.append(Diagnostic(severity="error", file=source.path, path="", message="no such file"))
    scripts: tuple[ConfiguredHook, ...] = ()
    found: tuple[Diagnostic, ...] = ()
    if include_cline:
        folders = cline_hook_dirs(project, home=home, hookloop_home=hookloop_home)
        scripts, found = discover_cline_scripts(folders, platform=platform)
    plugins, plugin_notes = plugin_hooks(layers, home=home, project_dir=project) if include_claude else ((), ())
    return merge_layers(
        layers, scripts=scripts, script_diagnostics=(*plugin_notes, *found, *missing), plugin_hooks=plugins
    )
