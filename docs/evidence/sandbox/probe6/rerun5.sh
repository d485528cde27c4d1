#!/bin/sh
# The sixth probe's re-run of the fifth probe's variants against the checkout (HEAD + working tree),
# logs under probe6/logs/p5rerun-<who>-<first variant>.log. Usage: sh docs/evidence/sandbox/probe6/rerun5.sh root|nobody
set -u
p5=docs/evidence/sandbox/probe5
here=docs/evidence/sandbox/probe6
who=$1
if [ "$who" = root ]; then
  groups="k_keyring,c_keyring,c_sigkill_self,k_nice_server,c_clone_parent,k_clone_parent k_linger_thread,k_fake_done k_race_rundir k_race_read k_race_by_listing k_respawn k_hooks k_race_compare c_prlimit_server k_prlimit_server_watch"
  user=""
else
  groups="c_self_status,c_sysv_ipc,k_sysv_ipc,c_affinity,c_keyring,c_clone_parent,k_clone_parent k_race_rundir k_prlimit_server_watch"
  user="--user $who"
fi
for g in $groups; do
  log=$here/logs/p5rerun-$who-$(echo $g | cut -d, -f1).log
  echo "### $(date -u +%H:%M:%S) kprof_mcp: checkout $(git rev-parse --short HEAD) + working tree" > $log
  timeout 400 .venv/bin/python $p5/run.py $user $(echo $g | tr , ' ') 2>&1 | grep -v '^|' | grep -v ' INFO mcp' | cut -c1-1500 >> $log
  python3 $p5/keys_cleanup.py >> $log
done
echo DONE $who $(date -u +%H:%M:%S)
