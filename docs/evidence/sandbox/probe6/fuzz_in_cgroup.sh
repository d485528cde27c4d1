#!/bin/sh
# probe5/fuzz5.py KIND N in a memory cgroup (v1, 4 GiB) of its own; output to probe6/logs/fuzz-KIND.log.
set -u
cg=/sys/fs/cgroup/memory/kprobe6-fuzz-$$
mkdir -p "$cg" && echo $((4 << 30)) > "$cg/memory.limit_in_bytes"
here=$(dirname "$0")
sh -c "echo \$\$ > $cg/cgroup.procs; exec nice -n 5 /work/main/.venv/bin/python $here/../probe5/fuzz5.py $1 $2" > "$here/logs/fuzz-$1.log" 2>&1
echo "rc=$? max_usage_bytes=$(cat $cg/memory.max_usage_in_bytes) oom=$(grep oom_kill $cg/memory.oom_control)" >> "$here/logs/fuzz-$1.log"
for p in $(cat $cg/cgroup.procs); do kill -9 $p; done; sleep 1; rmdir "$cg"
