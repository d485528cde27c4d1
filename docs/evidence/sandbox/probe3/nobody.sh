#!/bin/sh
# Runs in a private mount namespace (unshare -m): /root hidden by a tmpfs, only /root/.pyenv shown
# again (the interpreter the venv links to), then the probe as uid 65534. The host's mounts are untouched.
set -e
mkdir -p /tmp/kp3mnt
mount --make-rprivate /
mount --bind /root/.pyenv /tmp/kp3mnt
mount -t tmpfs -o mode=0755 kp3root /root
mkdir /root/.pyenv
mount --move /tmp/kp3mnt /root/.pyenv
cd /work/main
exec setpriv --reuid 65534 --regid 65534 --clear-groups env HOME=/tmp PATH=/usr/bin:/bin \
  /work/main/.venv/bin/python docs/evidence/sandbox/probe3/run.py --as-nobody --quick --keep "$@"
