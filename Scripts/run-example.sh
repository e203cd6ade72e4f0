#!/usr/bin/env bash
# Renders the bundled example: installs what it needs, builds, renders.
# Usage: Scripts/run-example.sh [SCENE.lua] [wobble-run options...]
# Default: Examples/cat/cat.lua -> cat.gif in the current folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/Scripts/install-deps.sh"
swift build -c release --package-path "$root" >&2
bin="$(swift build -c release --package-path "$root" --show-bin-path)/wobble-run"
if [[ $# -eq 0 ]]; then
  set -- "$root/Examples/cat/cat.lua" -o cat.gif
fi
"$bin" "$@"
