"""Read permission rules hold for every reading tool: Grep and Glob leave out what Read deny and ask rules cover
and say how many paths they left out; a path argument the rules cover is refused. Through the tools directly
(with the read filter the Worker would hand them) and through a Worker run. Grep runs on both backends."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from builtin_helpers import CTX, call
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hookloop import Finished, ScriptedClient, Text, ToolResult, ToolUse, Worker
from hookloop.checkpoint import Approve, PendingCall
from hookloop.permissions import PermissionPolicy
from hookloop.permissions._paths import ResolvedPath, compile_path_pattern
from hookloop.tools import Tool, ToolContext
from hookloop.tools.builtin import EditTool, GlobTool, GrepTool, ReadTool, Workspace, WriteTool, builtin_tools
from hookloop.tools.builtin._ripgrep import FD_BATCH, prune_globs

pytestmark = pytest.mark.anyio

BACKENDS = ["python", *(["ripgrep"] if shutil.which("rg") else [])]
DENY = ["Read(./.env)", "Read(./secrets/**)"]
ASK = ["Read(./private.txt)"]


@pytest.fixture
def tree(root: Path) -> Path:
    files = {
        ".env": "SECRET=hunter2\n",
        "secrets/key.txt": "SECRET key material\n",
        "secrets/deeper/more.txt": "SECRET more\n",
        "private.txt": "SECRET asked about\n",
        "src/app.py": "token = os.environ['SECRET']\n",
        "src/readme.md": "nothing to see\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "env_link").symlink_to(root / ".env")
    (root / "secrets_link").symlink_to(root / "secrets")
    return root


def policy_for(root: Path, *, deny: list[str] = DENY, ask: list[str] = ASK) -> PermissionPolicy:
    return PermissionPolicy(deny=deny, ask=ask, workspace=root)


async def run_tool(tool: Tool, policy: PermissionPolicy, arguments: Mapping[str, object]) -> tuple[str, bool]:
    """Call the tool with the read filter the Worker derives for this call."""
    ctx = ToolContext(
        run_id=CTX.run_id,
        session_id=CTX.session_id,
        call_id=CTX.call_id,
        tool_name=tool.meta.name,
        turn=1,
        read_filter=policy.read_filter(tool.meta.name, arguments),
    )
    return await call(tool, arguments, ctx)


async def test_the_filter_covers_deny_and_unapproved_ask_rules_by_resolved_path(tree: Path) -> None:
    policy = policy_for(tree)
    read_filter = policy.read_filter("Grep", {"pattern": "x"})
    assert read_filter is not None
    assert read_filter.denies(str(tree / ".env"))
    assert read_filter.denies(str(tree / ".ENV"))  # deny rules match case-insensitively
    assert read_filter.denies(str(tree / "secrets"))  # the directory itself: a walk prunes it
    assert read_filter.denies(str(tree / "secrets/deeper/more.txt"))
    assert read_filter.denies(str(tree / "private.txt"))  # an ask rule the call was not approved under
    assert not read_filter.denies(str(tree / "src/app.py"))
    assert not read_filter.denies(str(tree / "src/.env.example"))
    # an ask rule that matched the call itself was approved with it: its files are not left out
    approved = policy.read_filter("Grep", {"pattern": "x", "path": "private.txt"})
    assert approved is not None
    assert not approved.denies(str(tree / "private.txt"))
    assert approved.denies(str(tree / ".env"))
    # rules for other tools do not count; no rule at all gives no filter
    assert PermissionPolicy(deny=["Edit(./src/**)", "Bash(cat:*)"], workspace=tree).read_filter("Grep", {}) is None
    assert PermissionPolicy(workspace=tree).read_filter("Read", {"file_path": "x"}) is None
    grep_only = PermissionPolicy(deny=["Grep(./src/**)"], workspace=tree)
    assert grep_only.read_filter("Glob", {"pattern": "*"}) is None
    grep_filter = grep_only.read_filter("Grep", {"pattern": "x"})
    assert grep_filter is not None
    assert grep_filter.denies(str(tree / "src/app.py"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_leaves_out_denied_and_asked_files_and_says_how_many(tree: Path, backend: str, mode: str) -> None:
    grep = GrepTool(Workspace(tree), backend=backend)  # type: ignore[arg-type]
    content, is_error = await run_tool(grep, policy_for(tree), {"pattern": "SECRET", "output_mode": mode})
    assert not is_error, content
    expected = {
        "content": "src/app.py:1:token = os.environ['SECRET']",
        "files_with_matches": "Found 1 file\nsrc/app.py",
        "count": "src/app.py:1\n\nFound 1 total occurrence across 1 file.",
    }[mode]
    # .env, private.txt (an ask rule), and secrets/ as one pruned directory
    assert content == f"{expected}\n\n(3 paths left out by Read permission rules)"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_with_only_the_env_file_denied_reports_one_left_out(tree: Path, backend: str) -> None:
    grep = GrepTool(Workspace(tree), backend=backend)  # type: ignore[arg-type]
    policy = policy_for(tree, deny=["Read(./.env)"], ask=[])
    content, _ = await run_tool(grep, policy, {"pattern": "hunter2|SECRET=", "output_mode": "content"})
    assert content == "No matches found\n\n(1 path left out by Read permission rules)"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_left_out_count_does_not_depend_on_what_denied_files_hold(tree: Path, backend: str) -> None:
    # Otherwise the count would be an oracle: Grep("SECRET=h") → 1 left out, Grep("SECRET=x") → 0.
    grep = GrepTool(Workspace(tree), backend=backend)  # type: ignore[arg-type]
    outputs = set()
    for pattern in ("SECRET=h", "SECRET=x", "hunter2", "no such text anywhere"):
        content, _ = await run_tool(grep, policy_for(tree, deny=["Read(./.env)"], ask=[]), {"pattern": pattern})
        assert "hunter2" not in content
        outputs.add(content)
    assert outputs == {"No files found\n\n(1 path left out by Read permission rules)"}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_filters_and_rule_forms_prune_the_same_way(tree: Path, backend: str) -> None:
    grep = GrepTool(Workspace(tree), backend=backend)  # type: ignore[arg-type]
    for deny in (["Read(./secrets)"], ["Read(secrets/**)"], ["Read(//" + str(tree).lstrip("/") + "/secrets/**)"]):
        content, _ = await run_tool(grep, policy_for(tree, deny=deny, ask=[]), {"pattern": "SECRET"})
        assert content.splitlines()[-1] == "(1 path left out by Read permission rules)", deny
        assert "secrets" not in content.replace("(1 path", "")
    # a trailing slash covers the contents only: secrets/ is walked, key.txt and deeper/ are left out
    content, _ = await run_tool(grep, policy_for(tree, deny=["Read(./secrets/)"], ask=[]), {"pattern": "SECRET"})
    assert content.splitlines()[-1] == "(2 paths left out by Read permission rules)"
    assert "secrets" not in content
    # a glob filter limits what is counted: .env is not a .txt file (secrets/ counts: it is not walked)
    content, _ = await run_tool(grep, policy_for(tree, ask=[]), {"pattern": "SECRET", "glob": "*.txt"})
    assert content == "Found 1 file\nprivate.txt\n\n(1 path left out by Read permission rules)"
    # an unanchored rule matches at any depth
    (tree / "src" / ".env").write_text("SECRET=nested\n")
    content, _ = await run_tool(grep, policy_for(tree, deny=["Read(.env)"], ask=[]), {"pattern": "SECRET="})
    assert content == "No files found\n\n(2 paths left out by Read permission rules)"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_symlinks_to_denied_files_are_never_followed_nor_read(tree: Path, backend: str) -> None:
    grep = GrepTool(Workspace(tree), backend=backend)  # type: ignore[arg-type]
    policy = policy_for(tree)
    content, _ = await run_tool(grep, policy, {"pattern": "hunter2|key material"})
    assert content == "No files found\n\n(3 paths left out by Read permission rules)"
    # named explicitly: resolved, then refused (before telling whether it exists)
    for path in ("env_link", "secrets_link", "secrets_link/key.txt", "secrets/missing.txt"):
        content, is_error = await run_tool(grep, policy, {"pattern": "SECRET", "path": path})
        assert is_error
        assert "Read permission rules do not allow reading it" in content
        assert "hunter2" not in content
        assert "material" not in content


async def test_glob_does_not_list_denied_files_or_walk_denied_directories(tree: Path) -> None:
    glob = GlobTool(Workspace(tree))
    content, is_error = await run_tool(glob, policy_for(tree), {"pattern": "**/*"})
    assert not is_error
    listed = sorted(content.splitlines()[:-1])
    assert listed == [str(tree / "src/app.py"), str(tree / "src/readme.md")]
    assert content.splitlines()[-1] == "(3 paths left out by Read permission rules)"
    content, _ = await run_tool(glob, policy_for(tree), {"pattern": "**/*.txt"})
    assert content == "No files found\n(2 paths left out by Read permission rules)"  # private.txt, secrets/
    content, _ = await run_tool(glob, policy_for(tree), {"pattern": "src/*"})
    assert "left out" not in content  # nothing denied under src
    for arguments in (
        {"pattern": "*", "path": "secrets"},
        {"pattern": "secrets/**"},
        {"pattern": "**", "path": "secrets_link"},
        {"pattern": "*", "path": "secrets/missing"},
    ):
        content, is_error = await run_tool(glob, policy_for(tree), arguments)
        assert is_error, arguments
        assert "Read permission rules do not allow reading it" in content


async def test_read_refuses_denied_paths_also_through_a_symlink_and_reads_approved_ones(tree: Path) -> None:
    read = ReadTool(Workspace(tree))
    policy = policy_for(tree)
    for path in (".env", "env_link", "secrets/key.txt", "secrets_link/key.txt"):
        content, is_error = await run_tool(read, policy, {"file_path": path})
        assert is_error, path
        assert "Read permission rules do not allow reading it" in content
        assert "hunter2" not in content
        assert "material" not in content
    # private.txt is behind an ask rule that this very call matches: it only runs once approved, so it reads
    content, is_error = await run_tool(read, policy, {"file_path": "private.txt"})
    assert (content, is_error) == ("     1\tSECRET asked about", False)


async def test_edit_reads_the_file_so_read_rules_refuse_it_before_it_tells_anything(tree: Path) -> None:
    # "old_string was found 2 times" / "was not found" would answer questions about a file Read may not see.
    edit = EditTool(Workspace(tree))
    for path in (".env", "env_link", "private.txt"):
        arguments = {"file_path": path, "old_string": "SECRET=h", "new_string": "x"}
        content, is_error = await run_tool(edit, policy_for(tree), arguments)
        assert is_error, path
        assert content.endswith("Read permission rules do not allow reading it.")
    assert (tree / ".env").read_text() == "SECRET=hunter2\n"
    assert (tree / "private.txt").read_text() == "SECRET asked about\n"
    content, is_error = await run_tool(
        edit, policy_for(tree), {"file_path": "src/readme.md", "old_string": "nothing", "new_string": "much"}
    )
    assert not is_error, content
    # Write reads nothing, but would tell the old size: not for a file Read may not see
    write = WriteTool(Workspace(tree))
    content, is_error = await run_tool(write, policy_for(tree), {"file_path": ".env", "content": "A=1\n"})
    assert (content, is_error) == (f"Overwrote {tree / '.env'} (4 bytes, 1 line).", False)


# -- through a Worker -----------------------------------------------------------------------------------------


def results(worker: Worker) -> list[tuple[str, str, bool]]:
    return [(r.name, r.content, r.is_error) for r in worker.history if isinstance(r, ToolResult)]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_worker_run_leaves_denied_files_out_of_searches_and_refuses_them_by_name(
    tree: Path, backend: str
) -> None:
    client = ScriptedClient(
        [
            [
                ToolUse("Grep", {"pattern": "SECRET", "output_mode": "content"}),
                ToolUse("Glob", {"pattern": "**/*"}),
                ToolUse("Grep", {"pattern": "SECRET", "path": ".env", "output_mode": "content"}),
                ToolUse("Grep", {"pattern": "SECRET", "path": "env_link", "output_mode": "content"}),
                ToolUse("Glob", {"pattern": "*", "path": "secrets"}),
                ToolUse("Glob", {"pattern": "secrets/**"}),
                ToolUse("Read", {"file_path": ".env"}),
                ToolUse("Read", {"file_path": "secrets_link/key.txt"}),
            ],
            [Text("done")],
        ]
    )
    worker = Worker(
        client,
        tools=builtin_tools(Workspace(tree), grep_backend=backend),  # type: ignore[arg-type]
        permissions=policy_for(tree),
        workspace=tree,
    )
    outcome = await worker.run("find the secret")
    assert isinstance(outcome, Finished)
    got = results(worker)
    assert got[0] == (
        "Grep",
        "src/app.py:1:token = os.environ['SECRET']\n\n(3 paths left out by Read permission rules)",
        False,
    )
    glob_name, glob_content, glob_error = got[1]
    assert (glob_name, glob_error) == ("Glob", False)
    assert sorted(glob_content.splitlines()[:-1]) == [str(tree / "src/app.py"), str(tree / "src/readme.md")]
    assert glob_content.splitlines()[-1] == "(3 paths left out by Read permission rules)"
    denied_by = ['rule "Read(./.env)"', 'rule "Read(./.env)"'] + ['rule "Read(./secrets/**)"'] * 2
    denied_by += ['rule "Read(./.env)"', 'rule "Read(./secrets/**)"']
    for (name, content, is_error), rule in zip(got[2:], denied_by, strict=True):
        assert is_error, (name, content)
        assert content.startswith(f"permission denied ({rule})"), content
    everything = "\n".join(content for _, content, _ in got)
    assert "hunter2" not in everything
    assert "key material" not in everything
    assert "asked about" not in everything


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_approved_ask_reads_what_it_asked_for_and_searches_still_leave_it_out(
    tree: Path, backend: str
) -> None:
    asked: list[str] = []

    async def approve(pending: PendingCall) -> Approve:
        asked.append(f"{pending.tool_name} {dict(pending.arguments)}")
        return Approve()

    client = ScriptedClient(
        [
            [ToolUse("Grep", {"pattern": "SECRET", "path": "private.txt", "output_mode": "content"})],
            [ToolUse("Grep", {"pattern": "asked", "output_mode": "content"})],
            [Text("done")],
        ]
    )
    worker = Worker(
        client,
        tools=builtin_tools(Workspace(tree), grep_backend=backend),  # type: ignore[arg-type]
        permissions=policy_for(tree),
        workspace=tree,
        approvers=[approve],
    )
    assert isinstance(await worker.run("look"), Finished)
    assert asked == ["Grep {'pattern': 'SECRET', 'path': 'private.txt', 'output_mode': 'content'}"]
    assert results(worker) == [
        ("Grep", "private.txt:1:SECRET asked about", False),
        ("Grep", "No matches found\n\n(3 paths left out by Read permission rules)", False),
    ]


if "ripgrep" in BACKENDS:  # like the backend parameters: present where rg is

    def test_ripgrep_skips_denied_directories_whatever_characters_their_names_hold(root: Path) -> None:
        odd = ["a,b", "x!y", "we{i,rd}*?", "sq[1]", "back\\slash", "dash-", ".hidden dir"]
        for name in [*odd, "keep"]:
            (root / name).mkdir()
            (root / name / "f").write_text("hit\n")
        prefix = str(root) + "/"
        options = prune_globs(prefix, {prefix + name for name in odd})
        listed = subprocess.run(
            ["rg", "--files", "--no-config", "--hidden", *options, str(root)],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert listed == f"{root}/keep/f\n"


SEGMENTS = ["a", "b", "A", ".env", "ss", "ß", "*", "?", "**", "[ab]", "*.e?v", "x*", "*ss"]
PARTS = ["a", "b", "B", ".env", ".ENV", "x.env", "ss", "SS", "ß", "xa", "Ass"]


@given(
    anchor=st.sampled_from(["./", "", "/"]),
    segments=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4),
    trailing=st.booleans(),
    parts=st.lists(st.sampled_from(PARTS), min_size=0, max_size=5),
)
@settings(max_examples=400, deadline=None)
def test_the_filter_decides_exactly_as_the_policys_path_matcher(
    anchor: str, segments: list[str], trailing: bool, parts: list[str]
) -> None:
    # ReadRules skips the full match when a necessary substring is missing; that must never change the answer.
    workspace = Path("/w/ws")
    spec = anchor + "/".join(segments) + ("/" if trailing else "")
    assume(spec != "*")  # Read(*) is the whole tool, not a path pattern
    rules = PermissionPolicy(deny=[f"Read({spec})"], workspace=workspace).read_filter("Grep", {})
    assert rules is not None
    path = "/".join([str(workspace), *parts])
    pattern = compile_path_pattern(spec, workspace=workspace, settings_dir=None, home=Path.home())
    assert rules.denies(path) == pattern.matches(ResolvedPath(lexical=path, real=path), loose=True)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_many_matching_files_are_searched_in_batches_and_every_descriptor_is_closed(
    root: Path, backend: str
) -> None:
    for i in range(FD_BATCH + 44):
        (root / f"f{i:03}.txt").write_text(f"needle {i}\n")
    (root / ".env").write_text("needle SECRET\n")
    grep = GrepTool(Workspace(root), backend=backend)  # type: ignore[arg-type]
    policy = policy_for(root)
    before = len(os.listdir("/proc/self/fd"))
    content, is_error = await run_tool(grep, policy, {"pattern": "needle", "output_mode": "count"})
    assert len(os.listdir("/proc/self/fd")) == before
    assert not is_error
    lines = content.splitlines()
    assert len([line for line in lines if line.startswith("f")]) == FD_BATCH + 44
    assert lines[-3:] == [
        f"Found {FD_BATCH + 44} total occurrences across {FD_BATCH + 44} files.",
        "",
        "(1 path left out by Read permission rules)",
    ]
