#!/usr/bin/env bash
# Memory benchmark: peak resident memory of `wobble-run` rendering a short
# and a long clip of the same scene (Scripts/bench/memory.lua) straight to
# GIF and to PNG frames. Frames stream to disk, so the long clip should peak
# no higher than the short one, give or take a few MB.
# Usage: Scripts/bench-memory.sh [SHORT_SECONDS [LONG_SECONDS]]   (default 5 and 60)
# Env: BACKEND (gles|cpu, default gles), SCRATCH (build folder, default .build-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
short=${1:-5}
long=${2:-60}
backend=${BACKEND:-gles}
scratch=${SCRATCH:-.build-bench}
Scripts/install-deps.sh --bench   # identify counts the GIF's frames
swift build -c release --product wobble-run --scratch-path "$scratch" >&2
bin="$scratch/release/wobble-run"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

peak() { # seconds format -> "peak_kB wall_s frames"
  local f="$out/stats"
  /usr/bin/time -f "%M %e" -o "$f" "$bin" Scripts/bench/memory.lua -q --backend "$backend" \
    --width 640 --height 480 -o "$2" -- "$1"
  echo "$(cat "$f")"
}

printf "%-6s %8s %8s %12s %8s\n" output clip frames "peak RSS" wall
for fmt in gif png; do
  for s in "$short" "$long"; do
    target="$out/clip_$s.gif"
    [[ $fmt == png ]] && target="$out/frames_$s/"
    read -r kb wall < <(peak "$s" "$target")
    n=$( [[ $fmt == png ]] && ls "$target" | wc -l || identify -format "%n\n" "$target" | awk "NR == 1")
    printf "%-6s %7ss %8s %9.1f MB %7ss\n" "$fmt" "$s" "$n" "$(awk "BEGIN{print $kb/1024}")" "$wall"
    rm -rf "$target"
  done
done
