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
# The 1280x720 four-region scene bench-web.sh also plays.
Scripts/four-regions-720p.sh "$dir" "$python"
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
