#!/usr/bin/env bash
# Telegram's two-pass VP9 file against the quality search's, side by side
# in one run (a measurement, not a test).
#
# For each scene (default: the gallery's cat, sway and whiskers, their
# first 3 s at Telegram's size, --frames 0-89), it
#  1. runs `--preset telegram --json` with WOBBLE_RUN (the two-pass file:
#     the bitrate asked, the passes, the bytes) and, with BEFORE (a build
#     whose preset searches the quality), with it too (the quality it chose
#     and the bytes),
#  2. renders the same frames as PNG (the reference), and prints each
#     file's bytes and mean PSNR against them (Scripts/psnr.py),
# then, in interleaved runs on the same PNG frames, times with ffmpeg:
#  - plain: one encode at the quality the search chose (95 without
#    BEFORE; VideoSink's settings: CRF, -deadline good -cpu-used 4
#    -row-mt 1, yuva420p, BT.709),
#  - two-pass: pass 1 (statistics), then pass 2 in constrained quality
#    (the CRF of quality 95 as the cap) at the limit's bitrate x AIM
#    (limit x 8 / duration x AIM), and, only where the file is over the
#    limit, pass 2 again at the bitrate scaled by limit / size x 0.95 (the
#    statistics of pass 1 serve again), at most twice: the preset's steps;
# and prints the medians and the ratio two-pass / plain.
#
# Usage: WOBBLE_RUN=... BEFORE=... Scripts/bench-vp9-twopass.sh
# Env: RUNS (default 3), SCENES (default "cat sway whiskers"), BACKEND
#      (default cpu), WOBBLE_RUN (a built binary: no build), SCRATCH,
#      BEFORE (optional), AIM (default 1.05, PresetRun.twoPassAim).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
scenes=${SCENES:-cat sway whiskers}
backend=${BACKEND:-cpu}
aim=${AIM:-1.05}
source Scripts/bench/common.sh
bin=$(wobble_binary)
before=${BEFORE:+$(realpath "$BEFORE")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit=262144
top_crf=3   # quality 95 on VP9's CRF scale, 63 ... 0

median() { sort -g | awk '{a[NR] = $1} END {printf "%.2f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s.%N; }
field() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); p=j['preset']; print(p.get('$2', ''))" "$1"; }
size() { stat -c %s "$1"; }

# encode FRAMES OUT CODEC_ARGS...: VideoSink's WebM settings, from PNG frames.
encode() {
  local frames=$1 out=$2; shift 2
  ffmpeg -hide_banner -nostdin -nostats -loglevel error -framerate "$FPS" -i "$frames/frame_%05d.png" -an \
    -c:v libvpx-vp9 -pix_fmt yuva420p "$@" -deadline good -cpu-used 4 -row-mt 1 \
    -vf "scale=out_color_matrix=bt709:out_range=tv,format=yuva420p,setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709:range=tv" \
    -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv -fflags +bitexact -f webm -y "$out"
}

# twopass FRAMES OUT SECONDS: prints the second passes made and the last bitrate.
twopass() {
  local frames=$1 out=$2 seconds=$3 log=$tmp/pass
  local rate passes=1
  rate=$(awk -v l=$limit -v s="$seconds" -v a="$aim" 'BEGIN {printf "%d", l * 8 / s * a}')
  encode "$frames" "$tmp/pass1.webm" -crf $top_crf -b:v "$rate" -pass 1 -passlogfile "$log"
  encode "$frames" "$out" -crf $top_crf -b:v "$rate" -pass 2 -passlogfile "$log"
  while (( $(size "$out") > limit && passes < 3 )); do
    rate=$(awk -v r="$rate" -v l=$limit -v b="$(size "$out")" 'BEGIN {printf "%d", r * l / b * 0.95}')
    encode "$frames" "$out" -crf $top_crf -b:v "$rate" -pass 2 -passlogfile "$log"
    passes=$((passes + 1))
  done
  echo "$passes $rate"
}

printf '%-9s | %-22s %9s %7s | %-24s %9s %7s | %7s %7s %6s\n' scene "search (BEFORE)" bytes PSNR "two-pass (WOBBLE_RUN)" bytes PSNR "plain s" "2pass s" ratio
for scene in $scenes; do
  lua=Examples/$scene/$scene.lua
  clip=(--frames 0-89 --backend "$backend" -q)
  json=$("$bin" "$lua" "${clip[@]}" --preset telegram --json -o "$tmp/preset.webm" | tail -n 1)
  pic=$(field "$json" picture); fps=$(field "$json" fps); seconds=$(field "$json" seconds)
  chosen="$(field "$json" rate_control) $(field "$json" bitrate) b/s, $(field "$json" passes) passes"
  [[ -z $(field "$json" rate_control) ]] && chosen="quality $(field "$json" quality) (searched)"
  q=95 searched="-" sbytes="-" spsnr="-"
  w=$(python3 -c "print($pic[0])"); h=$(python3 -c "print($pic[1])")
  rm -rf "$tmp/frames"; mkdir "$tmp/frames"
  "$bin" "$lua" "${clip[@]}" --width "$w" --height "$h" --fps "$fps" -o "$tmp/frames/"
  if [[ -n $before ]]; then
    old=$("$before" "$lua" "${clip[@]}" --preset telegram --json -o "$tmp/search.webm" | tail -n 1)
    q=$(field "$old" quality); searched="quality $q"
    sbytes=$(size "$tmp/search.webm"); spsnr=$(python3 Scripts/psnr.py "$tmp/search.webm" "$tmp/frames")
  fi
  export FPS=$fps
  crf=$(python3 -c "print(int(round(63 + (0 - 63) * ($q - 1) / 99)))")
  : > "$tmp/plain.t"; : > "$tmp/two.t"
  for ((i = 0; i < runs; i++)); do
    t0=$(now); encode "$tmp/frames" "$tmp/plain.webm" -crf "$crf" -b:v 0; t1=$(now)
    awk -v a="$t0" -v b="$t1" "BEGIN {print b - a}" >> "$tmp/plain.t"
    t0=$(now); result=$(twopass "$tmp/frames" "$tmp/two.webm" "$seconds"); t1=$(now)
    awk -v a="$t0" -v b="$t1" "BEGIN {print b - a}" >> "$tmp/two.t"
  done
  cmp -s "$tmp/two.webm" "$tmp/preset.webm" || echo "note: $scene: ffmpeg's two-pass file from PNG frames differs from the preset's ($(size "$tmp/two.webm") bytes, ${result% *} second passes)" >&2
  tp=$(median < "$tmp/plain.t"); tt=$(median < "$tmp/two.t")
  printf '%-9s | %-22s %9s %7s | %-24s %9s %7s | %7s %7s %6s\n' "$scene" "$searched" "$sbytes" "$spsnr" "$chosen" \
    "$(size "$tmp/preset.webm")" "$(python3 Scripts/psnr.py "$tmp/preset.webm" "$tmp/frames")" "$tp" "$tt" \
    "$(awk -v a="$tt" -v b="$tp" 'BEGIN {printf "%.2f", a / b}')"
done
