"""``hookloop resume``: reading a checkpoint the CLI wrote (verified, options inside it) and deciding which
options the resume runs with — the current invocation's for everything that shapes the permission policy."""

from __future__ import annotations

import os
from pathlib import Path

from hookloop import Checkpoint, CheckpointError
from hookloop._frozen import thaw_object
from hookloop.checkpoint import parse_json, read_limited
from hookloop.cli._errors import describe_error
from hookloop.cli._session import CLI_FORMAT, RunOptions, UsageError
from hookloop.permissions import PermissionMode

__all__ = ["load_cli_checkpoint", "resume_options"]


def load_cli_checkpoint(path: Path) -> tuple[Checkpoint, RunOptions | None]:
    """Read and verify a checkpoint written by the CLI (its options inside it) or by a library user (bare).

    Size, nesting, types and the MAC are checked (see :mod:`hookloop.checkpoint`); every problem is a
    UsageError of one line."""
    try:
        data = parse_json(read_limited(path))
        if isinstance(data, dict) and "hookloop_cli" in data:
            raise UsageError(
                f"{path}: a checkpoint from an older hookloop (its options were not authenticated); it cannot be "
                "resumed — start a new run"
            )
        checkpoint = Checkpoint.from_json(data)
    except CheckpointError as exc:
        text = describe_error(exc)
        raise UsageError(text if str(path) in text else f"{path}: {text}") from None
    options = checkpoint.options
    if "hookloop_cli" not in options:
        return checkpoint, None
    if options["hookloop_cli"] != CLI_FORMAT:
        raise UsageError(f"{path}: checkpoint.options.hookloop_cli: unknown format {options['hookloop_cli']!r}")
    try:
        return checkpoint, RunOptions.from_json(thaw_object(options))
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None


def resume_options(
    saved: RunOptions | None,
    *,
    model: str | None,
    cwd: Path | None,
    permission_mode: PermissionMode | None,
    settings: list[Path],
    include_claude: bool,
    trust_project_hooks: bool,
) -> tuple[RunOptions, list[str]]:
    """The options a ``hookloop resume`` runs with, and notes on what the checkpoint's own options said.

    The current invocation decides everything that shapes the permission policy or runs code — permission
    mode, settings files, project-hook trust — so a checkpoint made under looser settings cannot loosen this
    run; the saved ones are only reported. The working directory must be the saved one (run from there, or
    pass ``--cwd`` to accept another). Model, system prompt, turn limit, checkpoint folder and the scripted
    model's position come from the checkpoint (``--model`` overrides the model).
    """
    here = (cwd or Path.cwd()).resolve()
    current = RunOptions(
        model=model or os.environ.get("HOOKLOOP_MODEL") or "",
        cwd=here,
        permission_mode=permission_mode,
        settings=[p.resolve() for p in settings],
        include_claude=include_claude,
        trust_project_hooks=trust_project_hooks,
    )
    if saved is None:
        if not current.model:
            raise UsageError("a bare checkpoint: pass --model to say which model continues it")
        return current, []
    if cwd is None and saved.cwd.resolve() != here:
        raise UsageError(
            f"the run worked in {saved.cwd}, not here ({here}): resume it from there, or pass --cwd to choose"
        )
    current.model = model or saved.model
    current.max_turns, current.system = saved.max_turns, saved.system
    current.checkpoint_dir, current.scripted_position = saved.checkpoint_dir, saved.scripted_position
    current.disallowed_tools = list(saved.disallowed_tools)  # a restriction the run was started with stays
    notes = []
    if saved.permission_mode != permission_mode:
        notes.append(
            f"the paused run used permission mode {saved.permission_mode or 'from settings'}; this resume uses "
            f"{permission_mode or 'the mode from the settings files'} (pass --permission-mode to choose)"
        )
    if saved.settings != current.settings or saved.include_claude != include_claude:
        notes.append("the paused run read other settings files; this resume reads the current ones (see --settings)")
    if saved.trust_project_hooks and not trust_project_hooks:
        notes.append("the paused run trusted project hooks (--trust-project-hooks); this resume does not")
    return current, [f"note: {n}" for n in notes]
