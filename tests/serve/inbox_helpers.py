"""What the inbox tests share: paused runs made by the real CLI, and a real `hookloop serve` process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import hookloop

SOURCE_ROOT = str(Path(hookloop.__file__).resolve().parents[1])
HOOKLOOP = [sys.executable, "-c", "from hookloop.cli import main; main()"]
XSS = "<img src=x onerror=\"window.__xss='img'\"><script>window.__xss='script'</script>"


@dataclass
class Project:
    root: Path
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return Path(self.env["HOOKLOOP_HOME"])

    @property
    def checkpoints(self) -> Path:
        return self.home / "checkpoints"

    def pause(self, *commands: str | tuple[str, ...], answer: str = "All done.") -> str:
        """`hookloop run` whose scripted model calls Bash with each command in turn (one a turn; a tuple: several
        calls in one turn), then answers; it pauses at the first ask. Returns the run id."""
        turns = [
            {
                "blocks": [
                    {"text": f"Step {i}."},
                    *({"tool": "Bash", "arguments": {"command": one}} for one in (c if isinstance(c, tuple) else (c,))),
                ]
            }
            for i, c in enumerate(commands)
        ]
        turns.append({"blocks": [{"text": answer}]})
        model = self.root / f"model-{len(list(self.root.glob('model-*')))}.json"
        model.write_text(json.dumps({"turns": turns}))
        before = set(self.checkpoints.glob("*.checkpoint.json")) if self.checkpoints.exists() else set()
        out = self.cli("run", "go", "--model", f"scripted:{model}", "--cwd", str(self.root))
        assert out.returncode == 3, out.stderr
        (path,) = set(self.checkpoints.glob("*.checkpoint.json")) - before
        return path.name.removesuffix(".checkpoint.json")

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*HOOKLOOP, *args], capture_output=True, text=True, env=self.env, cwd=self.root, input="", timeout=60
        )


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    """The address printed at start, with the token."""

    @property
    def base(self) -> str:
        return self.url.split("/runs?")[0]
