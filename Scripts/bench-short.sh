#!/usr/bin/env bash
# Short-clip benchmark: the fixed cost of a GIF, whatever the clip's length.
#
#  1. One 480x360 frame (the latte photo scaled, --frames 0-0) written as a
#     GIF against the same frame written as a PNG file, whole process (exec
#     to exit), GLES and CPU backends, interleaved runs, medians of wall and
#     CPU (user + system) time, and their ratios; the goals are GIF <=
#     1.5x PNG (GLES, wall) and, issue 45's, <= 1.3x (CPU backend, the
#     default without a GPU, CPU time: the stricter of the two measures).
#     Also the GIF's bytes and PSNR against the PNG.
#  2. A one-second clip (451x300 cat photo, 30 frames, two regions moving)
#     as a GIF: wall and CPU time, and the palette's CPU and wall time as
#     wobble-run -v reports them (histogram, quantiser, refinement, the
#     first frame's dithered remap): its share of the run's CPU.
#
# Usage: Scripts/bench-short.sh
# Env: RUNS (default 11), SCRATCH (build folder, default .build-bench),
#      WOBBLE_RUN (a built binary: no build), BEFORE (another build's
#      wobble-run, measured in the same interleaved runs: before/after).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-11}
source Scripts/bench/common.sh
bin=$(wobble_binary)
before=${BEFORE:-}
if ! python3 -c 'import numpy' 2>/dev/null; then python3 -m pip install --quiet numpy; fi
psnr="$PWD/Scripts/psnr.py"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp Examples/latte/coffee.png "$tmp/coffee.png"
cp Examples/cat/chelsea.png "$tmp/chelsea.png"
cat > "$tmp/one.lua" <<'LUA'
image("coffee.png")
fps(30)
addSketch{ x = 205, y = 95, w = 167, h = 98 }
prepare()
impulse(1, 1, 0.3)
wait(1)
LUA
cat > "$tmp/second.lua" <<'LUA'
image("chelsea.png")
fps(30)
addSketch{ x = 150, y = 60, w = 160, h = 130 }
addSketch{ x = 100, y = 190, w = 240, h = 100 }
prepare()
impulse(1, 1, 0.3) impulse(2, -0.4, 1)
wait(1)
LUA

