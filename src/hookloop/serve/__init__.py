"""``hookloop serve``: a web inbox for runs and approvals (``pip install 'hookloop[serve]'``).

Server-rendered pages over any :class:`~hookloop.durable.RunStore` — a durable backend's database or a folder of
checkpoints (:class:`~hookloop.durable.CheckpointDirStore`): the runs (status, age, turns, tokens, cost, pending
calls), one run's timeline (live while it runs, over server-sent events), the pending approvals, and the
decisions (approve once, allow always with the exact rule it adds, deny with a reason, approve an edited input
checked against the tool's schema), taken through :meth:`RunStore.approve` like ``hookloop runs approve``.

Security: every request needs the access token (``?token=`` once, which sets an HttpOnly SameSite=Strict
cookie, or ``Authorization: Bearer``); every form carries a CSRF token and a cross-origin POST is refused; a
strict Content-Security-Policy allows only the inbox's own scripts; every value a model, tool or hook produced
is HTML-escaped, and the values of the process's secret environment variables are withheld from every page.
"""

from __future__ import annotations

from hookloop.serve._app import create_app
from hookloop.serve._security import new_token

__all__ = ["create_app", "new_token"]
