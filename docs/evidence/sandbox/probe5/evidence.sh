#!/bin/sh
# The logs of probe-2026-11-26-fifth.md: every variant, in separate servers where a variant leaves a thread
# behind (it would act on the next variants' jobs). SET names the logs; KPROBE5_SRC (optional) a commit's
# kprof_mcp exported by `git archive COMMIT kprof_mcp kernels kprof | tar -x -C DIR`.
# Usage (repository root): SET=before KPROBE5_SRC=/tmp/kprobe5-src-bf78148 sh docs/evidence/sandbox/probe5/evidence.sh root|nobody
set -u
here=docs/evidence/sandbox/probe5
who=$1
if [ "$who" = root ]; then
  groups="k_keyring,c_keyring,c_sigkill_self,k_nice_server,c_clone_parent,k_clone_parent k_linger_thread,k_fake_done k_race_rundir k_race_read k_race_by_listing k_respawn c_prlimit_server k_prlimit_server_watch"
  user=""
else
  groups="c_self_status,c_sysv_ipc,k_sysv_ipc,c_affinity,c_keyring,c_clone_parent,k_clone_parent k_race_rundir k_prlimit_server_watch"
  user="--user $who"
fi
for g in $groups; do
  log=$here/logs/$SET-$who-$(echo $g | cut -d, -f1).log
  echo "### $(date -u +%H:%M:%S) kprof_mcp: ${KPROBE5_SRC:-checkout $(git rev-parse --short HEAD) + working tree}" > $log
  timeout 400 .venv/bin/python $here/run.py $user $(echo $g | tr , ' ') 2>&1 | grep -v '^|' | grep -v ' INFO mcp' | cut -c1-1500 >> $log
  python3 $here/keys_cleanup.py >> $log
done
