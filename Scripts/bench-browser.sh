#!/usr/bin/env bash
# The browser studio's figures, in Debian's chromium (headless, WebGL2 on
# SwiftShader) driven by Playwright, against `wobble-run serve`:
#   - a poke: mouse-up to the first moved frame drawn, measured in the page (goal <= 100 ms)
#   - a handle drag: edit sent to the new shape drawn, measured in the page (goal <= 100 ms)
#   - playback of a 1280x720 scene with four moving regions: frames drawn per second (goal >= 30),
#     and the browser's CPU time per frame (all its processes; it holds on a busy machine)
#   - the floor: the same page drawing empty frames (a clear instead of the picture), both figures
# Usage: Scripts/bench-browser.sh [wobble-run binary]   (default: the debug build; the figures
# in docs/studio.md are of .build/release/wobble-run)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$(swift build --show-bin-path)/wobble-run}
python=$(Scripts/install-browser-tests.sh)
dir=$(mktemp -d)
pid=
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
# A 1280x720 picture: gradients and a 32 px checker.
"$python" - "$dir/img.png" <<'PY'
import struct, sys, zlib
w, h = 1280, 720
rows = bytearray()
for y in range(h):
    rows.append(0)
    for x in range(w):
        c = 220 if (x // 32 + y // 32) % 2 else 40
        rows += bytes((x * 255 // w, y * 255 // h, c, 255))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                              + chunk(b"IDAT", zlib.compress(bytes(rows), 1)) + chunk(b"IEND", b""))
PY
cat > "$dir/scene.lua" <<'LUA'
image("img.png")
local a = addSketch{x = 80, y = 80, w = 260, h = 220}
local b = addSketch{x = 420, y = 60, w = 300, h = 260}
local c = addSketch{x = 800, y = 100, w = 280, h = 240}
local d = addSketch{x = 300, y = 400, w = 420, h = 260}
prepare()
for i = 1, 10 do
  touch(210, 190, 240, 190); touch(570, 190, 570, 220); touch(940, 220, 900, 220); touch(510, 530, 510, 500)
  wait(1.2)
end
LUA
"$bin" serve "$dir/scene.lua" > "$dir/serve.out" 2> "$dir/serve.err" &
pid=$!
for _ in $(seq 50); do grep -q token "$dir/serve.out" 2>/dev/null && break; sleep 0.2; done
url=$(grep -o 'http://[^ ]*' "$dir/serve.out")
steps='[["open"],["wait_ready"],["hide_handles"],["play_fps",5],
 ["seek",30],["poke",210,190,210,230],["seek",40],["poke",570,190,600,190],["seek",50],["poke",940,220,940,260],
 ["seek",60],["poke",510,530,540,530],["seek",70],["poke",210,190,250,190],
 ["key","h"],["seek",0],["drag",80,80,70,70],["drag",720,60,730,50],["drag",1080,340,1090,350],["drag",720,660,730,670],
 ["drag",70,70,80,80],["metrics","m"],["floor_fps",5]]'
mkdir -p "$dir/out"
"$python" Tests/WobbleServeTests/Browser/drive.py "$url" "$dir/out" "$steps" || { cat "$dir/out/result.json"; exit 1; }
"$python" - "$dir/out/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
m = r["m"]
def line(name, xs, goal):
    print(f"{name}: median {statistics.median(xs):.0f} ms, max {max(xs):.0f} ms over {len(xs)} (goal <= {goal} ms)")
print(f"renderer: {m['renderer']}")
print(f"playback, 1280x720, four moving regions: {r['fps']:.1f} frames drawn per second (goal >= 30),"
      f" browser CPU {r['fps_cpu_ms']:.0f} ms per frame")
print(f"floor, the same page drawing empty frames: {r['floor_fps']:.1f} frames drawn per second,"
      f" browser CPU {r['floor_fps_cpu_ms']:.0f} ms per frame")
line("poke, mouse-up to first moved frame drawn", m["pokeLatency"], 100)
line("handle drag, edit sent to new shape drawn", m["dragLatency"], 100)
PY
