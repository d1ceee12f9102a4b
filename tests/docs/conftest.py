"""The docs tests: README blocks and examples/ programs, run as a user runs them."""

from __future__ import annotations

import sys
from pathlib import Path

# pytest imports the modules here under a package name without putting this directory on sys.path; the test
# modules import docs_markdown and docs_runner from it.
sys.path.insert(0, str(Path(__file__).parent))
