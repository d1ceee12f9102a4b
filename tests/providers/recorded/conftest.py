"""Tests that replay real recorded provider traffic (``shared/provider-recordings``, never copied here).

When the folder is absent (see :func:`providers.recorded.replay.recordings_dir`) the tests of this directory are
not collected — a collection-time condition, not a skip: the synthetic fixtures of ``tests/providers`` cover
every behaviour they check.
"""

from __future__ import annotations

from providers.recorded.replay import RECORDINGS

collect_ignore_glob = [] if RECORDINGS is not None else ["test_*.py"]
