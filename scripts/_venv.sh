# Sourced by scripts/demo and scripts/test: make sure .venv exists with the package installed.
# Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HERMES_STORE_VENV:-$ROOT/.venv}"  # scripts/test --all-pythons sets one per version
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.hermes_store_installed"
if [ ! -f "$STAMP" ] || [ "$ROOT/pyproject.toml" -nt "$STAMP" ] || ! "$VENV/bin/python" -c "import hermes_store" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[test,bench]"
  touch "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
