"""String helpers shared by the matchers: ``*``-only globs, and folding for conservative (deny/ask) matching.

Matching is deliberately asymmetric. Allow rules match exactly what the shell or tool will see. Deny and ask
rules also match *folded* text — NFKC-normalised, case-folded, with look-alike letters mapped to ASCII and
invisible characters removed — so that ``ｒｍ``, ``rм`` (Cyrillic ``м``) or ``RM`` (which runs ``rm`` on a
case-insensitive file system) cannot slip past a deny rule, while none of them is ever allowed by ``Bash(rm:*)``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

__all__ = ["OPAQUE", "fold", "star_intersects", "star_match"]

#: Stands for a word whose value is only known at run time (``$VAR``, ``$(cmd)``) inside a match subject.
OPAQUE: Final = "\x00"

# Letters that render like ASCII ones (Unicode "confusables", the common Cyrillic and Greek cases). NFKC already
# maps full-width and mathematical forms; these survive it.
_CONFUSABLES: Final = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
        "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s", "т": "t",
        "ц": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "ү": "y", "з": "3",
        "А": "a", "В": "b", "С": "c", "Е": "e", "Н": "h", "І": "i", "Ј": "j", "К": "k", "М": "m", "О": "o",
        "Р": "p", "Ѕ": "s", "Т": "t", "Х": "x", "У": "y",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
        "υ": "u", "χ": "x", "γ": "y", "ω": "w",
        "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m", "Ν": "n", "Ο": "o",
        "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x",
        # Latin look-alikes
        "ı": "i", "ȷ": "j", "ℓ": "l", "ɡ": "g", "ꞵ": "b",
    }
)  # fmt: skip


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """Fold ``text`` for conservative matching: NFKC, drop format/combining marks, map look-alikes, casefold."""
    normalised = unicodedata.normalize("NFKC", text)
    kept = "".join(ch for ch in normalised if unicodedata.category(ch) not in {"Cf", "Mn", "Me"})
    return kept.translate(_CONFUSABLES).casefold()


@lru_cache(maxsize=1024)
def _star_regex(pattern: str) -> re.Pattern[str]:
    # The shape fnmatch uses: every middle literal matched lazily inside an atomic group, so a pattern with
    # several stars stays linear on long subjects instead of backtracking catastrophically.
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return re.compile(re.escape(pattern) + r"\Z", re.DOTALL)
    middle = "".join(f"(?>.*?{re.escape(piece)})" for piece in pieces[1:-1])
    return re.compile(re.escape(pieces[0]) + middle + ".*" + re.escape(pieces[-1]) + r"\Z", re.DOTALL)


def star_match(pattern: str, subject: str) -> bool:
    """Whether ``subject`` matches ``pattern``, where ``*`` matches any string (spaces and ``/`` included).

    An :data:`OPAQUE` character in ``subject`` is matched only by a ``*``: a run-time value is accepted only
    where the pattern accepts anything.
    """
    return _star_regex(pattern).match(subject) is not None


#: Above this many pattern×subject cells :func:`star_intersects` gives up and answers "could match".
_DP_LIMIT: Final = 4_000_000


def star_intersects(pattern: str, subject: str) -> bool:
    """Whether some value of the :data:`OPAQUE` parts of ``subject`` would make it match ``pattern``.

    Used for deny and ask rules: ``rm $X`` could be ``rm -rf /``. Both the pattern's ``*`` and the subject's
    opaque parts stand for any string, so this decides whether two ``*``-globs share an instance.
    """
    if OPAQUE not in subject:
        return star_match(pattern, subject)
    m, n = len(pattern), len(subject)
    if (m + 1) * (n + 1) > _DP_LIMIT:
        return True  # fail towards the restrictive answer rather than spend unbounded time
    reach = [[False] * (n + 1) for _ in range(m + 1)]
    reach[0][0] = True
    for i in range(m + 1):
        row = reach[i]
        for j in range(n + 1):
            if not row[j]:
                continue
            p = pattern[i] if i < m else None
            s = subject[j] if j < n else None
            if p == "*":
                reach[i + 1][j] = True  # the star matches nothing more
                if s is not None:
                    row[j + 1] = True  # the star absorbs one more subject character
            if s == OPAQUE:
                row[j + 1] = True  # the run-time value is empty from here on
                if p is not None and p != "*":
                    reach[i + 1][j] = True  # the run-time value supplies this pattern character
            elif p is not None and p != "*" and p == s:
                reach[i + 1][j + 1] = True
    return reach[m][n]
