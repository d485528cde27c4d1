#!/bin/sh
# P10-2 reproduction (repository root, as root; no GPU): a job of a server run as uid 65534 (no IPC
# namespace, no memory cgroup: another user than root) leaves 1 GiB in a SysV shared memory segment
# (shmget without IPC_RMID, touched, not removed) that outlives the job: a command and a kernel package.
# SUCCEEDED: the segment is still there after the job ended (the script removes it). As root the job's
# IPC namespace takes its segments with it (BLOCKED); run with no argument for 65534, `root` for root.
user=${1:-nobody}
arg="--user nobody"; [ "$user" = root ] && arg=""
.venv/bin/python docs/evidence/sandbox/probe10/run.py $arg c_shmleak k_shmleak 2>&1 | grep -E "^RESULT|segments of"
