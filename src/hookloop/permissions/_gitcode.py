"""Git subcommands that run a command given as data: ``git submodule foreach CMD``, ``git rebase -x CMD``,
``git bisect run CMD…``, ``git filter-branch --tree-filter CMD``, ``git difftool -x CMD``, ``git grep -O CMD``,
``git clone -c core.sshCommand=CMD``, ``git config core.pager CMD`` …

:func:`git_code` reads one git command from its subcommand on (after the global options, which
:func:`hookloop.permissions._programs.scan_globals` skips) and returns what it runs: the *triggers* an allow rule
must name (``Bash(git:*)`` allows git, not the command git is told to run), the shell strings git hands to a
shell (``scripts``; ``None`` for one only known at run time) and the indices where an argument vector starts
(``git bisect run make test``). Deny and ask rules look into both, like behind ``sh -c``. Table-driven and linear
in the number of words; leaning towards "runs code" when the form is unusual.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from hookloop.permissions._coderun import long_option

__all__ = ["GitCode", "code_valued_key", "git_code", "plain_setting"]

Words = Sequence[str | None]


@dataclass(frozen=True, slots=True)
class GitCode:
    triggers: tuple[str, ...] = ()
    scripts: tuple[str | None, ...] = ()
    argv_starts: tuple[int, ...] = ()


_NONE: Final = GitCode()

# Options whose value is a command git runs through the shell, per subcommand.
_SCRIPT_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "rebase": frozenset({"-x", "--exec"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "filter-branch": frozenset(
        {
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
    "send-email": frozenset({"--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server"}),
    "daemon": frozenset({"--access-hook"}),
    "instaweb": frozenset({"--httpd", "-d", "--browser", "-b"}),
    "clone": frozenset({"-u", "--upload-pack"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
}
# Options with an optional attached command: `git grep -O` (the configured pager) or `-Oless` / `--open-…=less`.
_ATTACHED_SCRIPT: Final[dict[str, frozenset[str]]] = {"grep": frozenset({"-O", "--open-files-in-pager"})}
# Options that set configuration for the command (`git clone -c core.sshCommand=…`).
_CONFIG_OPTIONS: Final[dict[str, frozenset[str]]] = {"clone": frozenset({"-c", "--config"})}
# Options that name a directory of files git copies into the repository's .git (hooks included).
_TEMPLATE_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "init": frozenset({"--template"}),
    "clone": frozenset({"--template"}),
}
# (subcommand, action) pairs whose following words are a command (`bisect run CMD ARGS…`, `submodule foreach`).
_ARGV_ACTIONS: Final = frozenset({("bisect", "run"), ("hook", "run")})
_SCRIPT_ACTIONS: Final = frozenset({("submodule", "foreach")})
_ALWAYS_CODE: Final = frozenset({"filter-branch", "filter-repo", "web--browse"})

_CODE_KEY: Final = re.compile(
    r"(core\.(pager|editor|sshcommand|hookspath|fsmonitor|askpass|gitproxy|worktree|attributesfile)"
    r"|alias\..+|pager\..+|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver"
    r"|(merge|diff)tool\..+\.(cmd|path)|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper"
    r"|gpg(\..+)?\.program|sequence\.editor|sendemail\..+|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)"
    r"|include(if\..+)?\.path|init\.templatedir|web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path)"
    r"|ssh\.variant|core\.sshcommand|protocol\..+|url\..+|http\..+|instaweb\..+|guitool\..+\.cmd)",
    re.IGNORECASE,
)


_PLAIN_KEY: Final = re.compile(
    r"(user|author|committer|color|advice|column|i18n|status|log)\.[a-z0-9.-]+"
    r"|core\.(autocrlf|quotepath|filemode|ignorecase|longpaths|safecrlf|eol|abbrev|whitespace)"
    r"|init\.defaultbranch|(pull|push|fetch|rebase|merge|diff)\.(rebase|ff|default|autosetupremote|prune|"
    r"autostash|conflictstyle|renames|noprefix|mnemonicprefix|algorithm|colormoved)"
    r"|(commit|tag)\.gpgsign|safe\.directory|gc\.auto",
    re.IGNORECASE,
)


def plain_setting(key: str) -> bool:
    """Whether a git configuration key is known to hold plain data — an identity, colours, a default branch —
    so ``git -c KEY=VALUE`` runs nothing (``user.email=a@b.c``); any other key's value may be a command, a path
    git runs or settings that reach other files (:func:`code_valued_key` lists those known)."""
    return _PLAIN_KEY.fullmatch(key.strip()) is not None


def code_valued_key(key: str) -> bool:
    """Whether a git configuration key holds a command, a path git runs, or settings that reach other files."""
    return _CODE_KEY.fullmatch(key.strip()) is not None


def _value(words: Words, index: int, name: str) -> tuple[str | None, int]:
    """The value of the option at ``index`` (``--x=V``, ``-xV`` or the next word) and the index after it."""
    word = words[index]
    assert word is not None
    if word.startswith("--") and "=" in word:
        return word.split("=", 1)[1], index + 1
    if not word.startswith("--") and len(word) > len(name):
        return word[len(name) :], index + 1
    return (words[index + 1] if index + 1 < len(words) else ""), index + 2


def git_code(words: Words, sub: int) -> GitCode:
    """What the git command ``words`` (its subcommand at ``sub``) runs besides git itself; see the module."""
    if sub >= len(words) or words[sub] is None:
        return _NONE
    command = str(words[sub]).lower()
    triggers: list[str] = [command] if command in _ALWAYS_CODE else []
    scripts: list[str | None] = []
    argvs: list[int] = []
    script_options = _SCRIPT_OPTIONS.get(command, frozenset())
    attached = _ATTACHED_SCRIPT.get(command, frozenset())
    config_options = _CONFIG_OPTIONS.get(command, frozenset())
    templates = _TEMPLATE_OPTIONS.get(command, frozenset())
    if command == "config":
        return _config(words, sub)
    index = sub + 1
    first_operand = True
    while index < len(words):
        word = words[index]
        if word is None:
            if triggers or command in {"submodule", "bisect", "hook"}:
                scripts.append(None)
            index += 1
            continue
        if word == "--":
            break
        if first_operand and not word.startswith("-"):
            first_operand = False
            action = (command, word.lower())
            if action in _ARGV_ACTIONS:
                triggers.append(word)
                argvs.append(index + 1)
                break
            if action in _SCRIPT_ACTIONS:
                triggers.append(word)
                rest = [w for w in words[index + 1 :] if w is None or not (w.startswith("-") and w != "-")]
                scripts.append(None if any(w is None for w in rest) else " ".join(str(w) for w in rest))
                break
        # git takes any unambiguous prefix of a subcommand's long option: `--upload-pa=CMD`, `--exe CMD`.
        name = word[:2]
        if word.startswith("--"):
            name = long_option(word, script_options, attached, config_options, templates)
        if word.startswith("-") and name in script_options:
            value, index = _value(words, index, name)
            triggers.append(name)
            scripts.append(value)
            continue
        if word.startswith("-") and name in attached:
            triggers.append(name)
            if "=" in word or (not word.startswith("--") and len(word) > 2):
                scripts.append(_value(words, index, name)[0])
            index += 1
            continue
        if word.startswith("-") and name in config_options:
            value, index = _value(words, index, name)
            triggers.append(name)
            if value is None:
                scripts.append(None)
            elif "=" in value:
                key, setting = value.split("=", 1)
                if code_valued_key(key):
                    scripts.append(setting.lstrip("!"))
            continue
        if word.startswith("-") and name in templates:
            triggers.append(name)
        index += 1
    return GitCode(tuple(triggers), tuple(scripts), tuple(argvs))


_CONFIG_WRITES: Final = frozenset({"--add", "--replace-all", "set"})


def _config(words: Words, sub: int) -> GitCode:
    """``git config KEY VALUE`` (and ``--add``, ``--replace-all``, ``git config set``) of a key whose value is a
    command: the key is a trigger and the value a script deny rules look into. Writing the configuration is also
    a write to a protected path (:mod:`hookloop.permissions._dirs`)."""
    operands: list[str | None] = []
    index = sub + 1
    while index < len(words):
        word = words[index]
        index += 1
        if word is None:
            operands.append(None)
        elif word in {"-f", "--file", "--blob", "--type", "--default", "--comment"}:
            index += 1
        elif not word.startswith("-") or word == "-":
            operands.append(word)
    if operands and operands[0] in _CONFIG_WRITES:
        operands = operands[1:]
    if len(operands) < 2:
        return _NONE
    key, value = operands[0], operands[1]
    if key is None:
        return GitCode(("config",), (None,))
    if not code_valued_key(key):
        return _NONE
    return GitCode((key,), (None if value is None else value.lstrip("!"),))
