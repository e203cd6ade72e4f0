#!/usr/bin/env bash
# The cost of a moving pixel: wobble-run renders Scripts/bench/moving.lua on a
# 1280x720 photo (Examples/cat/chelsea.png resized), four 300x220 regions
# wobbling for 90 frames at 30 fps, --format null, against the same 90 frames
# with no region, per backend: the default (auto), gles and cpu, side by side
# in interleaved runs. Prints the median wall and CPU seconds of each and the
# ns per moving pixel above the still clip:
#   (moving − still) / (4 · 300 · 220 · 90)   (goal: <= 4 ns, default backend)
# With BEFORE (another build's wobble-run, e.g. main's), its clips on its
# default backend join the interleaved runs, and the ratios of the default
# backend's ns per moving pixel to BEFORE's are printed. Three more kinds run the CPU
# backend with another row kernel (WOBBLE_CPU): "swift" the Swift reference
# kernel (the kernel before the C one), "baseline" the C kernel's baseline
# x86-64 build (what a CPU without AVX2 runs), "avx2" its AVX2 build (what a
# CPU without AVX-512 runs). The kind "distinct" is the default backend on
# the same clip with the regions a third of a pixel off the whole-pixel grid
# (moving.lua's "distinct"): four regions of one shape share one geometry
# (computed once), four distinct ones compute four.
# Usage: Scripts/bench-moving.sh
# Env: RUNS (default 5), SCRATCH (build folder, default .build-bench),
#      WOBBLE_RUN (a built binary: no build), BEFORE (see above),
#      BACKENDS (default "auto gles cpu swift baseline avx2 distinct").
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
scratch=${SCRATCH:-.build-bench}
if [[ -n "${WOBBLE_RUN:-}" ]]; then
  bin=$WOBBLE_RUN
else
  swift build -c release --scratch-path "$scratch" --product wobble-run >&2
  bin="$scratch/release/wobble-run"
fi
command -v convert >/dev/null || Scripts/install-deps.sh --bench
before=${BEFORE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
convert Examples/cat/chelsea.png -resize '1280x720!' "$tmp/photo.png"

# One run of kind "<backend>-<moving|still>" or "before-<moving|still>": "wall cpu".
one() {
  local run=$bin backend=${1%-*} arg=regions backendArgs=() cpu=
  [[ $backend == distinct ]] && { backend=auto; arg=distinct; }
  [[ $1 == *-still ]] && arg=none
  if [[ $backend == before ]]; then run=$before
  elif [[ $backend == swift || $backend == baseline || $backend == avx2 ]]; then backendArgs=(--backend cpu); cpu=$backend
  elif [[ $backend != auto ]]; then backendArgs=(--backend "$backend"); fi
  # bash's time: wall, user and system seconds to the millisecond
  # (/usr/bin/time's 10 ms steps are 0.4 ns per moving pixel here).
  local TIMEFORMAT='%3R %3U %3S'
  { time WOBBLE_CPU=$cpu "$run" Scripts/bench/moving.lua --image "$tmp/photo.png" "${backendArgs[@]}" --format null -q \
      -- "$arg" 2>/dev/null; } 2> "$tmp/t"
  awk '{printf "%s %.3f\n", $1, $2 + $3}' "$tmp/t"
}

backends=(${BACKENDS:-auto gles cpu swift baseline avx2 distinct})
[[ -n $before ]] && backends+=(before)
kinds=()
for b in "${backends[@]}"; do kinds+=("$b-moving" "$b-still"); done
for k in "${kinds[@]}"; do one "$k" >/dev/null; done   # warm caches
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
  for k in "${kinds[@]}"; do
    read -r w c < <(one "$k")
    wall[$k]+="$w "
    cpu[$k]+="$c "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
auto=$("$bin" Scripts/bench/moving.lua --image "$tmp/photo.png" --format null -q --json 2>/dev/null | sed -n 's/.*"backend":"\([a-z]*\)".*/\1/p')
printf "4 moving 300x220 regions, 1280x720, 90 frames, --format null, median of %d interleaved runs (auto chose %s)\n" "$runs" "${auto:-?}"
printf "%-8s %10s %10s %10s %10s %14s %14s\n" backend "moving s" "still s" "moving cpu" "still cpu" "ns/px wall" "ns/px cpu"
for b in "${backends[@]}"; do
  mw=$(echo "${wall[$b-moving]}" | median); sw=$(echo "${wall[$b-still]}" | median)
  mc=$(echo "${cpu[$b-moving]}" | median); sc=$(echo "${cpu[$b-still]}" | median)
  awk -v b="$b" -v mw="$mw" -v sw="$sw" -v mc="$mc" -v sc="$sc" 'BEGIN {
    n = 4 * 300 * 220 * 90
    printf "%-8s %10.3f %10.3f %10.3f %10.3f %14.2f %14.2f\n", b, mw, sw, mc, sc, (mw - sw) * 1e9 / n, (mc - sc) * 1e9 / n }'
done
if [[ -n $before && " ${backends[*]} " == *" auto "* ]]; then
  ns() { awk -v m="$1" -v s="$2" 'BEGIN { printf "%.4f", (m - s) * 1e9 / (4 * 300 * 220 * 90) }'; }
  aw=$(ns "$(echo "${wall[auto-moving]:-}" | median)" "$(echo "${wall[auto-still]:-}" | median)")
  ac=$(ns "$(echo "${cpu[auto-moving]:-}" | median)" "$(echo "${cpu[auto-still]:-}" | median)")
  bw=$(ns "$(echo "${wall[before-moving]}" | median)" "$(echo "${wall[before-still]}" | median)")
  bc=$(ns "$(echo "${cpu[before-moving]}" | median)" "$(echo "${cpu[before-still]}" | median)")
  awk -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" 'BEGIN {
    printf "default backend / BEFORE, ns per moving pixel: wall %.2f, cpu %.2f\n", aw / bw, ac / bc }'
fi
