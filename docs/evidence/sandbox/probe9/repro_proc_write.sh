#!/bin/sh
# P9-1 reproduction (repository root, as root; no GPU): behind Nsight Compute a confined process that is
# not root gets write rights beneath the machine's /proc (proc_write), which lets it write the /proc files
# of every process of its user outside the job: the server's, its own supervisor's. Runs the supervisor
# directly (python -m kprof_mcp.sandbox) as uid 65534 with the policy command_policy() makes for an ncu
# prefix (proc_write on), then the same policy without a prefix (control), then `oom`: the job raises its
# supervisor's oom_score_adj to 1000, starts a setsid sleeper and fills a 768 MiB memory cgroup: the OOM
# killer takes the supervisor first and the sleeper outlives the job.
# Prints RESULT ... SUCCEEDED / BLOCKED for each.
here=$(cd "$(dirname "$0")" && pwd)
base=/tmp/kprobe9-procw-$$
mkdir -p $base && chown 65534:65534 $base
run() {  # $1 mode $2 proc_write [$3 a memory cgroup to run in]
  join=""; [ -n "${3:-}" ] && join="echo \$\$ > $3/cgroup.procs; "
  unshare -m sh -c "${join}mkdir -p $base/pyenv && mount --bind /root/.pyenv $base/pyenv && mount -t tmpfs -o mode=755 none /root && mkdir /root/.pyenv && mount --bind $base/pyenv /root/.pyenv && exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$base sh $here/procw_inner.sh $base $here $1 $2"
}
out=$(run files 1 2>&1); echo "$out" | grep -E "CHECK|policy|stand-in after"
echo "$out" | grep -q "oom_score_adj '1000': ALLOWED" && echo "RESULT proc_write (ncu policy, 65534): SUCCEEDED (a same-user process outside the job written)" || echo "RESULT proc_write (ncu policy, 65534): BLOCKED"
out=$(run files 0 2>&1); echo "$out" | grep -E "oom_score_adj|policy"
echo "$out" | grep -q "oom_score_adj '1000': ALLOWED" && echo "RESULT control (no prefix): SUCCEEDED" || echo "RESULT control (no prefix): BLOCKED"
cg=/sys/fs/cgroup/memory/kprobe9-procw-$$
mkdir -p $cg && echo $((768 << 20)) > $cg/memory.limit_in_bytes && echo 0 > $cg/memory.swappiness 2>/dev/null
out=$(run oom 1 $cg 2>&1)
echo "$out" | grep -E "CHECK|supervisor exit|Killed|stand-in after|oomorphan" | head
sleep 2
left=$(ps -eo pid,args | grep kprobe9-oomorphan | grep -v grep)
echo "oom: left after the job: ${left:-nothing}; cgroup oom_kill: $(grep oom_kill $cg/memory.oom_control | tr '\n' ' ')"
[ -n "$left" ] && echo "RESULT oom (supervisor OOM-killed first): SUCCEEDED (a process outlived its job)" || echo "RESULT oom: BLOCKED"
for p in $(echo "$left" | awk '{print $1}'); do kill -9 $p; done
for p in $(cat $cg/cgroup.procs); do kill -9 $p; done; sleep 1; rmdir $cg
rm -rf $base
