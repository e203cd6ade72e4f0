#!/usr/bin/env bash
# Writes the browser benchmarks' shared scene into folder $1: `img.png`, a
# 1280x720 picture (gradients and a 32 px checker), and `scene.lua`, four
# regions kicked together every 1.2 s for 12 s. Used by bench-browser.sh
# (the studio page) and bench-web.sh (the web player against the page), so
# both measure the same frames. $2: the Python that writes the PNG.
set -euo pipefail
dir=$1 python=${2:-python3}
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