timed() {   # $1: file to append "wall cpu" to; the rest: the command
  # (the child's own rusage from wait4: CPU time to the microsecond, where
  # /usr/bin/time prints 10 ms steps)
  local out=$1; shift
  python3 -c '
import os, sys, time
t = time.monotonic()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ, file_actions=[
    (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
    (os.POSIX_SPAWN_OPEN, 2, sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)])
_, status, ru = os.wait4(pid, 0)
print(f"{time.monotonic() - t:.4f} {ru.ru_utime + ru.ru_stime:.4f}")
sys.exit(os.waitstatus_to_exitcode(status))' "$tmp/stderr" "$@" >> "$out"
}
median() { sort -g | awk '{a[NR] = $1} END {printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }

one=(one.lua --width 480 --height 360 --frames 0-0 -q)
declare -A cmd
builds=(after)
[[ -n $before ]] && builds+=(before)
for b in "${builds[@]}"; do
  exe=$bin; [[ $b == before ]] && exe=$before
  cmd[$b-gles-gif]="$exe ${one[*]} -o $b-gles.gif"
  cmd[$b-gles-png]="$exe ${one[*]} -o $b-gles.png"
  cmd[$b-cpu-gif]="$exe ${one[*]} --backend cpu -o $b-cpu.gif"
  cmd[$b-cpu-png]="$exe ${one[*]} --backend cpu -o $b-cpu.png"
  cmd[$b-second]="$exe second.lua -q -v --loop -1 -o $b-second.gif"
done
rows=()
for b in "${builds[@]}"; do rows+=($b-gles-gif $b-gles-png $b-cpu-gif $b-cpu-png $b-second); done
cd "$tmp"
for r in "${rows[@]}"; do ${cmd[$r]} >/dev/null 2>&1 || { echo "bench-short: '${cmd[$r]}' failed" >&2; exit 1; }; done   # warm: caches
: > "$tmp/palette.log"
for ((i = 0; i < runs; i++)); do
  for r in "${rows[@]}"; do
    : > "$tmp/stderr"
    timed "$tmp/$r.times" ${cmd[$r]}
    # "... in N ms of CPU, W ms of wall time" (older builds: no wall time).
    [[ $r == *-second ]] && sed -n "s/^wobble-run: GIF palette: .* in \([0-9]*\) ms of CPU\(, \([0-9]*\) ms of wall time\)\{0,1\}.*/$r \1 \3/p" "$tmp/stderr" >> "$tmp/palette.log"
  done
done

echo "short clips, median of $runs interleaved runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for b in "${builds[@]}"; do
  echo "$b:"
  for r in gles-gif gles-png cpu-gif cpu-png; do
    printf '  one 480x360 frame, %-9s wall %s s   CPU %s s\n' "$r" "$(col "$b-$r.times" 1)" "$(col "$b-$r.times" 2)"
  done
  g=$(awk -v a="$(col "$b-gles-gif.times" 1)" -v b="$(col "$b-gles-png.times" 1)" 'BEGIN { printf "%.2f", a / b }')
  c=$(awk -v a="$(col "$b-cpu-gif.times" 1)" -v b="$(col "$b-cpu-png.times" 1)" 'BEGIN { printf "%.2f", a / b }')
  gc=$(awk -v a="$(col "$b-gles-gif.times" 2)" -v b="$(col "$b-gles-png.times" 2)" 'BEGIN { printf "%.2f", a / b }')
  cc=$(awk -v a="$(col "$b-cpu-gif.times" 2)" -v b="$(col "$b-cpu-png.times" 2)" 'BEGIN { printf "%.2f", a / b }')
  mkdir -p "ref-$b" && cp "$b-gles.png" "ref-$b/frame_00000.png"
  echo "  GIF / PNG (CPU time): GLES ${gc}x, CPU backend ${cc}x"
  echo "  GIF / PNG (wall): GLES ${g}x, CPU backend ${c}x; GIF $(stat -c %s "$b-gles.gif") bytes at $(python3 "$psnr" "$b-gles.gif" "ref-$b") dB (PNG $(stat -c %s "$b-gles.png") bytes)"
  pal=$(awk -v r="$b-second" '$1 == r {print $2}' palette.log | median)
  palwall=n/a
  grep -q "^$b-second [0-9]* [0-9]" palette.log && palwall=$(awk -v r="$b-second" '$1 == r && $3 != "" {print $3}' palette.log | median)
  printf '  one-second 451x300 clip (30 frames) as GIF: wall %s s, CPU %s s; palette %s ms of CPU, %s ms of wall time (%s of the CPU); %s bytes\n' \
    "$(col "$b-second.times" 1)" "$(col "$b-second.times" 2)" "${pal:-n/a}" "$palwall" \
    "$(awk -v p="${pal:-0}" -v c="$(col "$b-second.times" 2)" 'BEGIN { printf "%.0f%%", p / 10 / c }')" "$(stat -c %s "$b-second.gif")"
  if [[ $b == after ]]; then
    awk -v r="$g" 'BEGIN { exit !(r <= 1.5) }' && echo "PASS one-frame GIF <= 1.5x PNG (GLES)" || { echo "FAIL one-frame GIF <= 1.5x PNG (GLES)"; status=1; }
    awk -v r="$cc" 'BEGIN { exit !(r <= 1.3) }' && echo "PASS one-frame GIF <= 1.3x PNG (CPU backend, CPU time)" || { echo "FAIL one-frame GIF <= 1.3x PNG (CPU backend, CPU time)"; status=1; }
  fi
done
exit $status
