// A persistent hook process in Node: hookloop starts it once per run ("type": "process" in
// .hookloop/settings.json) and sends one JSON line per firing: {"id", "event", "input"} where "input" is the
// payload a Claude Code command hook reads on stdin. It answers one line per request, with the same id:
// {"id", "exit_code", "stdout", "stderr"} -- what a command hook would exit with and print.
const readline = require("node:readline");

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line);
  const command = ((request.input || {}).tool_input || {}).command || "";
  const answer = { id: request.id, exit_code: 0 };
  if (/\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r/.test(command)) {
    answer.stdout = {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "the node guard refuses rm -rf",
      },
    };
  }
  process.stderr.write(`guard.js: ${request.event} ${command}\n`); // hookloop logs stderr lines
  process.stdout.write(JSON.stringify(answer) + "\n");
});
