"""An OS sandbox under the Bash tool and command hooks, configured by Claude Code's ``sandbox`` settings.

Permission rules decide whether a command may run; parsing shell can never be complete (``cat .env`` reads what
``Read(./.env)`` denies, ``python3 -c`` is opaque). The sandbox makes the operating system enforce which files
and network destinations a command — and everything it starts — can touch::

    {"sandbox": {"enabled": true,
                 "autoAllowBashIfSandboxed": true,      # sandboxed Bash calls no rule decided: allowed
                 "excludedCommands": ["docker"],        # these run unsandboxed, under normal permissions
                 "allowUnsandboxedCommands": true,      # the model may ask for dangerouslyDisableSandbox
                 "failIfUnavailable": false,            # true: refuse to start without a sandbox
                 "network": {"allowedDomains": ["github.com", "*.npmjs.org"]},
                 "filesystem": {"allowWrite": ["~/.cache"], "denyRead": ["~/.aws"]},
                 "hooks": "project"}}                   # hookloop's own: which command hooks run sandboxed

Layers (user → project → local → ``--settings``) merge as Claude Code merges them: arrays concatenate, the
highest layer that sets a scalar wins. ``hookloop run --sandbox`` turns it on.

Layers of this package::

    _settings   the settings model and its parser (SandboxConfigError names file and JSON path)
    _paths      permission path patterns → the concrete paths to mask / write-protect (bounded walk)
    _backend    the seam: SandboxSpec (what to enforce), SandboxBackend (protocol), NoSandbox
    _bwrap      BubblewrapBackend: Linux, bubblewrap + socat
    _proxy      DomainProxy: the per-command HTTP(S) proxy enforcing the domain allow-list
    _sandbox    Sandbox: settings + permission policy + workspace → SandboxedCommand, failure notes

What is enforced, and what is not, is in :class:`Sandbox`'s docstring and the README's security table.
"""

from __future__ import annotations

from hookloop.sandbox._backend import Availability, NoSandbox, SandboxBackend, SandboxSpec, WrappedCommand
from hookloop.sandbox._bwrap import BubblewrapBackend
from hookloop.sandbox._paths import SandboxError
from hookloop.sandbox._proxy import DomainProxy, host_allowed
from hookloop.sandbox._sandbox import (
    PROTECTED_NAMES,
    Sandbox,
    SandboxedCommand,
    SandboxUnavailableError,
    default_backend,
)
from hookloop.sandbox._settings import (
    FilesystemSettings,
    HookSandboxing,
    NetworkSettings,
    SandboxConfigError,
    SandboxSettings,
    parse_sandbox_settings,
)

__all__ = [
    "PROTECTED_NAMES",
    "Availability",
    "BubblewrapBackend",
    "DomainProxy",
    "FilesystemSettings",
    "HookSandboxing",
    "NetworkSettings",
    "NoSandbox",
    "Sandbox",
    "SandboxBackend",
    "SandboxConfigError",
    "SandboxError",
    "SandboxSettings",
    "SandboxSpec",
    "SandboxUnavailableError",
    "SandboxedCommand",
    "WrappedCommand",
    "default_backend",
    "host_allowed",
    "parse_sandbox_settings",
]
