#!/usr/bin/env bash
# Animated WebP against ffmpeg's libwebp_anim (the same libwebp,
# WebPAnimEncoder at its defaults) on the same 90 PNG frames (640x480, 3 s
# at 30 fps, two wobbling regions: Scripts/bench/gif-bench.lua), side by
# side in one run:
#
#  1. bytes and mean PSNR (Scripts/anim-compare.py: premultiplied RGB +
#     alpha, Pillow's decoder) at each of QUALITIES, for wobble-run
#     (--assemble of the frames), BEFORE (another build, when set) and
#     ffmpeg; the bytes at equal PSNR interpolated on each curve (log
#     bytes, linear in dB) and their ratio to ffmpeg's;
#  2. time at quality 82: RUNS interleaved runs of each encoder (PNG
#     decoding included on every side), medians of wall and CPU (user +
#     system) seconds and their ratios to ffmpeg's (goal: <= 1.0x).
#
# Usage: Scripts/bench-webp.sh
# Env: RUNS (default 5), QUALITIES (default "70 82 90"), WOBBLE_RUN (a
#      built binary: no build), SCRATCH (release build folder, default
#      .build-bench), BEFORE (another build's wobble-run).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
qualities=${QUALITIES:-70 82 90}
py=/usr/bin/python3
[[ -x $py ]] || py=python3
if ! command -v ffmpeg >/dev/null || ! "$py" -c 'import PIL' 2>/dev/null; then Scripts/install-deps.sh --bench; fi
source Scripts/bench/common.sh
bin=$(wobble_binary)
before=${BEFORE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" Scripts/bench/gif-bench.lua --width 640 --height 480 --backend cpu -q -o "$tmp/frames/"
encode() {   # encoder, quality, output
  case $1 in
    ours) "$bin" --assemble "$tmp/frames" --fps 30 -q --quality "$2" -o "$3" ;;
    before) "$before" --assemble "$tmp/frames" --fps 30 -q --quality "$2" -o "$3" ;;
    ffmpeg) ffmpeg -v error -y -framerate 30 -i "$tmp/frames/frame_%05d.png" -c:v libwebp_anim -lossless 0 \
              -quality "$2" -loop 0 "$3" ;;
  esac
}
encoders=(ours ffmpeg)
[[ -n $before ]] && encoders=(ours before ffmpeg)

declare -A curve
printf '%-8s %8s %10s %9s\n' encoder quality bytes "PSNR dB"
for e in "${encoders[@]}"; do
  for q in $qualities; do
    encode "$e" "$q" "$tmp/$e-$q.webp"
    p=$("$py" Scripts/anim-compare.py "$tmp/$e-$q.webp" "$tmp/frames" 30 | "$py" -c "import json,sys; print(json.load(sys.stdin)['mean_psnr'])")
    b=$(stat -c %s "$tmp/$e-$q.webp")
    curve[$e]+="$p $b"$'\n'
    printf '%-8s %8s %10s %9s\n' "$e" "$q" "$b" "$p"
  done
done

at_psnr() {   # curve, psnr -> bytes (log bytes linear in dB), or nan
  "$py" - "$2" <<PY
import math, sys
pts = sorted((float(p), int(b)) for p, b in (l.split() for l in """$1""".strip().splitlines()))
t = float(sys.argv[1])
for (p0, b0), (p1, b1) in zip(pts, pts[1:]):
    if p0 <= t <= p1:
        f = (t - p0) / (p1 - p0) if p1 > p0 else 0
        print(round(math.exp(math.log(b0) + f * (math.log(b1) - math.log(b0))))); sys.exit()
print("nan")
PY
}
echo
echo "bytes at equal PSNR (ratio to ffmpeg's):"
ref=$(echo "${curve[ffmpeg]}" | sed -n 2p | awk '{print $1}')   # ffmpeg's PSNR at the middle quality
for target in 38 "$ref" 40; do
  t=$(at_psnr "${curve[ffmpeg]}" "$target")
  line=$(printf 'at %6s dB: ffmpeg %8s' "$target" "$t")
  for e in "${encoders[@]}"; do
    [[ $e == ffmpeg ]] && continue
    o=$(at_psnr "${curve[$e]}" "$target")
    line+=$(printf ', %s %8s (%s)' "$e" "$o" "$(awk -v a="$o" -v b="$t" 'BEGIN { if (a == "nan" || b == "nan") print "n/a"; else printf "%.3fx", a / b }')")
  done
  echo "$line"
done

declare -A wall cpu
one() { /usr/bin/time -f "%e %U %S" -o "$tmp/t" bash -c "$(declare -f encode); tmp='$tmp' bin='$bin' before='$before' encode $1 82 '$tmp/t-$1.webp'"
        awk '{printf "%s %.3f\n", $1, $2 + $3}' "$tmp/t"; }
for e in "${encoders[@]}"; do one "$e" >/dev/null; done   # warm caches
for ((i = 0; i < runs; i++)); do
  for e in "${encoders[@]}"; do
    read -r w c < <(one "$e")
    wall[$e]+="$w "; cpu[$e]+="$c "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
fw=$(echo "${wall[ffmpeg]}" | median); fc=$(echo "${cpu[ffmpeg]}" | median)
echo
printf 'time at quality 82, median of %d interleaved runs:\n' "$runs"
for e in "${encoders[@]}"; do
  w=$(echo "${wall[$e]}" | median); c=$(echo "${cpu[$e]}" | median)
  awk -v e="$e" -v w="$w" -v c="$c" -v fw="$fw" -v fc="$fc" 'BEGIN {
    printf "%-8s wall %6.2f s (%.2fx ffmpeg)   CPU %6.2f s (%.2fx ffmpeg)\n", e, w, w / fw, c, c / fc }'
done
