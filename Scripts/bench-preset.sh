#!/usr/bin/env bash
# Preset cost benchmark: what `--preset NAME` costs against one plain
# encode of the same frames, side by side in one run.
#
# For each preset, on the gallery's cat (Examples/cat, its first 3 s,
# --frames 0-89, CPU backend unless BACKEND says), interleaved runs of:
#  - the preset (`--preset NAME --json`): wall time, peak resident memory
#    (/usr/bin/time %M: the largest process, ffmpeg included), the quality
#    (or APNG colour bits) chosen and the bytes;
#  - one plain encode of the same clip at the size, frame rate, format and
#    quality the preset chose (`--width W --height H --fps F --quality Q`,
#    APNG: --format apng; the picture without the padding to a square);
#    The plain encode covers the same part of the clip as the preset's file:
#    its frames (`--frames 0-N`, N from the preset's `frames`) at its rate;
#    an APNG's plain encode is lossless (no option posterizes), so where
#    the preset chose fewer colour bits the plain encode costs a little
#    more than one try at that level;
# then the medians and the ratios preset / plain (goals: time <= 2x,
# memory <= 1.5x; CPU time, user + system, besides). With BEFORE (another build's wobble-run), the same for
# it in the same interleaved runs: before/after.
#
# Usage: Scripts/bench-preset.sh
# Env: RUNS (default 3), PRESETS (default "telegram whatsapp discord line
#      slack"), BACKEND (default cpu), SCRATCH (build folder, default
#      .build-bench), WOBBLE_RUN (a built binary: no build), BEFORE.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
presets=${PRESETS:-telegram whatsapp discord line slack}
backend=${BACKEND:-cpu}
source Scripts/bench/common.sh
bin=$(wobble_binary)
before=${BEFORE:+$(realpath "$BEFORE")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scene=Examples/cat/cat.lua
clip=(--frames 0-89 --backend "$backend" -q)
# The plain encode: the preset's frames (a lower rate makes fewer of them).
plainclip() { echo --frames "0-$(($1 - 1))" --backend "$backend" -q; }

median() { sort -g | awk '{a[NR] = $1} END {printf "%.2f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
timed() {   # file, command...: appends "wall peak_MB cpu" (cpu: user + system)
  local out=$1; shift
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/t" "$@" >"$tmp/stdout" 2>/dev/null
  awk '{ printf "%s %.1f %.2f\n", $1, $2 / 1024, $3 + $4 }' "$tmp/t" >> "$out"
}
field() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); p=j['preset']; print(p.get('$2', ''))" "$1"; }

builds=(after)
[[ -n $before ]] && builds+=(before)
declare -A binary=([after]=$bin [before]=$before)
printf '%-8s %-6s %-7s %6s %9s %7s %7s %6s %7s %7s %6s %7s %7s %6s\n' preset build format level bytes "pre s" "plain s" ratio "pre MB" "pl MB" ratio "pre cpu" "pl cpu" ratio
for p in $presets; do
  case $p in telegram) ext=.webm ;; whatsapp) ext=.webp ;; discord|line) ext=.png ;; slack) ext=.gif ;; esac
  for b in "${builds[@]}"; do rm -f "$tmp/$p-$b".*; done
  for ((i = 0; i < runs; i++)); do
    for b in "${builds[@]}"; do
      timed "$tmp/$p-$b.preset" "${binary[$b]}" "$scene" "${clip[@]}" --preset "$p" --json -o "$tmp/$p-$b$ext"
      json=$(tail -n 1 "$tmp/stdout")
      echo "$json" > "$tmp/$p-$b.json"
      format=$(field "$json" format); fps=$(field "$json" fps); pic=$(field "$json" picture)
      w=$(python3 -c "print($pic[0])"); h=$(python3 -c "print($pic[1])")
      level=()
      if [[ $format == apng ]]; then plainext=.apng; else plainext=.$format; level=(--quality "$(field "$json" quality)"); fi
      # shellcheck disable=SC2046
      timed "$tmp/$p-$b.plain" "${binary[$b]}" "$scene" $(plainclip "$(field "$json" frames)") --width "$w" --height "$h" --fps "$fps" "${level[@]}" -o "$tmp/plain-$b$plainext"
    done
  done
  for b in "${builds[@]}"; do
    json=$(cat "$tmp/$p-$b.json")
    format=$(field "$json" format); lv=$(field "$json" quality); [[ -z $lv ]] && lv="$(field "$json" colour_bits)b"
    tp=$(awk '{print $1}' "$tmp/$p-$b.preset" | median); mp=$(awk '{print $2}' "$tmp/$p-$b.preset" | median)
    tq=$(awk '{print $1}' "$tmp/$p-$b.plain" | median); mq=$(awk '{print $2}' "$tmp/$p-$b.plain" | median)
    cp=$(awk '{print $3}' "$tmp/$p-$b.preset" | median); cq=$(awk '{print $3}' "$tmp/$p-$b.plain" | median)
    printf '%-8s %-6s %-7s %6s %9s %7s %7s %6s %7s %7s %6s %7s %7s %6s\n' "$p" "$b" "$format" "$lv" "$(field "$json" bytes)" "$tp" "$tq" \
      "$(awk -v a="$tp" -v b="$tq" 'BEGIN {printf "%.2f", a / b}')" "$mp" "$mq" "$(awk -v a="$mp" -v b="$mq" 'BEGIN {printf "%.2f", a / b}')" \
      "$cp" "$cq" "$(awk -v a="$cp" -v b="$cq" 'BEGIN {printf "%.2f", a / b}')"
  done
done
