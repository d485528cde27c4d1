#!/usr/bin/env bash
# One-step set-up: a virtual environment in .venv with torch, triton and kprof-mcp (+ test tools).
# Without an NVIDIA GPU it installs PyTorch's CPU wheel (never the multi-GB CUDA build);
# with one, the default CUDA build. One line per step; `--verbose` shows the installers' output
# (otherwise kept in .venv/setup.log and shown only when a step fails).
# Idempotent: a re-run only checks. It installs again only when pyproject.toml, this script, the
# Python or the checkout's path changed since the last good run (a stamp in .venv), or when the
# check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
VERBOSE=0
for arg in "$@"; do
  case "$arg" in
    -v | --verbose) VERBOSE=1 ;;
    -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option: $arg (valid: --verbose)" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
TORCH_VERSION=${KPROF_TORCH_VERSION:-2.13.0}
VPY=.venv/bin/python
LOG=.venv/setup.log
STAMP=.venv/.kprof-setup-stamp

# step "what" command...: one line, the command's output to the log (or the terminal with --verbose)
step() {
  local what=$1 t0=$SECONDS
  shift
  if [ "$VERBOSE" = 1 ]; then
    echo "setup: $what"
    "$@" || { echo "setup: FAILED: $what" >&2; return 1; }
  else
    printf 'setup: %s ... ' "$what"
    echo "== $what: $*" >>"$LOG"
    if "$@" >>"$LOG" 2>&1; then
      echo "done ($((SECONDS - t0)) s)"
    else
      echo "FAILED"
      echo "setup: the last lines of $LOG:" >&2
      tail -n 30 "$LOG" >&2
      return 1
    fi
  fi
}
pip() { "$VPY" -m pip "$@"; }
quiet() { if [ "$VERBOSE" = 1 ]; then "$@"; else "$@" >>"$LOG" 2>&1; fi; }
# uv, when it installs (from PyPI) and works; it does not read pip.conf, so where only pip's own
# mirrors are reachable it fails and pip does the work instead
uv_install() {
  local t0=$SECONDS
  printf 'setup: kprof-mcp and test tools (uv) ... '
  echo "== uv: pip install uv, then uv pip install -e .[test]" >>"$LOG"
  if { [ -x .venv/bin/uv ] || quiet pip install -q uv; } && quiet .venv/bin/uv pip install --python "$VPY" -e ".[test]"; then
    echo "done ($((SECONDS - t0)) s)"
  else
    echo "uv could not (see $LOG): pip instead"
    return 1
  fi
}
# the check, and the last line: what is installed
report() { "$VPY" -W ignore -c "import kprof_mcp.server, torch, triton; print('setup: ok: torch', torch.__version__, '| triton', triton.__version__, '| cuda', torch.cuda.is_available())" 2>/dev/null; }
stamp() {
  {
    cat pyproject.toml scripts/setup.sh
    pwd
    "$VPY" -c 'import sys; print(sys.version)'
  } | sha256sum | cut -d' ' -f1
}

if [ ! -x "$VPY" ]; then
  t0=$SECONDS
  "$PY" -m venv .venv
  : >"$LOG"
  echo "setup: virtual environment .venv ($("$VPY" -c 'import platform; print("Python", platform.python_version())')) ... done ($((SECONDS - t0)) s)"
fi
: >>"$LOG"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(stamp)" ] && ok=$(report); then
  echo "setup: .venv is up to date (nothing to install; delete $STAMP to force a reinstall)"
else
  rm -f "$STAMP"
  # numpy first: torch warns "Failed to initialize NumPy" when it is imported without it
  if ! "$VPY" -c "import numpy" >/dev/null 2>&1; then
    step "numpy" pip install -q "numpy>=1.24"
  fi
  if ! "$VPY" -c "import torch" >/dev/null 2>&1; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
      step "torch (NVIDIA GPU found: the CUDA build)" pip install -q torch
    else
      # the CPU index, without retries: where it is unreachable, pip's own find-links/indexes
      # (pip.conf) can still offer the same +cpu wheel; a bare `torch` would pull the CUDA build
      step "torch ${TORCH_VERSION} (no GPU: the CPU build)" pip install -q --timeout 10 --retries 0 \
        "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu
    fi
  fi
  "$VPY" -W ignore -c "import torch" >/dev/null 2>&1 || { echo "setup: torch did not install (see $LOG)" >&2; exit 1; }
  # kprof-mcp and its dependencies: with uv when it can be had (several times faster than pip),
  # else with pip. torch is installed already and satisfies the requirement, so neither replaces it.
  if [ "${KPROF_SETUP_UV:-1}" = 1 ] && uv_install; then
    :
  else
    step "kprof-mcp and test tools (pip)" pip install -q -e ".[test]"
  fi
  ok=$(report) || { echo "setup: kprof-mcp, torch or triton does not import (see $LOG)" >&2; exit 1; }
  stamp >"$STAMP"
fi
echo "$ok"
