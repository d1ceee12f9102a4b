"""External command hooks: Claude Code- and Cline-compatible scripts (and HTTP endpoints) spoken to in JSON.

Layers, each usable on its own::

    wire.py       TypedDicts of the stdin/stdout JSON (the only place wire shapes live)
    extract.py    reading JSON out of stdout (Claude's "starts with {" rule, Cline's last-object fallback)
    model.py      value types: sources, handlers, configured hooks, diagnostics, outcomes, event tables
    matchers.py   Claude Code matcher semantics
    config.py     settings layers → HookConfig (merge, dedup, diagnostics with JSON paths)
    discovery.py  Cline script discovery and the per-platform launcher
    trust.py      project-configuration digest and the trust store
    runner.py     spawning, draining, timeouts, process-group kills, parallel run_all
    kept.py       what a hook leaves running after it answered: kept for the session, then ended
    http_hooks.py HTTP handlers: allowlists, header interpolation, POST in a worker thread
    translate.py  pure (event, exit code, stdout, stderr) → CommandDecision, and merge_decisions
    payloads.py   pure builders of each event's stdin (Claude Code snake_case, Cline camelCase)
    bridge.py     CommandHooks: load + trust, then install on a Worker as ordinary hooks (the event mapping)

Typical use: ``CommandHooks.load(project).install(worker)``. By hand, for one firing:
``config = apply_trust(load_hook_config(project), project)``, ``hooks = config.for_event("PreToolUse", tool_name)``,
``outcomes = await run_all(hooks, payload, ...)``,
``merge_decisions([translate_outcome(h, o) for h, o in zip(hooks, outcomes)])``.
"""

from __future__ import annotations

from .bridge import CommandHookCancelled, CommandHooks
from .config import HookConfig, load_hook_config, resolve_hookloop_home
from .discovery import launcher_for
from .extract import extract_last_json_object, read_claude_json
from .matchers import match_target, matcher_matches
from .model import (
    ClineScript,
    CommandHandler,
    ConfiguredHook,
    Diagnostic,
    HookSource,
    HttpHandler,
)
from .runner import HookOutcome, RunnerOptions, run_all, run_hook, run_process
from .translate import CommandDecision, merge_decisions, translate_outcome
from .trust import TrustStoreError, apply_trust, is_trusted, project_config_digest, trust, untrust

__all__ = [
    "ClineScript",
    "CommandDecision",
    "CommandHandler",
    "CommandHookCancelled",
    "CommandHooks",
    "ConfiguredHook",
    "Diagnostic",
    "HookConfig",
    "HookOutcome",
    "HookSource",
    "HttpHandler",
    "RunnerOptions",
    "TrustStoreError",
    "apply_trust",
    "extract_last_json_object",
    "is_trusted",
    "launcher_for",
    "load_hook_config",
    "match_target",
    "matcher_matches",
    "merge_decisions",
    "project_config_digest",
    "read_claude_json",
    "resolve_hookloop_home",
    "run_all",
    "run_hook",
    "run_process",
    "translate_outcome",
    "trust",
    "untrust",
]
