#!/usr/bin/env bash
# Whole-clip benchmark: what a clip costs when part of it moves.
#
# wobble-run renders Scripts/bench/clip.lua on a 1280x720 photo
# (Examples/cat/chelsea.png resized): 90 frames at 30 fps, four regions of a
# tenth of the picture each, all wobbling, with --format null, against the
# same 90 frames with no region, and against the same clip with whole frames
# (WOBBLE_WHOLE_FRAMES=1: every frame rendered and read back whole, as
# before region-only frames). Runs are interleaved (region, none, whole,
# region, ...); it prints the median wall and CPU (user + sys) seconds of
# each and the ratios (goal: region-only / no region <= 1.5), then the
# in-process per-frame costs and bytes read back per frame
# (wobble-render-bench --clip: the same four regions on a synthetic picture),
# with the shader as it was before its variants (switches tested per
# fragment: the same bytes) and two floors, the same boxes with no region
# read back: the still copied in (glBlitFramebuffer: no shading at all), and
# drawn by the still pass (the same bilinear sample per pixel, no wobble),
# so the report can say how far the wobble is from them.
#
# With BEFORE (another build's wobble-run), its region and no-region clips
# join the interleaved runs (before-region, before-none) and the per moving
# frame figures are printed for both builds side by side.
#
# Usage: Scripts/bench-clip.sh
# Env: RUNS (default 7), BACKEND (gles|cpu, default gles), SCRATCH (build
#      folder, default .build-bench), WOBBLE_RUN (a built binary: no build),
#      RENDER_BENCH (with WOBBLE_RUN: a built wobble-render-bench for the
#      in-process figures, else they are left out), BEFORE (see above).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-7}
backend=${BACKEND:-gles}
scratch=${SCRATCH:-.build-bench}
if [[ -n "${WOBBLE_RUN:-}" ]]; then
  bin=$WOBBLE_RUN
  bench=${RENDER_BENCH:-}
else
  swift build -c release --scratch-path "$scratch" --product wobble-run >&2
  swift build -c release --scratch-path "$scratch" --product wobble-render-bench >&2
  bin="$scratch/release/wobble-run"
  bench="$scratch/release/wobble-render-bench"
fi
command -v convert >/dev/null || Scripts/install-deps.sh --bench
before=${BEFORE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
convert Examples/cat/chelsea.png -resize '1280x720!' "$tmp/photo.png"

# One run: "wall cpu" seconds.
one() { # kind: region | none | whole | before-region | before-none
  local env=() arg=regions run=$bin
  [[ $1 == whole ]] && env=(WOBBLE_WHOLE_FRAMES=1)
  [[ $1 == *none ]] && arg=none
  [[ $1 == before-* ]] && run=$before
  # (The clip with no region warns that nothing moves: not shown.)
  env "${env[@]}" /usr/bin/time -f "%e %U %S" -o "$tmp/t" \
    "$run" Scripts/bench/clip.lua --image "$tmp/photo.png" --backend "$backend" --format null -q -- "$arg" 2>/dev/null
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$tmp/t"
}

one region >/dev/null   # warm the file cache and Mesa's shader cache
kinds=(region none whole)
if [[ -n $before ]]; then
  one before-region >/dev/null
  kinds+=(before-region before-none)
fi
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
  for kind in "${kinds[@]}"; do
    read -r w c < <(one "$kind")
    wall[$kind]+="$w "
    cpu[$kind]+="$c "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
printf "whole clip, 1280x720, 90 frames, --backend %s, --format null, median of %d interleaved runs\n" "$backend" "$runs"
printf "%-14s %8s %8s\n" clip "wall s" "cpu s"
for kind in region whole none ${before:+before-region before-none}; do
  printf "%-14s %8s %8s\n" "$kind" "$(echo "${wall[$kind]}" | median)" "$(echo "${cpu[$kind]}" | median)"
done
rw=$(echo "${wall[region]}" | median); nw=$(echo "${wall[none]}" | median); ww=$(echo "${wall[whole]}" | median)
rc=$(echo "${cpu[region]}" | median); nc=$(echo "${cpu[none]}" | median); wc=$(echo "${cpu[whole]}" | median)
awk -v rw="$rw" -v nw="$nw" -v ww="$ww" -v rc="$rc" -v nc="$nc" -v wc="$wc" 'BEGIN {
  printf "region-only / no region: %.2f wall, %.2f cpu (goal <= 1.5)\n", rw / nw, rc / nc
  printf "whole frames / no region: %.2f wall, %.2f cpu\n", ww / nw, wc / nc
  printf "per moving frame over the still clip: region-only %.1f ms, whole frames %.1f ms (wall)\n", (rw - nw) * 1000 / 90, (ww - nw) * 1000 / 90 }'
if [[ -n $before ]]; then
  brw=$(echo "${wall[before-region]}" | median); bnw=$(echo "${wall[before-none]}" | median)
  brc=$(echo "${cpu[before-region]}" | median); bnc=$(echo "${cpu[before-none]}" | median)
  awk -v rw="$rw" -v nw="$nw" -v rc="$rc" -v nc="$nc" -v brw="$brw" -v bnw="$bnw" -v brc="$brc" -v bnc="$bnc" 'BEGIN {
    printf "per moving frame over the still clip, before -> after: %.1f -> %.1f ms wall, %.1f -> %.1f ms cpu\n",
      (brw - bnw) * 1000 / 90, (rw - nw) * 1000 / 90, (brc - bnc) * 1000 / 90, (rc - nc) * 1000 / 90
    printf "region clip, before -> after: %.2f -> %.2f s wall, %.2f -> %.2f s cpu\n", brw, rw, brc, rc }'
fi
if [[ -n "$bench" && $backend == gles ]]; then "$bench" --clip; fi
