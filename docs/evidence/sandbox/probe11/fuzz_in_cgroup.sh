#!/bin/sh
# probe5/fuzz5.py KIND N in a memory cgroup (v1, 4 GiB) of its own; output (INFO lines dropped, lines cut to 400 characters) to probe11/logs/fuzz-KIND.txt.
set -u
cg=/sys/fs/cgroup/memory/kprobe11-fuzz-$$
mkdir -p "$cg" && echo $((4 << 30)) > "$cg/memory.limit_in_bytes"
here=$(dirname "$0")
sh -c "echo \$\$ > $cg/cgroup.procs; exec nice -n 5 /work/main/.venv/bin/python $here/../probe5/fuzz5.py $1 $2" 2>&1 | grep -v " INFO " | cut -c1-400 > "$here/logs/fuzz-$1.txt"
echo "rc=$? max_usage_bytes=$(cat $cg/memory.max_usage_in_bytes) oom=$(grep oom_kill $cg/memory.oom_control)" >> "$here/logs/fuzz-$1.txt"
for p in $(cat $cg/cgroup.procs); do kill -9 $p; done; sleep 1; rmdir "$cg"/kprof-jobs/* "$cg"/kprof-jobs 2>/dev/null; rmdir "$cg"
