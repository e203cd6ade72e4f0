#!/usr/bin/env bash
# Start-up benchmark: what a run costs before its first frame. A one-frame
# still (600x400 photo, one region, --frames 0-0, --format null: no encoding)
# on the GLES backend against the same on the CPU backend, whole process
# (exec to exit), interleaved runs, medians of wall and CPU (user + system)
# time; the goal is GLES <= 2x CPU. Nothing moves in frame 0 (the kick starts
# there), and the GLES backend starts EGL, Mesa and llvmpipe's LLVM only for
# a frame that moves: frame 3 of the same scene (rows "moving") shows what
# that start costs, the floor of any run with a moving frame.
#
# Mesa keeps compiled shaders in its on-disk cache (~/.cache/mesa_shader_cache
# or $XDG_CACHE_HOME, MESA_SHADER_CACHE_DIR): one untimed run fills it, and
# one more row shows a moving frame without it (MESA_SHADER_CACHE_DISABLE=true: a
# first run, or a read-only home).
#
# Usage: Scripts/bench-startup.sh
# Env: RUNS (default 15), SCRATCH (build folder, default .build-bench),
#      WOBBLE_RUN (a built binary: no build), BEFORE (another build's
#      wobble-run, measured in the same interleaved runs: before/after).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-15}
source Scripts/bench/common.sh
bin=$(wobble_binary)
before=${BEFORE:-}
[[ -z $before ]] || before=$(realpath "$before")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp Examples/latte/coffee.png "$tmp/coffee.png"
cat > "$tmp/still.lua" <<'LUA'
image("coffee.png")
addSketch{ x = 205, y = 95, w = 167, h = 98 }
prepare()
impulse(1, 1, 0.3)
wait(1)
LUA

# One timed run: appends "wall cpu" (seconds) to the file $1; the rest is
# the command. Wall time from bash's microsecond clock (GNU time's is in
# hundredths), CPU time (user + system) from GNU time.
timed() {
  local out=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f '%U %S' -o "$tmp/t" "$@" >/dev/null 2>&1
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.3f\n", b - a, $1 + $2 }' "$tmp/t" >> "$out"
}
median() { sort -g | awk '{a[NR] = $1} END {printf "%.4f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }

declare -A cmd
cmd[gles]="$bin still.lua --frames 0-0 -q --format null"
cmd[cpu]="$bin still.lua --frames 0-0 -q --format null --backend cpu"
cmd[gles-moving]="$bin still.lua --frames 3-3 -q --format null"
cmd[cpu-moving]="$bin still.lua --frames 3-3 -q --format null --backend cpu"
cmd[gles-nocache]="env MESA_SHADER_CACHE_DISABLE=true $bin still.lua --frames 3-3 -q --format null"
rows=(gles cpu gles-moving cpu-moving gles-nocache)
if [[ -n $before ]]; then
  cmd[gles-before]="$before still.lua --frames 0-0 -q --format null"
  cmd[cpu-before]="$before still.lua --frames 0-0 -q --format null --backend cpu"
  cmd[moving-before]="$before still.lua --frames 3-3 -q --format null"
  rows+=(gles-before cpu-before moving-before)
fi
cd "$tmp"
for r in "${rows[@]}"; do ${cmd[$r]} >/dev/null 2>&1 || { echo "bench-startup: '${cmd[$r]}' failed" >&2; exit 1; }; done   # fills the shader cache
for ((i = 0; i < runs; i++)); do
  for r in "${rows[@]}"; do timed "$tmp/$r.times" ${cmd[$r]}; done
done
echo "one-frame still, --format null, 600x400, median of $runs interleaved runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in "${rows[@]}"; do
  printf '  %-15s wall %s s   CPU %s s\n' "$r" "$(col "$tmp/$r.times" 1)" "$(col "$tmp/$r.times" 2)"
done
ratio() { awk -v a="$(col "$tmp/$1.times" 1)" -v b="$(col "$tmp/$2.times" 1)" 'BEGIN { printf "%.2f", a / b }'; }
echo "  GLES / CPU backend (wall): $(ratio gles cpu)x$([[ -n $before ]] && echo "   before: $(ratio gles-before cpu-before)x")"
echo "  a frame that moves, GLES / CPU backend (wall): $(ratio gles-moving cpu-moving)x$([[ -n $before ]] && echo "   before: $(ratio moving-before cpu-moving)x")"
awk -v r="$(ratio gles cpu)" 'BEGIN { exit !(r <= 2) }' && echo "PASS GLES <= 2x CPU" || { echo "FAIL GLES <= 2x CPU"; exit 1; }
