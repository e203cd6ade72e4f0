#!/usr/bin/env bash
# Where-clips-go benchmark, side by side in one run, on the same 90 PNG
# frames (640x480, 3 s at 30 fps, two wobbling regions:
# Scripts/bench/gif-bench.lua):
#
#  1. Animated WebP: wobble-run (--assemble of the frames) against ffmpeg's
#     libwebp_anim encoder (the same libwebp, WebPAnimEncoder, its default
#     settings) at several qualities, and our own GIF. Each file is decoded
#     with Pillow and compared with the PNG frames (Scripts/anim-compare.py:
#     mean PSNR over the frames, premultiplied RGB + alpha); the bytes at
#     equal PSNR are interpolated (log bytes, linear in dB) from each
#     encoder's curve. Goals: smaller than ffmpeg's WebP at equal PSNR, and
#     at most 0.4x our GIF's bytes at the GIF's PSNR.
#     Without libwebp_anim in the installed ffmpeg, img2webp (libwebp's
#     own tool, Debian package webp) is the comparison instead.
#  2. APNG: wobble-run against ffmpeg's apng encoder (-pred mixed, its
#     best filter choice): bytes, median time, and that both are lossless.
#     Goals: smaller and faster.
#  3. Each --preset on the gallery's cat (Examples/cat, its first 3 s, a
#     sticker's length): bytes, limit, what was chosen, time.
#
# Times are medians of RUNS runs (encoding from the same PNG files, PNG
# decoding included on both sides).
#
# Usage: Scripts/bench-formats.sh
# Env: RUNS (default 3), SCRATCH (release build folder, default
#      .build-bench), WOBBLE_RUN (a built binary: no build), KEEP=dir (keep
#      the files there), QUALITIES (default "50 70 82 90 95").
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
qualities=${QUALITIES:-50 70 82 90 95}
scene=Scripts/bench/gif-bench.lua
compare=Scripts/anim-compare.py
py=/usr/bin/python3
[[ -x $py ]] || py=python3

if ! command -v ffmpeg >/dev/null || ! "$py" -c 'import PIL' 2>/dev/null; then
  Scripts/install-deps.sh --bench
fi

source Scripts/bench/common.sh
bin=$(wobble_binary)

if [[ -n "${KEEP:-}" ]]; then
  tmp=$KEEP
  mkdir -p "$tmp"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi

