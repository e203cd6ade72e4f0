#!/usr/bin/env bash
# Installs what the browser tests drive: Playwright for Python in a virtual
# environment under .build/ (pointed at Debian's chromium, never
# `playwright install`: no browser download), and Pillow there (the APNG
# frames are checked in Pillow, ffmpeg and chromium). Idempotent: does
# nothing when the environment already imports both. Prints the
# environment's python. Chromium itself comes from Scripts/install-deps.sh --bench.
# Usage: Scripts/install-browser-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/browser-tests/venv
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import playwright, PIL" 2>/dev/null; then
  if [[ ! -x "$venv/bin/python" ]]; then
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright>=1.40,<2" "pillow>=10" >&2
fi
echo "$PWD/$venv/bin/python"
