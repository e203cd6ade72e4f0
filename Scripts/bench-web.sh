#!/usr/bin/env bash
# The web player's figures (`-o clip.html`, <wobble-view>), in Debian's
# chromium (headless, WebGL2 on SwiftShader: a CPU) driven by Playwright:
#   - the player without the picture: bytes, and gzipped (goal <= 15 KB)
#   - the cat's clip.html against its GIF (goal <= 1/20)
#   - a 320x240 clip (a crop of the cat) against its GIF (goal <= 1/3)
#   - playback of a 1280x720 scene with four moving regions: frames drawn per
#     second and the browser's CPU ms per frame, the player's page against the
#     browser studio's (`wobble-run serve`), measured side by side, alternating,
#     medians of three (goal: the player not slower)
#   - time to first frame: navigation to the first frame drawn, clip.html
#     opened from disk (median of five)
# Usage: Scripts/bench-web.sh [wobble-run binary]   (default: the debug build:
# the pages' bytes are the same from either build, and the playback is the
# browser's; the studio page's frames come from the server, so its figure
# is a little better with a release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$(swift build --show-bin-path)/wobble-run}
python=$(Scripts/install-browser-tests.sh)
dir=$(mktemp -d)
pid=
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
size() { stat -c %s "$1"; }

# Sizes.
"$bin" Examples/cat/cat.lua --format web -o "$dir/web/" -q
player=$(size "$dir/web/wobble-view.js")
gz=$(gzip -9c "$dir/web/wobble-view.js" | wc -c)
echo "player (wobble-view.js with render.js, wobble-motion.js and the shaders): $player bytes, $gz gzipped (goal <= 15360)"
"$bin" Examples/cat/cat.lua -o "$dir/cat.html" -q
"$bin" Examples/cat/cat.lua -o "$dir/cat.gif" -q
h=$(size "$dir/cat.html") g=$(size "$dir/cat.gif")
echo "cat: clip.html $h bytes, GIF $g bytes: 1/$(( g / h )) (goal <= 1/20)"
"$python" - Examples/cat/chelsea.png "$dir/small.png" <<'PY'
import sys
from PIL import Image
Image.open(sys.argv[1]).crop((65, 30, 385, 270)).save(sys.argv[2])
PY
cat > "$dir/small.lua" <<'LUA'
image("small.png")
local face = addSketch{x = 60, y = 80, w = 200, h = 140}
prepare()
touch(160, 150, 190, 140)
wait(3)
LUA
"$bin" "$dir/small.lua" -o "$dir/small.html" -q
"$bin" "$dir/small.lua" -o "$dir/small.gif" -q
h=$(size "$dir/small.html") g=$(size "$dir/small.gif")
echo "320x240, 3 s: clip.html $h bytes, GIF $g bytes: $(( g * 10 / h ))/10 times smaller (goal >= 3)"

# Playback: the player against the studio page, the same 4-region 720p scene.
Scripts/four-regions-720p.sh "$dir" "$python"
"$bin" "$dir/scene.lua" -o "$dir/scene.html" -q
"$bin" serve "$dir/scene.lua" > "$dir/serve.out" 2> "$dir/serve.err" &
pid=$!
for _ in $(seq 50); do grep -q token "$dir/serve.out" 2>/dev/null && break; sleep 0.2; done
url=$(grep -o 'http://[^ ]*' "$dir/serve.out")
for i in 1 2 3; do
  mkdir -p "$dir/p$i" "$dir/s$i"
  "$python" Tests/WobbleServeTests/Browser/player.py "file://$dir/scene.html" "$dir/p$i" \
    '{"steps":[["open"],["wait_ready"],["sleep",1],["fps","fps",5]]}' > /dev/null || { cat "$dir/p$i/result.json"; exit 1; }
  "$python" Tests/WobbleServeTests/Browser/drive.py "$url" "$dir/s$i" '[["open"],["wait_ready"],["hide_handles"],["play_fps",5]]' > /dev/null \
    || { cat "$dir/s$i/result.json"; exit 1; }
done
for i in 1 2 3 4 5; do
  mkdir -p "$dir/f$i"
  "$python" Tests/WobbleServeTests/Browser/player.py "file://$dir/cat.html" "$dir/f$i" '{"steps":[["first_frame","ms"]]}' > /dev/null \
    || { cat "$dir/f$i/result.json"; exit 1; }
done
"$python" - "$dir" <<'PY'
import json, statistics, sys
d = sys.argv[1]
r = lambda p: json.load(open(f"{d}/{p}/result.json"))
pf = [r(f"p{i}")["fps"]["fps"] for i in (1, 2, 3)]
pc = [r(f"p{i}")["fps"]["cpu_ms_per_frame"] for i in (1, 2, 3)]
sf = [r(f"s{i}")["fps"] for i in (1, 2, 3)]
sc = [r(f"s{i}")["fps_cpu_ms"] for i in (1, 2, 3)]
m = statistics.median
print(f"playback, 1280x720, four moving regions: player {m(pf):.1f} fps, {m(pc):.0f} ms CPU a frame;"
      f" studio page {m(sf):.1f} fps, {m(sc):.0f} ms CPU a frame (player/studio fps {m(pf) / m(sf):.2f})")
ff = [r(f"f{i}")["ms"] for i in (1, 2, 3, 4, 5)]
print(f"time to first frame, the cat's clip.html from disk: median {m(ff):.0f} ms (of {', '.join(f'{x:.0f}' for x in ff)})")
PY
