#!/usr/bin/env bash
# Installs what the browser studio's tests drive: Playwright for Python in a
# virtual environment under .build/ (pointed at Debian's chromium, never
# `playwright install`: no browser download). Idempotent: does nothing when
# the environment already imports playwright. Prints the environment's
# python. Chromium itself comes from Scripts/install-deps.sh --bench.
# Usage: Scripts/install-browser-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/browser-tests/venv
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright>=1.40,<2" >&2
fi
echo "$PWD/$venv/bin/python"