# Median wall time in seconds of RUNS runs of "$@".
time_median() {
  local times=() t0 t1
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
size() { stat -c %s "$1"; }
field() { "$py" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

echo "rendering the reference frames ..." >&2
rm -rf "$tmp/frames"
"$bin" "$scene" --width 640 --height 480 --backend cpu -q -o "$tmp/frames/"
frames=$(ls "$tmp/frames" | grep -c '^frame_.*\.png$')
echo "frames: $frames (640x480, 30 fps)"

# ---- 1. WebP -------------------------------------------------------------
encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null || true)   # (grep -q in a pipe would cut ffmpeg off)
if grep -q ' libwebp_anim ' <<<"$encoders"; then
  other="ffmpeg libwebp_anim"
  other_encode() {   # quality, output
    ffmpeg -v error -y -framerate 30 -i "$tmp/frames/frame_%05d.png" -c:v libwebp_anim -lossless 0 \
      -quality "$1" -loop 0 "$2"
  }
else
  other="img2webp (ffmpeg has no libwebp_anim)"
  other_encode() {
    img2webp -loop 0 -lossy -q "$1" -d 33 "$tmp"/frames/frame_*.png -o "$2" >/dev/null 2>&1
  }
fi
ours_webp() { "$bin" --assemble "$tmp/frames" --fps 30 -q --quality "$1" -o "$2"; }

curve() {   # name, encode function -> lines "psnr bytes"
  local name=$1 fn=$2
  for q in $qualities; do
    "$fn" "$q" "$tmp/$name-$q.webp"
    local p
    p=$("$py" "$compare" "$tmp/$name-$q.webp" "$tmp/frames" 30 | field mean_psnr)
    echo "$p $(size "$tmp/$name-$q.webp") $q"
  done
}
echo
echo "== animated WebP: bytes and mean PSNR per quality =="
ours_curve=$(curve ours ours_webp)
other_curve=$(curve other other_encode)
printf '%-34s %8s %10s %9s\n' encoder quality bytes "PSNR dB"
while read -r p b q; do printf '%-34s %8s %10s %9s\n' "wobble-run" "$q" "$b" "$p"; done <<<"$ours_curve"
while read -r p b q; do printf '%-34s %8s %10s %9s\n' "$other" "$q" "$b" "$p"; done <<<"$other_curve"

"$bin" --assemble "$tmp/frames" --fps 30 -q -o "$tmp/ours.gif"
gif_bytes=$(size "$tmp/ours.gif")
gif_psnr=$("$py" "$compare" "$tmp/ours.gif" "$tmp/frames" 30 | field mean_psnr)
echo "wobble-run GIF (default)                    $gif_bytes bytes, $gif_psnr dB"

# Bytes at a PSNR, interpolated on a curve (log bytes, linear in dB).
at_psnr() {   # curve, psnr
  "$py" - "$2" <<PY
import math, sys
pts = sorted((float(p), int(b)) for p, b, q in (l.split() for l in """$1""".strip().splitlines()))
t = float(sys.argv[1])
if t <= pts[0][0]: print(pts[0][1] if t == pts[0][0] else "nan"); sys.exit()
for (p0, b0), (p1, b1) in zip(pts, pts[1:]):
    if p0 <= t <= p1:
        f = (t - p0) / (p1 - p0) if p1 > p0 else 0
        print(round(math.exp(math.log(b0) + f * (math.log(b1) - math.log(b0))))); sys.exit()
print("nan")
PY
}
echo
echo "== WebP bytes at equal PSNR =="
for target in 38 40 "$gif_psnr"; do
  o=$(at_psnr "$ours_curve" "$target")
  t=$(at_psnr "$other_curve" "$target")
  ratio=$(awk -v a="$o" -v b="$t" 'BEGIN { if (a == "nan" || b == "nan") print "n/a"; else printf "%.3f", a / b }')
  printf 'at %6s dB: wobble-run %8s bytes, %s %8s bytes, ratio %s\n' "$target" "$o" "$other" "$t" "$ratio"
done
o_gif=$(at_psnr "$ours_curve" "$gif_psnr")
echo "WebP at the GIF's PSNR / GIF bytes: $(awk -v a="$o_gif" -v b="$gif_bytes" 'BEGIN { if (a == "nan") print "n/a"; else printf "%.3f", a / b }') (goal <= 0.4)"
t_ours=$(time_median ours_webp 82 "$tmp/t-ours.webp")
t_other=$(time_median other_encode 82 "$tmp/t-other.webp")
t_gif=$(time_median "$bin" --assemble "$tmp/frames" --fps 30 -q -o "$tmp/t.gif")
echo "time (median of $runs, quality 82): wobble-run WebP ${t_ours}s, $other ${t_other}s, wobble-run GIF ${t_gif}s"

# ---- 2. APNG -------------------------------------------------------------
echo
echo "== APNG (lossless) =="
ours_apng() { "$bin" --assemble "$tmp/frames" --fps 30 -q -o "$tmp/ours.apng"; }
ffmpeg_apng() {
  ffmpeg -v error -y -framerate 30 -i "$tmp/frames/frame_%05d.png" -c:v apng -pred mixed -plays 0 -f apng "$tmp/ffmpeg.apng"
}
t_ours=$(time_median ours_apng)
t_ff=$(time_median ffmpeg_apng)
b_ours=$(size "$tmp/ours.apng")
b_ff=$(size "$tmp/ffmpeg.apng")
e_ours=$("$py" "$compare" "$tmp/ours.apng" "$tmp/frames" 30 | field exact)
e_ff=$("$py" "$compare" "$tmp/ffmpeg.apng" "$tmp/frames" 30 | field exact)
printf '%-22s %10s bytes %8ss  exact=%s\n' wobble-run "$b_ours" "$t_ours" "$e_ours" "ffmpeg apng" "$b_ff" "$t_ff" "$e_ff"
echo "bytes ratio $(awk -v a="$b_ours" -v b="$b_ff" 'BEGIN {printf "%.3f", a / b}') (goal < 1), time ratio $(awk -v a="$t_ours" -v b="$t_ff" 'BEGIN {printf "%.3f", a / b}') (goal < 1)"

# ---- 3. Presets on the gallery's cat --------------------------------------
echo
echo "== presets on Examples/cat (GLES unless BACKEND says) =="
printf '%-9s %-6s %9s %9s %-34s %8s\n' preset format bytes limit chosen time
for p in telegram whatsapp discord line slack; do
  case $p in telegram) ext=.webm ;; whatsapp) ext=.webp ;; discord|line) ext=.png ;; slack) ext=.gif ;; esac
  args=(Examples/cat/cat.lua --backend "${BACKEND:-gles}" -q --preset "$p" --json -o "$tmp/cat-$p$ext")
  args+=(--frames 0-89)   # the first 3 s (the cat lasts 9.3 s; Telegram takes 3 s, LINE 4 s)
  t0=$(date +%s.%N)
  json=$("$bin" "${args[@]}" | tail -n 1)
  t1=$(date +%s.%N)
  "$py" - "$json" "$p" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" <<'PY'
import json, sys
j = json.loads(sys.argv[1]); p = j.get("preset") or {}
level = f"quality {p['quality']}" if "quality" in p else f"{p.get('colour_bits')} bits/channel"
chosen = f"{p.get('width')}x{p.get('height')} {p.get('fps')} fps {p.get('frames')} fr, {level}"
print(f"{sys.argv[2]:<9} {p.get('format',''):<6} {j.get('bytes')!s:>9} {p.get('limit')!s:>9} {chosen:<34} {sys.argv[3]:>7}s")
PY
done
