#!/usr/bin/env bash
# Motion-trace benchmark: a scene that replays a ROWS-row accelerometer
# trace (CSV t,ax,ay at 1 kHz, with a shake above 1 g every 2 s) through
# `enableMotion("trace.csv")`, run with --check (the script on the virtual
# clock: parsing, scheduling and applying every sample; no pixels).
# Goal (issue 9): 1,000,000 rows in under 3 s with a release build (it took
# over 120 s while applied samples were removed from the front of an array).
#
# Usage: Scripts/bench-trace.sh [ROWS]      (default 1000000)
# Env: WOBBLE_RUN (a built binary: no build), RUNS (default 3; the median is
#      printed), LIMIT (seconds, default 3: exit 1 when the median is slower).
#
# Measured (2 shared cores, release, 2026-12-01): see docs/DECISIONS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
runs=${RUNS:-3}
limit=${LIMIT:-3}
if [[ -z "${WOBBLE_RUN:-}" ]]; then
  swift build -c release --product wobble-run >&2
  WOBBLE_RUN=$(swift build -c release --show-bin-path)/wobble-run
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$rows" "$dir" <<'PY'
import random, struct, sys, zlib
rows, d = int(sys.argv[1]), sys.argv[2]
random.seed(1)
with open(f"{d}/trace.csv", "w") as f:
    f.write("t,ax,ay\n")
    for k in range(rows):
        kick = k % 2000 == 0
        f.write(f"{k / 1000:.3f},{1.5 if kick else random.uniform(-0.5, 0.5):.4f},{random.uniform(-0.5, 0.5):.4f}\n")
def png(w, h, fn):
    raw = b"".join(b"\x00" + b"\x80\x40\x20\xff" * w for _ in range(h))
    ch = lambda t, b: struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b) & 0xffffffff)
    open(fn, "wb").write(b"\x89PNG\r\n\x1a\n" + ch(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                         + ch(b"IDAT", zlib.compress(raw)) + ch(b"IEND", b""))
png(64, 48, f"{d}/img.png")
PY
seconds=$(python3 -c "print($rows / 1000 + 1)")
cat > "$dir/trace.lua" <<LUA
image("img.png")
addSketch{x = 8, y = 8, w = 48, h = 32}
prepare()
enableMotion("trace.csv")
wait($seconds)
LUA
times=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s.%N)
  "$WOBBLE_RUN" "$dir/trace.lua" --check --fps 10 --max-frames 10000000 -q
  end=$(date +%s.%N)
  times+=("$(python3 -c "print(f'{$end - $start:.3f}')")")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
echo "trace of $rows rows: ${times[*]} s (median $median s; limit $limit s)"
python3 -c "import sys; sys.exit(0 if $median < $limit else 1)"
