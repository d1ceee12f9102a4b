"""Red-team corpus: ``WebFetch(domain:…)`` rules against URLs that parsers read differently.

Python's ``urlsplit`` reads ``https://evil.com\\@example.com/`` as a URL on ``example.com``; the WHATWG URL parser
(browsers, Node — a WebFetch tool written in it, like Claude Code's) and urllib3 (requests) read the backslash as
a slash and fetch ``evil.com``. WHATWG also drops tabs and line breaks, percent-decodes the host and accepts
``https:evil.com``. A deny rule must match a host any of them would fetch, in every mode and behind a hook's
allow; an allow rule must match every host they may read, or it does not allow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookloop.permissions import PermissionPolicy
from permissions.evasion_harness import HOOK_ALLOW, MODES

EVIL = [
    "https://evil.com\\@example.com/",
    "https://evil.com\\\\@example.com/x",
    "http://evil%2ecom/",
    "https://evil%2Ecom./x",
    "https://ev\til.com/",
    "https://evil.com\n/x",
    "https:evil.com/x",
    "https:/evil.com/x",
    "evil.com/x",
    "https://api.evil.com\\@example.com/",
    "https://ｅｖｉｌ.com/",
]
SAFE = ["https://example.com/a", "https://docs.example.com/b", "https://example.com#@evil.com/"]


@pytest.mark.parametrize("url", EVIL)
def test_a_deny_rule_matches_every_host_the_url_may_name(url: str, tmp_path: Path) -> None:
    for allow in ((), ("WebFetch",), ("WebFetch(domain:example.com)",)):
        for mode in MODES:
            policy = PermissionPolicy(allow=allow, deny=("WebFetch(domain:evil.com)",), mode=mode, workspace=tmp_path)
            for hooks in ((), (HOOK_ALLOW,)):
                outcome = policy.decide("WebFetch", {"url": url}, hooks=hooks)
                assert outcome.behavior == "deny", (url, allow, mode, hooks, outcome)


@pytest.mark.parametrize("url", EVIL[:4])
def test_an_allow_rule_needs_every_reading_of_the_host(url: str, tmp_path: Path) -> None:
    policy = PermissionPolicy(allow=("WebFetch(domain:example.com)",), workspace=tmp_path)
    assert policy.check("WebFetch", {"url": url}) is None, url
    assert policy.decide("WebFetch", {"url": url}).behavior == "ask", url


@pytest.mark.parametrize("url", SAFE)
def test_ordinary_urls_keep_their_decisions(url: str, tmp_path: Path) -> None:
    policy = PermissionPolicy(
        allow=("WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)"),
        deny=("WebFetch(domain:evil.com)",),
        workspace=tmp_path,
    )
    assert policy.decide("WebFetch", {"url": url}).behavior == "allow", url
