#!/usr/bin/env bash
# Pack benchmark: a ROWS-row pack (default 100) of 2 s 320x240 GIFs (one
# region poked, 60 frames each; photos made by Scripts/bench/make-pack.sh),
# made three ways side by side, interleaved over RUNS rounds:
#   loop     a shell loop of single renders (one process per clip)
#   jobs1    wobble-run pack --jobs 1 (one process, one row at a time)
#   jobs2    wobble-run pack --jobs 2 (one process, two rows at once)
# Each from scratch (outputs and journal removed). Reports the median wall
# time and clips per minute of each, and the ratios to the loop; checks that
# every way wrote the same bytes. Then the pack's peak memory
# (/usr/bin/time -v, maximum resident set) for ROWS/4 and ROWS rows at
# --jobs 2: it must not grow with the row count.
#
# Usage: Scripts/bench-pack.sh
# Env: ROWS (default 100), RUNS (default 1), SCRATCH (build folder, default
#      .build-bench), WOBBLE_RUN (a built binary: no build).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-100}
runs=${RUNS:-1}
source Scripts/bench/common.sh
source Scripts/bench/make-pack.sh
bin=$(wobble_binary)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make_pack "$tmp/p" "$rows"
cd "$tmp/p"

now() { date +%s.%N; }
declare -A times
run_way() {
  local way=$1
  rm -rf out .wobble-pack
  mkdir -p out
  local start
  start=$(now)
  case $way in
    loop)
      for ((i = 1; i <= rows; i++)); do
        f=$(printf 'img_%03d' "$i")
        "$bin" pack.lua --image "$f.png" -o "out/$f.gif" -q 2>/dev/null
      done ;;
    jobs1) "$bin" pack pack.csv --jobs 1 -q 2>/dev/null ;;
    jobs2) "$bin" pack pack.csv --jobs 2 -q 2>/dev/null ;;
  esac
  times[$way]+="$(echo "$(now) - $start" | bc) "
  # The same bytes every way.
  (cd out && sha256sum -- *.gif) > "../$way.sums"
}
for ((r = 0; r < runs; r++)); do
  for way in loop jobs1 jobs2; do run_way "$way"; done
done
cmp -s ../loop.sums ../jobs1.sums && cmp -s ../loop.sums ../jobs2.sums || { echo "bench-pack: the outputs differ between the ways" >&2; exit 1; }

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
loop_s=$(echo "${times[loop]}" | median)
echo "bench-pack: $rows clips (2 s, 320x240 GIF, 60 frames), $runs round(s), $(nproc) cores, $bin"
for way in loop jobs1 jobs2; do
  s=$(echo "${times[$way]}" | median)
  printf '  %-6s %7.1f s  %6.1f clips/min  %.2fx the loop\n' "$way" "$s" "$(echo "$rows * 60 / $s" | bc -l)" "$(echo "$loop_s / $s" | bc -l)"
done

# Peak memory against the row count.
quarter=$((rows / 4))
head -n $((quarter + 1)) pack.csv > quarter.csv
for m in quarter.csv pack.csv; do
  rm -rf out .wobble-pack
  mkdir -p out
  /usr/bin/time -v "$bin" pack "$m" --jobs 2 -q 2>"$m.time" >/dev/null || true
  kb=$(grep 'Maximum resident set size' "$m.time" | awk '{print $NF}')
  n=$(( $(wc -l < "$m") - 1 ))
  printf '  peak memory, %3d rows, --jobs 2: %d MiB\n' "$n" "$((kb / 1024))"
done
