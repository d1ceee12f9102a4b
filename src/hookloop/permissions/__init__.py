"""Permission rules and modes in Claude Code's syntax, and the merge that keeps hooks from loosening them.

A :class:`PermissionPolicy` holds allow / ask / deny rule lists and a permission mode. For each tool call,
:meth:`PermissionPolicy.decide` merges three things into a :class:`PermissionOutcome`:

1. the most restrictive matching **rule** (:meth:`PermissionPolicy.check`; deny > ask > allow),
2. the **hooks'** votes (:class:`HookVote`, from pre-tool-call hooks),
3. the **mode's default** for a call nothing else decided.

Precedence (:func:`merge`, a pure function): a deny rule or any hook's deny → **deny**; else an ask rule or any
hook's ask → **ask**; else an allow rule or any hook's allow → **allow**; else the mode's default. So **a hook's
allow never bypasses a deny or ask rule** — it only settles calls no rule decided — while a hook's deny or ask
always tightens, in every mode. In ``dontAsk`` mode every ask becomes deny. The outcome does not depend on the
order of the hook votes.

Rule syntax
-----------
``Tool`` or ``Tool(specifier)``; an empty specifier or ``*`` means the whole tool. Tool names may use ``*``.

``Bash``, ``Read``, ``WebFetch``
    Every call of the tool. ``Read`` rules cover every reading tool (Read, Glob, Grep, LS, NotebookRead);
    ``Edit`` and ``Write`` rules cover every editing tool (Edit, Write, MultiEdit, NotebookEdit).
``Bash(npm run test:*)``
    Legacy prefix form: the command ``npm run test`` with any arguments (or none). ``ls:*`` does not match
    ``lsof``.
``Bash(git * main)``, ``Bash(* --version)``, ``Bash(ls *)``
    ``*`` matches any text, spaces included. A single trailing `` *`` also matches the bare command.
``Bash(git status)``
    Exactly that command.
``Read(./src/**)``, ``Edit(*.env)``, ``Read(//etc/**)``, ``Read(~/.ssh/**)``, ``Edit(/docs/**)``
    Gitignore-style path patterns, see :mod:`hookloop.permissions._paths`: ``./x`` and ``x`` are relative to the
    workspace (``x`` without a slash matches at any depth), ``//x`` is absolute, ``~/x`` is in the home
    directory, ``/x`` is relative to the settings file's project (for rules given in code: the workspace).
    ``*`` stays within a path segment, ``**`` spans segments; a matching directory covers its contents.
    Paths are resolved (``..`` and symlinks) before matching.
``WebFetch(domain:example.com)``
    Fetches whose URL host is ``example.com`` (``*`` globs allowed, ``domain:*.example.com``).
``mcp__server``, ``mcp__server__*``, ``mcp__server__tool``
    All tools of an MCP server, or one tool.
``Agent(Explore)``, ``Skill(x)``, any other ``Tool(value)``
    A ``*``-glob equal to one of the input's top-level string values (Agent/Task: the ``subagent_type``).

Bash commands are parsed with tree-sitter-bash (:mod:`hookloop.permissions._shell`). Every subcommand counts:
``&&``, ``||``, ``;``, ``|``, ``&``, newlines, subshells, groups, control-flow bodies, ``$(…)``, backticks,
process substitution, here-docs, literal ``bash -c``/``sh -c`` strings and ``eval`` arguments, ``find -exec``.
Words are compared after quote removal (write rules unquoted: ``Bash(git commit -m *)``); leading
``VAR=value`` assignments and the transparent wrappers ``env``, ``command``, ``builtin``, ``exec``, ``nohup``,
``time``, ``timeout``, ``nice``, ``ionice``, ``stdbuf`` are stripped.

* An allow rule allows a command only if **every** subcommand is covered by an allow rule, the command could be
  analysed, every file it opens by redirection is known, and every one it writes is inside the workspace (or
  ``/dev/null`` and the like).
  Unanalysable commands — parse errors, command names only known at run time, ``eval``/``bash -c`` of a
  non-literal string, a shell reading standard input, function definitions, assignments to ``PATH``,
  ``LD_PRELOAD``, ``BASH_ENV`` and similar, arithmetic on variables, control characters — are never allowed by
  a command-pattern rule (only by a whole-tool ``Bash`` rule, or the mode). Wrappers that change privileges,
  input or repetition (``sudo``, ``su``, ``xargs``, ``watch``, ``ssh``, ``trap`` …) are not stripped: the allow
  rule must name them. Allow rules match program names exactly: ``/bin/ls`` is not ``ls``.
* A deny or ask rule applies if it matches **any** subcommand, also behind any wrapper (``sudo -u x rm``), by
  program basename (``/bin/rm``), through Unicode look-alikes, full-width forms and case (``rм``, ``ｒｍ``,
  ``RM``), with run-time words standing for anything (``rm $X`` may be ``rm -rf /``); and for unanalysable
  commands and commands that run code given as data, if every literal word of the rule occurs anywhere in the
  text (``python3 -c "os.system('rm -rf x')"``).
* **A program only known at run time matches every Bash deny and ask rule** (deny wins), in every mode,
  whatever allow rules or hooks say: a command name built from expansions, substitutions, globs, brace
  expansion, ``$@``, backticks or arithmetic (``t${x}ouch``, ``r`:`m``, ``a=r b=m; $a$b``,
  ``"$(printf '\x72\x6d')"``); a shell reading its script from standard input in any spelling (``… | sh``,
  ``bash -s``, ``sh -``, ``bash /dev/stdin``, ``/dev/fd/0``, ``/proc/self/fd/0``, ``bash <<EOF``) or from a file
  only known at run time (``bash <(…)``, ``bash "$F"``); ``source``/``.`` of such a file; ``eval``, ``sh -c`` or
  ``python3 -c`` of a string only known at run time; an interpreter reading its program from a pipe
  (``… | python3``); alias definitions; assignments to ``PATH``, ``LD_*``, ``BASH_ENV``, ``IFS`` and the like;
  arithmetic on variables; and commands that cannot be parsed.
* **Global options before a subcommand** are looked through for the common multi-command programs (git,
  npm/pnpm/yarn, docker, podman, kubectl, helm, cargo, go, pip, uv, poetry, terraform, gh): ``Bash(git push:*)``
  matches ``git -C . -c k=v --no-pager push``. An option the table does not know, a run-time word before the
  subcommand, or a git alias defined inline (``-c alias.p=push p``) makes the subcommand unknown: every rule for
  the program's subcommands matches. The values of ``git -c`` settings are read as commands
  (``core.pager=…``, ``alias.x='!…'``). Runners (``uv run``, ``npx``, ``npm exec``, ``poetry run``, ``bundle
  exec`` …) are looked behind like ``sudo``.
* **Code that runs code** is never covered by a narrower allow rule: ``python3 -c``, ``node -e``, ``perl -e``,
  ``ruby -e``, ``php -r``, interpreters reading a here-doc, awk programs that can run commands or write files
  (``system``, ``|``, ``>``, ``getline``), ``sed -i`` and sed ``w``/``W``/``e`` commands, ``find -exec/-delete/
  -fprint``, ``git diff --output=``, ``xargs CMD``, ``uv run CMD``, ``tar --to-command``, ``rsync -e``, code-running
  global options (``git -c``, ``--exec-path``, ``--git-dir``, ``kubectl --kubeconfig``, ``cargo --config`` …),
  also after the subcommand for programs that take them there (``npm test --script-shell=x``, ``kubectl get pods
  --kubeconfig=k``). A long option abbreviated as ``getopt_long``, git and npm allow (``sed --expr=…``, ``sed
  --in-pl``, ``git fetch --upload-pa=…``) counts as the option it abbreviates, here and for the files a program
  writes. Such a command is allowed by a pattern rule only if the rule names every such word literally
  (``Bash(python3 -c print(1))``, ``Bash(find * -delete)``, ``Bash(sed -i *)``, ``Bash(xargs grep:*)``); else
  nothing decides and the mode's default applies (a whole-tool ``Bash`` rule, a hook's allow or
  ``bypassPermissions`` may allow it).
* Redirections never hide a command, and their targets are checked against Edit/Write (``>``, ``>>``, ``>|``,
  ``&>``, ``<>``, ``exec 3>f``, ``tee`` operands) and Read (``<``, ``<>``) deny and ask rules, resolved as bash
  resolves them: ``~``/``~/x`` is the home directory, ``~user`` that user's, ``~+`` the directory the command is
  in, ``~-`` the previous one; a target only known at run time — a glob (``secre?s/key``), brace expansion,
  ``$var``, ``$(…)``, ``~-`` before any ``cd``, ``~N``, a tilde after ``=`` — matches **every** Read or Edit deny
  and ask rule, and is never allowed automatically (not by a whole-tool ``Bash`` rule, a mode or a hook either:
  it asks). Files opened behind wrappers (``sudo sh -c``, ``trap``, ``xargs``) count too.
* Relative targets are resolved in the directory the command really runs in: the Bash tool's remembered working
  directory (``cwd`` of :meth:`PermissionPolicy.decide`; the Worker passes the tool's ``cwd``), then every
  literal ``cd``/``pushd``/``popd`` earlier in the command — each may fail, so both directories count. A
  directory change that cannot be followed (an unknown operand, a loop that changes directory, a function,
  ``source``, ``alias``, a command name known only at run time, ``env -C``, ``find -execdir``) makes later
  relative targets run-time targets. Subshells and ``$(…)`` keep their ``cd`` to themselves.

Modes
-----
The default for a call that no rule or hook decided:

=====================  ===================================================================================
``default``            read-only tools allowed inside the workspace; everything else asks
``acceptEdits``        as default, and file edits (Edit, Write, MultiEdit, NotebookEdit) inside the workspace
                       are allowed
``plan``               read-only tools as in default; every other tool is denied
``bypassPermissions``  allowed. Deny rules, ask rules and hooks' deny/ask still apply: Claude Code documents
                       that calls matched by an explicit ask rule are not auto-approved in any mode
``dontAsk``            as default, but whatever would ask (a rule, a hook or the default) is denied
=====================  ===================================================================================

A path outside the workspace and the additional directories is never allowed by a mode default (it asks, or
is denied in ``dontAsk``); only an explicit rule, a hook, or ``bypassPermissions`` allows it.

**Protected paths.** A write (Write/Edit/MultiEdit/NotebookEdit, or a Bash redirection or ``tee``) to a path
with a segment ``.git``, ``.claude``, ``.hookloop``, ``.clinerules``, ``.vscode``, ``.idea`` or ``.husky``, to
``.mcp.json``, ``.claude.json``, ``.gitconfig``, ``.gitmodules`` or a shell start-up file (``.bashrc``,
``.profile``, ``.zshrc`` …), or under ``$HOOKLOOP_HOME``, is never allowed by ``acceptEdits``,
``bypassPermissions`` or a hook's allow: it asks (is denied in ``dontAsk``) unless an allow rule names it
literally (``Edit(./.claude/**)``, ``Edit(.git/hooks/pre-commit)``; not ``Edit`` or ``Edit(**)``). Reads are
unaffected. Names are compared case-insensitively, symlinks resolved.

"Allow always"
--------------
:func:`suggest_rule` proposes the narrowest rule covering a call, as Claude Code does: ``Bash(npm test:*)``,
``Bash(git status:*)``, ``Bash(ls:*)``, ``Edit(./src/**)``, ``Read(//etc/**)``, ``WebFetch(domain:x.com)``, the
tool name for other tools; ``None`` — never a whole-tool ``Bash`` rule — when no single narrow rule exists. An
:class:`~hookloop.checkpoint.AllowAlways` without a rule adds that suggestion (or nothing). Explicit allow
rules and hooks' allows apply in every mode, ``plan`` included (as in Claude Code, ``plan`` only changes the
default).

The OS sandbox
--------------
With :attr:`PermissionPolicy.sandbox` set (a :class:`hookloop.sandbox.Sandbox`), a Bash call that will run
sandboxed and that no rule or hook decided is allowed when ``autoAllowBashIfSandboxed`` is on (default,
acceptEdits and dontAsk modes; plan still denies). Deny and ask rules and hooks' votes apply first, as always.
A call with ``dangerouslyDisableSandbox: true`` (when ``allowUnsandboxedCommands`` permits it) is treated as
matching an ask rule: it asks in every mode, ``bypassPermissions`` included. ``excludedCommands`` run
unsandboxed under the normal rules.

Settings
--------
:meth:`PermissionPolicy.from_settings` reads Claude Code's ``"permissions"`` key from settings layers
(user → project → local): ``allow``/``ask``/``deny`` lists merge across layers, ``additionalDirectories``
merge, the last ``defaultMode`` wins. Errors raise :class:`PermissionConfigError` naming the file and the JSON
path (``permissions.allow[3]``).
"""

from __future__ import annotations

from hookloop.permissions._merge import merge
from hookloop.permissions._policy import PermissionPolicy
from hookloop.permissions._suggest import suggest_rule
from hookloop.permissions._types import (
    Behavior,
    HookVote,
    PermissionConfigError,
    PermissionMode,
    PermissionOutcome,
    RuleMatch,
)

__all__ = [
    "Behavior",
    "HookVote",
    "PermissionConfigError",
    "PermissionMode",
    "PermissionOutcome",
    "PermissionPolicy",
    "RuleMatch",
    "merge",
    "suggest_rule",
]
