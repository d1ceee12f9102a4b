"""Glob patterns as regular expressions, and the file types Grep's pure-Python backend knows.

Syntax: ``*`` any characters but ``/``; ``?`` one character but ``/``; ``[abc]`` / ``[!abc]`` / ``[^abc]``
classes; ``{a,b}`` alternatives (nested, may contain ``/``); a whole ``**`` component any number of directories
(zero included); ``\\`` escapes the next character. Hidden files are matched like any other (as ripgrep's
``--hidden`` and Claude Code's tools do).
"""

from __future__ import annotations

import re

__all__ = ["FILE_TYPES", "compile_glob", "expand_braces", "glob_regex", "has_magic", "split_globs"]

_MAX_ALTERNATIVES = 1024
_MAGIC = re.compile(r"[*?\[{]")


def has_magic(text: str) -> bool:
    """Whether ``text`` holds a glob metacharacter."""
    return _MAGIC.search(text) is not None


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` → ``[abd, acd]``, nested; braces without a top-level comma stay literal. Capped at 1024
    alternatives (raises ``ValueError`` beyond)."""
    results = [pattern]
    done: list[str] = []
    while results:
        current = results.pop()
        span = _first_brace_group(current)
        if span is None:
            done.append(current)
            continue
        start, end, options = span
        results.extend(current[:start] + option + current[end + 1 :] for option in options)
        if len(results) + len(done) > _MAX_ALTERNATIVES:
            raise ValueError(f"the pattern {pattern!r} expands to more than {_MAX_ALTERNATIVES} alternatives")
    return list(dict.fromkeys(done))


def _first_brace_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{…}`` with a top-level comma: (start, end, options)."""
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth, j, options, last = 0, i, [], i + 1
            while j < len(text):
                c = text[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "," and depth == 1:
                    options.append(text[last:j])
                    last = j + 1
                j += 1
            if j < len(text) and options:
                options.append(text[last:j])
                return i, j, options
        i += 1
    return None


def glob_regex(pattern: str) -> str:
    """The regular expression (without anchors) for one brace-free glob ``pattern`` over ``/`` paths."""
    parts = [p for p in pattern.split("/") if p]
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_component(part) + ("" if last else "/"))
    return "".join(out)


def _component(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        i += 1
        if char == "*":
            while i < len(part) and part[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i < len(part):
            out.append(re.escape(part[i]))
            i += 1
        elif char == "[":
            j = i
            if j < len(part) and part[j] in "!^":
                j += 1
            if j < len(part) and part[j] == "]":
                j += 1
            while j < len(part) and part[j] != "]":
                j += 1
            if j >= len(part):
                out.append(re.escape(char))  # no closing bracket: a literal "["
                continue
            body = part[i:j]
            i = j + 1
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("]", "\\]")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
        else:
            out.append(re.escape(char))
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A compiled matcher for ``pattern`` (braces expanded) to use with ``fullmatch`` on ``/`` paths.

    Raises ``ValueError`` naming the pattern when it cannot be compiled.
    """
    try:
        alternatives = [glob_regex(p) for p in expand_braces(pattern)]
        return re.compile("(?:" + "|".join(alternatives) + ")", re.DOTALL)
    except re.error as exc:
        raise ValueError(f"the glob pattern {pattern!r} is not valid: {exc}") from None


def split_globs(value: str) -> list[str]:
    """Grep's ``glob`` argument as patterns: split on whitespace, and on commas outside braces (Claude Code)."""
    out: list[str] = []
    for word in value.split():
        if "{" in word and "}" in word:
            out.append(word)
        else:
            out.extend(p for p in word.split(",") if p)
    return out


FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm", "*.xhtml"),
    "java": ("*.java",),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "json": ("*.json", "*.jsonl"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "markdown": ("*.md", "*.markdown", "*.mdx"),
    "php": ("*.php",),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "rb": ("*.rb", "Gemfile", "Rakefile"),
    "ruby": ("*.rb", "Gemfile", "Rakefile"),
    "rust": ("*.rs",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "typescript": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml",),
    "yaml": ("*.yaml", "*.yml"),
}
"""File types for Grep's ``type`` in the pure-Python backend (ripgrep knows many more)."""
