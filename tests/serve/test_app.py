"""The inbox through Starlette's test client over a real checkpoint folder: every route, every refusal, and the
decisions (approve, allow always, deny with a reason, an edited input checked against the schema) continuing real
CLI runs in this process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from inbox_helpers import HOOKLOOP, XSS, Project
from starlette.testclient import TestClient

from hookloop.durable import CheckpointDirStore
from hookloop.serve import create_app, new_token


@pytest.fixture
def token() -> str:
    return new_token()


@pytest.fixture
def client(project: Project, token: str) -> Iterator[TestClient]:
    app = create_app(CheckpointDirStore(project.checkpoints), token=token)
    with TestClient(app, follow_redirects=False) as c:
        c.headers["authorization"] = f"Bearer {token}"
        yield c


def form_of(page: str) -> dict[str, str]:
    """The hidden fields of the first decision form."""
    return dict(re.findall(r'<input type="hidden" name="(csrf|pause_id)" value="([^"]*)">', page))


def finish(client: TestClient, run_id: str) -> str:
    """Follow the run's live event stream until it ends; returns the final status it reports."""
    with client.stream("GET", f"/runs/{run_id}/events?after=0") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    ended = re.findall(r"event: end\ndata: (\w+)", text)
    assert ended, text
    return ended[-1]


def decide(client: TestClient, run_id: str, **fields: str) -> object:
    page = client.get(f"/runs/{run_id}").text
    return client.post(f"/runs/{run_id}/decide", data={**form_of(page), **fields})


# -- the token ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/runs"),
        ("GET", "/approvals"),
        ("GET", "/runs/x"),
        ("GET", "/runs/x/events"),
        ("GET", "/static/htmx.min.js"),
        ("POST", "/runs/x/decide"),
        ("POST", "/runs/x/cancel"),
        ("GET", "/nope"),
    ],
)
def test_every_route_refuses_a_request_without_the_token(project: Project, token: str, method: str, path: str) -> None:
    app = create_app(CheckpointDirStore(project.checkpoints), token=token)
    with TestClient(app, follow_redirects=False) as client:
        for headers in ({}, {"authorization": "Bearer wrong-token-wrong-token"}, {"cookie": "hookloop_inbox=x"}):
            response = client.request(method, path, headers=headers)
            assert response.status_code == 403, (path, headers)
            assert "Access token required" in response.text
            assert token not in response.text
        assert client.get(f"{path}?token=not-the-token").status_code == 403


def test_the_token_in_the_address_becomes_a_strict_httponly_cookie(project: Project, token: str) -> None:
    app = create_app(CheckpointDirStore(project.checkpoints), token=token)
    with TestClient(app, follow_redirects=False) as client:
        first = client.get(f"/runs?status=paused&token={token}")
        assert first.status_code == 303
        assert first.headers["location"] == "/runs?status=paused"  # the token leaves the address
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie
        assert "Path=/" in cookie
        page = client.get("/runs?status=paused")
        assert page.status_code == 200
        assert "<h1>Runs</h1>" in page.text
        assert token not in page.text
        assert client.get("/static/htmx.min.js").status_code == 200


