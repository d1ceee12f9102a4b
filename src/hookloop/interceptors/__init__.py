"""PRIVILEGED: interceptors may edit the request, the tool call and the tool result. Not for plugins."""

from hookloop.interceptors._base import (
    STOP_CHAIN,
    Interceptor,
    InterceptorChain,
    RequestContext,
    ToolCallView,
    ToolResultView,
)

__all__ = [
    "STOP_CHAIN",
    "Interceptor",
    "InterceptorChain",
    "RequestContext",
    "ToolCallView",
    "ToolResultView",
]
