"""Make the repository's ``bench`` package importable however pytest is started (``pytest tests/bench`` does
not put the repository root on ``sys.path``; ``python -m pytest`` does)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
