#!/usr/bin/env bash
# What colour management costs on load: a 12-megapixel JPEG (4000×3000,
# 2.4 MB) untagged, tagged sRGB, tagged Adobe RGB, and as CMYK without and
# with a profile, each loaded by `wobble-run --check` (the whole process:
# decode and convert, no frame). Interleaved runs; medians of wall and CPU
# (user + system) seconds. Only a non-sRGB profile should cost anything.
#
# Usage: Scripts/bench-colour.sh [WIDTHxHEIGHT]      (default 4000x3000)
# Env: RUNS (default 11), WOBBLE_RUN (a built binary: no build),
#      SCRATCH (build folder, default .build-bench).
# Needs python3 with Pillow and numpy (Scripts/install-deps.sh --bench).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-4000x3000}
runs=${RUNS:-11}
source Scripts/bench/common.sh
bin=$(wobble_binary)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A python3 with Pillow and numpy (the first on PATH may be another one).
py=python3
for p in python3 /usr/bin/python3; do
  if "$p" -c 'from PIL import ImageCms; import numpy' 2>/dev/null; then py=$p; break; fi
done
"$py" Scripts/colour-fixtures.py "$tmp" --big "$size"
cases=(untagged srgb adobe-rgb cmyk-untagged cmyk)
for c in "${cases[@]}"; do printf 'image("big-%s.jpg")\n' "$c" > "$tmp/$c.lua"; done
for ((i = 0; i < runs; i++)); do
  for c in "${cases[@]}"; do
    (cd "$tmp" && /usr/bin/time -f "$c %e %U %S" "$bin" "$c.lua" --check 2>&1 >/dev/null | tail -1)
  done
done > "$tmp/times"
"$py" - "$tmp/times" "$size" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    case, wall, user, system = line.split()
    rows.setdefault(case, []).append((float(wall), float(user) + float(system)))
print(f"{sys.argv[2]} JPEG through wobble-run --check, medians of {len(next(iter(rows.values())))} runs:")
base = statistics.median(c for _, c in rows["untagged"])
for case, v in rows.items():
    wall, cpu = statistics.median(w for w, _ in v), statistics.median(c for _, c in v)
    print(f"  {case:14} wall {wall:5.2f} s  cpu {cpu:5.2f} s  (+{cpu - base:4.2f} s cpu over untagged)")
PY
