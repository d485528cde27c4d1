#!/bin/sh
# P9-2 reproduction (repository root, as root): a command spreads ~8.5 GB over 120 processes each smaller
# than the server, inside the harness's 4 GiB memory cgroup around the server: the OOM killer takes the
# server first (every client dropped). Prints SUCCEEDED (the server was OOM-killed) or BLOCKED.
out=$(.venv/bin/python docs/evidence/sandbox/probe9/run.py "$@" c_oomspread 2>&1)
echo "$out" | grep -E "^RESULT|variant raised|dropped"
if echo "$out" | grep -q "variant raised MCPError Connection closed" || echo "$out" | grep -q "alive 3 s later: False"; then
  echo "RESULT P9-2: SUCCEEDED (the server died: $(dmesg 2>/dev/null | grep 'Killed process.*kprof-mcp' | tail -1 | cut -c1-90))"
else
  echo "RESULT P9-2: BLOCKED (the server survived)"
fi
