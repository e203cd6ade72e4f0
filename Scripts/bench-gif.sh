#!/usr/bin/env bash
# GIF benchmark: wobble-run's scene -> GIF against ffmpeg's best two-pass
# recipe and ImageMagick, on the same 90 frames (640x480, 3 s at 30 fps, two
# wobbling regions: Scripts/bench/gif-bench.lua).
#
#  1. renders the scene once as PNG frames (the reference),
#  2. ffmpeg: palettegen=stats_mode=diff, then
#     paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle (both passes timed),
#  3. ImageMagick: convert -layers Optimize,
#  4. wobble-run: the scene rendered straight to GIF (render included),
# and prints for each the wall time (median of RUNS), the file size and the
# mean PSNR of the decoded GIF frames against the PNG frames
# (Scripts/psnr.py), then checks the goals: wobble-run faster than ffmpeg's
# encode alone, no larger, and at least 1 dB better.
#
# Usage: Scripts/bench-gif.sh
# Env: RUNS (default 3), BACKEND (gles|cpu, default gles), SCRATCH (build
#      folder, default .build-bench), WOBBLE_RUN (a built binary: no build),
#      KEEP=dir (keep the frames and GIFs there), QUALITIES (the --quality
#      settings reported, default "25 75 100").
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
backend=${BACKEND:-gles}
scene=Scripts/bench/gif-bench.lua
size=(--width 640 --height 480)

if ! command -v ffmpeg >/dev/null || ! command -v convert >/dev/null; then
  Scripts/install-deps.sh --bench
fi
if ! python3 -c 'import numpy' 2>/dev/null; then
  python3 -m pip install --quiet numpy
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

echo "rendering the reference frames ($backend) ..." >&2
rm -rf "$tmp/frames"
"$bin" "$scene" "${size[@]}" --backend "$backend" -q -o "$tmp/frames/"
frames=$(ls "$tmp/frames" | grep -c '^frame_.*\.png$')

ffmpeg_encode() {
  ffmpeg -v error -y -framerate 30 -i "$tmp/frames/frame_%05d.png" \
    -vf palettegen=stats_mode=diff "$tmp/palette.png"
  ffmpeg -v error -y -framerate 30 -i "$tmp/frames/frame_%05d.png" -i "$tmp/palette.png" \
    -lavfi paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle "$tmp/ffmpeg.gif"
}
magick_encode() {
  convert -delay 10/300 -loop 0 "$tmp"/frames/frame_*.png -layers Optimize "$tmp/imagemagick.gif"
}
wobble_gif() {
  "$bin" "$scene" "${size[@]}" --backend "$backend" -q --loop -1 -o "$tmp/wobble-run.gif"   # a 3 s excerpt: no loop
}
wobble_null() {
  "$bin" "$scene" "${size[@]}" --backend "$backend" -q --format null
}

echo "timing ($runs runs each) ..." >&2
t_ff=$(time_median ffmpeg_encode)
t_im=$(time_median magick_encode)
t_wr=$(time_median wobble_gif)
t_null=$(time_median wobble_null)

row() {  # name seconds gif
  local bytes psnr
  bytes=$(stat -c %s "$3")
  psnr=$(python3 Scripts/psnr.py "$3" "$tmp/frames")
  printf '%-44s %8s s %10s bytes %7s dB\n' "$1" "$2" "$bytes" "$psnr"
  echo "$bytes $psnr" >"$3.stats"
}
echo "$frames frames, 640x480, backend $backend, median of $runs runs"
row "ffmpeg palettegen+paletteuse (encode only)" "$t_ff" "$tmp/ffmpeg.gif"
row "ImageMagick convert -layers Optimize" "$t_im" "$tmp/imagemagick.gif"
row "wobble-run scene -> GIF (render included)" "$t_wr" "$tmp/wobble-run.gif"
printf '%-44s %8s s\n' "wobble-run scene -> null (render only)" "$t_null"
# --quality: bytes against fidelity (one run each).
for q in ${QUALITIES:-25 75 100}; do
  "$bin" "$scene" "${size[@]}" --backend "$backend" -q --loop -1 --quality "$q" -o "$tmp/wobble-run-q$q.gif"
  row "wobble-run --quality $q" "-" "$tmp/wobble-run-q$q.gif"
done

read -r b_ff p_ff <"$tmp/ffmpeg.gif.stats"
read -r b_wr p_wr <"$tmp/wobble-run.gif.stats"
status=0
check() {  # description condition
  if awk "BEGIN {exit !($2)}"; then echo "PASS $1"; else echo "FAIL $1"; status=1; fi
}
check "time: wobble-run $t_wr s < ffmpeg $t_ff s" "$t_wr < $t_ff"
check "size: wobble-run $b_wr <= ffmpeg $b_ff bytes" "$b_wr <= $b_ff"
check "PSNR: wobble-run $p_wr >= ffmpeg $p_ff + 1 dB" "$p_wr >= $p_ff + 1"
exit $status
