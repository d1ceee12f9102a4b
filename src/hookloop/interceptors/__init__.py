"""PRIVILEGED: interceptors may edit the request, the tool call, the tool result and (compaction) the history.

Not for plugins or scripts — those get :mod:`hookloop.hooks`. See :mod:`hookloop.interceptors._base` for the
protocol, and the built-ins: :class:`ToolOutputTruncation`, :class:`NotificationInjector` (installed by every
Worker; use ``worker.notify``), :class:`Compaction`.
"""

from hookloop.interceptors._base import (
    COMPACT,
    STOP_CHAIN,
    CompactionContext,
    Interceptor,
    InterceptorChain,
    RequestContext,
    ToolCallView,
    ToolResultView,
    TurnEndView,
)
from hookloop.interceptors.compaction import Compaction, CompactionPlan, plan_compaction
from hookloop.interceptors.notifications import Notification, NotificationInjector
from hookloop.interceptors.truncation import ToolOutputTruncation

__all__ = [
    "COMPACT",
    "STOP_CHAIN",
    "Compaction",
    "CompactionContext",
    "CompactionPlan",
    "Interceptor",
    "InterceptorChain",
    "Notification",
    "NotificationInjector",
    "RequestContext",
    "ToolCallView",
    "ToolOutputTruncation",
    "ToolResultView",
    "TurnEndView",
    "plan_compaction",
]
