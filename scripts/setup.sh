#!/usr/bin/env bash
# One-step set-up: a virtual environment in .venv with torch, triton and kprof-mcp (+ test tools).
# Without an NVIDIA GPU it installs PyTorch's CPU wheel (never the multi-GB CUDA build);
# with one, the default CUDA build. Idempotent: re-running only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_VERSION=${KPROF_TORCH_VERSION:-2.13.0}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip() { .venv/bin/python -m pip "$@"; }
pip install -q --upgrade pip 2>&1 | grep -v 'is ignored' || true
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "setup: NVIDIA GPU found: installing the CUDA build of torch"
    pip install -q torch 2>&1 | grep -v 'is ignored' || true
  else
    echo "setup: no GPU: installing the CPU build of torch ${TORCH_VERSION}"
    pip install -q --timeout 10 --retries 0 "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu \
      2>&1 | grep -v 'is ignored' || true
  fi
fi
.venv/bin/python -c "import torch" || { echo "setup: torch did not install" >&2; exit 1; }
pip install -q -e ".[test]" 2>&1 | grep -v 'is ignored' || true
.venv/bin/python -c "import kprof_mcp.server, torch, triton; print('setup: ok: torch', torch.__version__, '| triton', triton.__version__, '| cuda', torch.cuda.is_available())"
