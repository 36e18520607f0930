#!/usr/bin/env bash
# The Python package's tests (npm run test:python): a virtualenv in lib/python/.venv with the
# package and its test extras (reinstalled only when pyproject.toml changed), ruff (lint and
# format check) and mypy --strict over the package, then pytest against a real server (needs `npm run build`, which npm test runs first).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
# 3.11: the test extra installs dendrux, which needs it (the package itself runs on 3.10)
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "test:python needs Python 3.11 or newer as '$PYTHON' (set PYTHON=… to choose another)." >&2
  exit 1
fi

stamp=.venv/.installed-from
wanted="$("$PYTHON" --version) $(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "Installing the Python package and its test dependencies into lib/python/.venv…"
  rm -rf .venv
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
  echo "$wanted" >"$stamp"
fi

.venv/bin/ruff check src tests
.venv/bin/ruff format --check src tests
.venv/bin/mypy
.venv/bin/pytest -q "$@"
