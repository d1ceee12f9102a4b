"""What a command loads before it answers (issue 16, start-up time): each command imports only what it needs, so
``hookloop runs list`` on a SQLite store, ``hookloop --help`` and ``import hookloop`` start without the Worker,
the command hooks, a durable backend or SQLAlchemy. Real subprocesses; what is checked is the set of modules the
process imported when it ended (a figure of time would be flaky on a loaded machine: ``python -m bench --only
durable`` times ``runs list``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, os, sys
sys.argv = ["hookloop", *json.loads(os.environ["PROBE_ARGS"])]
try:
    from hookloop.cli import main
    main()
finally:
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump(sorted(sys.modules), out)
"""

HEAVY = ("hookloop.worker", "hookloop._loop", "hookloop.command_hooks", "hookloop.tools", "hookloop.permissions")
BACKENDS = ("dbos", "temporalio", "sqlalchemy", "hookloop.durable.dbos", "hookloop.durable.temporal")


def loaded(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``hookloop ARGS``; its result and the modules it had imported when it ended."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, "PROBE_ARGS": json.dumps(args), "PROBE_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done, set(json.loads(out.read_text()))


def imported(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, str]:
    """A SQLite run database holding one queued run (nobody serves it); its URL and the run id."""
    from hookloop.durable.dbos import DBOSBackend

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"

    async def make() -> str:
        backend = DBOSBackend(url)
        try:
            return await backend.start("list me", worker="nobody")
        finally:
            await backend.close()

    return url, asyncio.run(make())


def test_runs_list_and_show_on_sqlite_load_no_backend_no_worker(
    store: tuple[str, str], tmp_path: Path, env: dict[str, str]
) -> None:
    url, run_id = store
    done, modules = loaded(tmp_path, env, "runs", "list", "--db", url, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [r["run_id"] for r in json.loads(done.stdout)] == [run_id]
    assert imported(modules, HEAVY + BACKENDS) == set()
    done, modules = loaded(tmp_path, env, "runs", "show", run_id, "--db", url)
    assert done.returncode == 0, done.stderr
    assert run_id in done.stdout
    assert "list me" in done.stdout
    assert imported(modules, HEAVY + BACKENDS) == set()


def test_the_help_loads_no_command_implementation(tmp_path: Path, env: dict[str, str]) -> None:
    done, modules = loaded(tmp_path, env, "--help")
    assert done.returncode == 0, done.stderr
    for verb in ("demo", "run", "resume", "hooks", "doctor", "serve", "chat", "runs", "worker"):
        assert f" {verb} " in done.stdout, verb
    assert imported(modules, HEAVY + BACKENDS + ("hookloop.cli._chat", "hookloop.cli._session")) == set()
    done, modules = loaded(tmp_path, env, "runs", "--help")
    assert done.returncode == 0, done.stderr
    assert "approve" in done.stdout
    assert imported(modules, HEAVY + BACKENDS) == set()


def test_a_command_loads_only_its_own_module(tmp_path: Path, env: dict[str, str]) -> None:
    done, modules = loaded(tmp_path, env, "hooks", "list", "--cwd", str(tmp_path), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hooks"] == []
    assert imported(modules, ("hookloop.cli._runs", "hookloop.cli._chat", "hookloop.cli._serve", *BACKENDS)) == set()


def test_a_mistyped_command_still_gets_the_suggestion_from_every_command(tmp_path: Path, env: dict[str, str]) -> None:
    done, _ = loaded(tmp_path, env, "runz", "list")
    assert done.returncode == 2
    assert "No such command 'runz'" in done.stderr


def test_import_hookloop_alone_loads_nothing_else_and_each_name_still_resolves(env: dict[str, str]) -> None:
    probe = (
        "import json, sys, hookloop; before = sorted(m for m in sys.modules if m.startswith('hookloop'));"
        "from hookloop import Worker, Usage; print(json.dumps([before, Worker.__module__, Usage.__module__]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    before, worker, usage = json.loads(done.stdout)
    assert before == ["hookloop"]
    assert (worker, usage) == ("hookloop.worker", "hookloop.stream")