def test_hosts_other_than_the_allowed_names_are_refused(project: Project, token: str) -> None:
    app = create_app(CheckpointDirStore(project.checkpoints), token=token, allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        auth = {"authorization": f"Bearer {token}"}
        assert client.get("/runs", headers=auth).status_code == 200
        assert client.get("/runs", headers={**auth, "host": "evil.example:8765"}).status_code == 421


def test_pages_carry_a_strict_content_security_policy(client: TestClient) -> None:
    response = client.get("/runs")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        create_app(CheckpointDirStore(Path("/nonexistent")), token="short")


# -- the pages ------------------------------------------------------------------------------------------------


def test_runs_lists_paused_runs_with_their_pending_calls_and_filters_by_status(
    client: TestClient, project: Project
) -> None:
    run_id = project.pause("touch a")
    page = client.get("/runs").text
    assert run_id in page
    assert 'class="badge paused"' in page
    assert f'href="/runs/{run_id}#pending">1<' in page
    assert run_id in client.get("/runs?status=paused").text
    assert run_id not in client.get("/runs?status=finished").text
    assert client.get("/runs?status=bogus").status_code == 400
    partial = client.get("/runs", headers={"hx-request": "true"}).text
    assert partial.startswith('<div id="runs"')
    assert "<html" not in partial
    assert client.get("/").headers["location"] == "/runs"


def test_a_run_page_shows_the_timeline_and_the_pending_call(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch a")
    page = client.get(f"/runs/{run_id}").text
    assert "tool call Bash (call_0001)" in page
    assert "model request · turn 1" in page
    assert "asked by <strong>mode &#34;default&#34;</strong>" in page
    assert "Approve once" in page
    assert "Deny" in page
    assert "Approve with this input" in page
    assert "Allow always: <code>Bash(touch:*)</code>" in page  # the exact rule it adds
    approvals = client.get("/approvals").text
    assert run_id in approvals
    assert "Approve once" in approvals


@pytest.mark.parametrize("run_id", ["run_nope", "%2E%2E", ".inbox", "a%2F..%2F..%2Fetc", "x" * 300])
def test_unknown_runs_are_404(client: TestClient, run_id: str) -> None:
    assert client.get(f"/runs/{run_id}").status_code == 404
    assert client.get(f"/runs/{run_id}/events").status_code == 404
    assert client.get("/no/such/page").status_code == 404


def test_methods_are_checked(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch a")
    assert client.get(f"/runs/{run_id}/decide").status_code == 405
    assert client.post(f"/runs/{run_id}").status_code == 405


# -- deciding -------------------------------------------------------------------------------------------------


def test_approve_once_continues_the_run_in_the_server_and_it_finishes(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch approved.marker")
    response = decide(client, run_id, **{"action:call_0001": "approve"})
    assert response.status_code == 303
    assert response.headers["location"] == f"/runs/{run_id}?done=approved"
    assert finish(client, run_id) == "finished"
    assert (project.root / "approved.marker").exists()
    page = client.get(f"/runs/{run_id}").text
    assert 'class="badge finished"' in page
    assert "All done." in page
    assert "by the user (inbox)" in page
    assert "Bash: approved once" in page
    assert run_id in client.get("/runs?status=finished").text


def test_a_second_decision_on_the_same_pause_is_refused(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch once.marker")
    page = client.get(f"/runs/{run_id}").text
    fields = {**form_of(page), "action:call_0001": "approve"}
    assert client.post(f"/runs/{run_id}/decide", data=fields).status_code == 303
    finish(client, run_id)
    again = client.post(f"/runs/{run_id}/decide", data=fields)
    assert again.status_code == 409
    assert "refused" in again.text


def test_a_pause_resumed_from_the_terminal_cannot_be_approved_in_the_inbox(
    client: TestClient, project: Project
) -> None:
    run_id = project.pause("touch cli.marker")
    page = client.get(f"/runs/{run_id}").text
    resumed = project.cli("resume", str(project.checkpoints / f"{run_id}.checkpoint.json"), "--yes")
    assert resumed.returncode == 0, resumed.stderr
    response = client.post(f"/runs/{run_id}/decide", data={**form_of(page), "action:call_0001": "approve"})
    assert response.status_code == 409
    assert "already decided" in response.text
    assert 'class="badge finished"' in client.get(f"/runs/{run_id}").text


def test_a_decision_on_a_stale_pause_is_refused(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch one.marker", "touch two.marker")
    first = client.get(f"/runs/{run_id}").text
    assert decide(client, run_id, **{"action:call_0001": "approve"}).status_code == 303
    assert finish(client, run_id) == "paused"  # the second call asks again: a new pause
    second = client.get(f"/runs/{run_id}").text
    assert form_of(second)["pause_id"] != form_of(first)["pause_id"]
    stale = client.post(f"/runs/{run_id}/decide", data={**form_of(first), "action:call_0001": "approve"})
    assert stale.status_code == 409
    assert "no longer the current one" in stale.text
    call = re.search(r'name="action:(call_\w+)"', second)
    assert call is not None
    assert decide(client, run_id, **{f"action:{call.group(1)}": "approve"}).status_code == 303
    assert finish(client, run_id) == "finished"
    assert (project.root / "one.marker").exists()
    assert (project.root / "two.marker").exists()


def test_deny_with_a_reason_reaches_the_model_and_nothing_runs(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch denied.marker")
    response = decide(client, run_id, **{"action:call_0001": "deny", "reason:call_0001": "not on a Friday"})
    assert response.status_code == 303
    assert finish(client, run_id) == "finished"
    assert not (project.root / "denied.marker").exists()
    page = client.get(f"/runs/{run_id}").text
    assert "not on a Friday" in page
    assert "error of Bash (call_0001)" in page


def test_allow_always_adds_the_rule_shown(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch a.marker", "touch b.marker")
    assert decide(client, run_id, **{"action:call_0001": "always"}).status_code == 303
    assert finish(client, run_id) == "finished"  # the second touch is covered by Bash(touch:*): no new pause
    assert (project.root / "b.marker").exists()
    assert "rule Bash(touch:*)" in client.get(f"/runs/{run_id}").text


def test_allow_always_is_refused_when_no_narrow_rule_covers_the_call(client: TestClient, project: Project) -> None:
    run_id = project.pause("python3 -c 'print(1)'")
    page = client.get(f"/runs/{run_id}").text
    assert "Allow always" not in page
    response = decide(client, run_id, **{"action:call_0001": "always"})
    assert response.status_code == 400
    assert "no narrow rule" in response.text
    assert 'class="badge paused"' in client.get(f"/runs/{run_id}").text


@pytest.mark.parametrize(
    ("edited", "status", "message"),
    [
        ("{not json", 400, "is not JSON"),
        ("[1, 2]", 400, "must be a JSON object"),
        ('{"command": 5}', 409, "does not fit Bash"),
        ('{"cmd": "touch x"}', 409, "does not fit Bash"),
    ],
)
def test_an_edited_input_is_checked_against_the_tool_schema_before_it_is_accepted(
    client: TestClient, project: Project, edited: str, status: int, message: str
) -> None:
    run_id = project.pause("touch original.marker")
    response = decide(client, run_id, **{"action:call_0001": "edit", "input:call_0001": edited})
    assert response.status_code == status, response.text
    assert message in response.text
    page = client.get(f"/runs/{run_id}").text
    assert 'class="badge paused"' in page  # nothing was consumed: the pause can still be decided
    assert decide(client, run_id, **{"action:call_0001": "deny"}).status_code == 303


def test_an_edited_input_runs_instead_of_the_original(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch original.marker")
    edited = '{"command": "touch edited.marker"}'
    assert decide(client, run_id, **{"action:call_0001": "edit", "input:call_0001": edited}).status_code == 303
    assert finish(client, run_id) == "finished"
    assert (project.root / "edited.marker").exists()
    assert not (project.root / "original.marker").exists()


def test_a_pause_with_several_calls_needs_a_decision_for_each(client: TestClient, project: Project) -> None:
    run_id = project.pause(("touch one.marker", "touch two.marker"))
    page = client.get(f"/runs/{run_id}").text
    calls = re.findall(r'<fieldset class="call" id="call-(call_\w+)">', page)
    assert len(calls) == 2
    assert 'type="radio"' in page
    assert "Submit the decisions" in page
    half = decide(client, run_id, **{f"action:{calls[0]}": "approve"})
    assert half.status_code == 400
    assert "choose approve" in half.text
    both = {f"action:{calls[0]}": "approve", f"action:{calls[1]}": "deny", f"reason:{calls[1]}": "only one"}
    assert decide(client, run_id, **both).status_code == 303
    assert finish(client, run_id) == "finished"
    assert (project.root / "one.marker").exists()
    assert not (project.root / "two.marker").exists()


def test_a_missing_decision_or_unknown_action_is_refused(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch a")
    assert decide(client, run_id).status_code == 400
    assert decide(client, run_id, **{"action:call_0001": "yolo"}).status_code == 400


def test_forms_need_the_csrf_token_and_the_same_origin(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch csrf.marker")
    fields = {**form_of(client.get(f"/runs/{run_id}").text), "action:call_0001": "approve"}
    for bad in ({**fields, "csrf": "x"}, {k: v for k, v in fields.items() if k != "csrf"}):
        response = client.post(f"/runs/{run_id}/decide", data=bad)
        assert response.status_code == 403
        assert "CSRF" in response.text
    cross = client.post(f"/runs/{run_id}/decide", data=fields, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403
    assert client.post(f"/runs/{run_id}/cancel", data={"csrf": "x"}).status_code == 403
    assert 'class="badge paused"' in client.get(f"/runs/{run_id}").text
    assert not (project.root / "csrf.marker").exists()


def test_cancel_ends_a_paused_run_and_its_pause_can_no_longer_be_approved(client: TestClient, project: Project) -> None:
    run_id = project.pause("touch cancelled.marker")
    page = client.get(f"/runs/{run_id}").text
    response = client.post(f"/runs/{run_id}/cancel", data={"csrf": form_of(page)["csrf"]})
    assert response.status_code == 303
    assert 'class="badge cancelled"' in client.get(f"/runs/{run_id}").text
    refused = client.post(f"/runs/{run_id}/decide", data={**form_of(page), "action:call_0001": "approve"})
    assert refused.status_code == 409
    assert not (project.root / "cancelled.marker").exists()


# -- what is rendered -----------------------------------------------------------------------------------------


def test_what_a_tool_produced_is_escaped(client: TestClient, project: Project) -> None:
    payload = XSS.replace("'", "")
    run_id = project.pause(f"printf '%s' '{payload}'")
    assert decide(client, run_id, **{"action:call_0001": "approve"}).status_code == 303
    finish(client, run_id)
    page = client.get(f"/runs/{run_id}").text
    assert "<script>window" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;window.__xss=script&lt;/script&gt;" in page
    events = client.get(f"/runs/{run_id}/events?after=0").text
    assert "<script>window" not in events
    assert "&lt;script&gt;" in events


def test_secret_environment_values_are_never_rendered(
    project: Project, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-api03-SECRETSECRETSECRET"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    run_id = project.pause(f"echo {secret}")
    app = create_app(CheckpointDirStore(project.checkpoints), token=token)
    with TestClient(app, follow_redirects=False, headers={"authorization": f"Bearer {token}"}) as client:
        assert decide(client, run_id, **{"action:call_0001": "approve"}).status_code == 303
        finish(client, run_id)
        for path in ("/runs", f"/runs/{run_id}", "/approvals", f"/runs/{run_id}/events?after=0"):
            text = client.get(path).text
            assert secret not in text, path
        assert "[secret withheld]" in client.get(f"/runs/{run_id}").text


def test_a_run_cancelled_at_the_terminal_continues_from_the_inbox_with_a_message(
    client: TestClient, project: Project
) -> None:
    fifo = project.root / "started.fifo"
    os.mkfifo(fifo)
    command = f"echo started > {fifo.name}; until [ -e never ]; do sleep 0.05; done"
    turns = [[{"text": "Waiting."}, {"tool": "Bash", "arguments": {"command": command}}], [{"text": "Continued."}]]
    model = project.root / "model.json"
    model.write_text(json.dumps({"turns": [{"blocks": blocks} for blocks in turns]}))
    run = subprocess.Popen(
        [*HOOKLOOP, "run", "go", "--model", f"scripted:{model}", "--cwd", str(project.root), "--yes"],
        env=project.env,
        cwd=project.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    with fifo.open() as started:  # blocks until the tool runs
        assert started.read().strip() == "started"
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 130, stderr
    (path,) = project.checkpoints.glob("*.checkpoint.json")
    run_id = path.name.removesuffix(".checkpoint.json")
    page = client.get(f"/runs/{run_id}").text
    assert "cancelled with Ctrl-C" in page
    assert "Continue the conversation" in page
    response = client.post(
        f"/runs/{run_id}/decide", data={**form_of(page), "action": "continue", "message": "please go on"}
    )
    assert response.status_code == 303
    assert finish(client, run_id) == "finished"
    done = client.get(f"/runs/{run_id}").text
    assert "please go on" in done
    assert "Continued." in done
