#!/usr/bin/env bash
# Makes the pictures of docs/API.md that come from renders:
#   docs/touch.png  nested regions: a touch inside the inner one moves it alone
#   docs/edges.png  a white disc over hidden magenta, moving: its edge stays clean
#   docs/cutout.png the same sway as a patch and as a cutout (Examples/cutout)
#   docs/studio-inspector.png  the studio's inspector on the cat, under Xvfb
#   docs/studio.png the studio playing the cat just poked, under Xvfb
#   docs/studio-zoom.jpg  the cat zoomed with the wheel, a tick named
#   docs/studio-export.png  the Shift+E chooser over the cat, Discord lit
#                   (the studio's pictures when Xvfb and xdotool are installed)
# (docs/pin.png and docs/loop.png come from Scripts/plot-pin.py and
# Scripts/plot-loop.py.) Needs a built wobble-run (WOBBLE_RUN, default the
# debug build), ImageMagick and python3 with PIL (python3-pil).
# Usage: Scripts/make-doc-pictures.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin=${WOBBLE_RUN:-$root/.build/debug/wobble-run}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# Nested regions on the cat: the whole face, and the nose inside it
# (prepared after it, as the studio's A adds a region).
cat > touch.lua <<LUA
image("$root/Examples/cat/chelsea.png")
local face = addSketch{ x = 60, y = 20, w = 340, h = 280 }
local nose = addSketch{ x = 215, y = 195, w = 95, h = 80, strength = 0.15 }
prepare()
touch(262, 235, 300, 235)      -- inside the nose: the nose, not the face
wait(0.3)
LUA
"$bin" touch.lua -q --backend cpu --overlay --frames 0-8 -o frames/
"$bin" touch.lua -q --backend cpu --frames 0-8 -o plain/
# Left: the frame with the regions drawn; right: what moved (white), against frame 0.
convert plain/frame_00000.png plain/frame_00008.png -compose difference -composite -colorspace gray \
    -level 0%,8% moved.png
convert frames/frame_00008.png moved.png +append -resize 900x "$root/docs/touch.png"

# The disc: white on transparency, magenta hidden under the transparent pixels.
python3 - <<'PY'
from PIL import Image
import math
im = Image.new("RGBA", (64, 64))
for y in range(64):
    for x in range(64):
        d = math.hypot(x + 0.5 - 32, y + 0.5 - 32)
        a = min(max(22.5 - d, 0), 1)
        im.putpixel((x, y), (255, 255, 255, round(a * 255)) if a > 0 else (255, 0, 255, 0))
im.save("disc.png")
PY
cat > disc.lua <<'LUA'
image("disc.png")
addSketch{x = 4, y = 4, w = 56, h = 56, strength = 0.2}
prepare()
impulse(1, 1, 0.4)
wait(0.2)
LUA
"$bin" disc.lua -q --frames 4 -o disc/
# The edge on a dark background, 6x. Left: the source sampled half a pixel
# off with bilinear filtering on straight values (what earlier versions did
# inside a moving region: the hidden magenta bleeds into the edge). Right:
# frame 4 of the render, sampled on premultiplied values: a clean edge.
python3 - <<'PY'
from PIL import Image
src = Image.open("disc.png").convert("RGBA")
out = Image.open("disc/frame_00004.png").convert("RGBA")
def straight_shift(img, dx):
    w, h = img.size
    res = Image.new("RGBA", (w, h))
    for y in range(h):
        for x in range(w):
            fx = x + dx
            x0 = int(fx // 1); a = fx - x0
            p = img.getpixel((min(max(x0, 0), w - 1), y)); q = img.getpixel((min(max(x0 + 1, 0), w - 1), y))
            res.putpixel((x, y), tuple(round(p[c] * (1 - a) + q[c] * a) for c in range(4)))
    return res
def on_dark(img):
    bg = Image.new("RGBA", img.size, (40, 40, 40, 255))
    bg.alpha_composite(img)
    return bg.crop((6, 6, 38, 38)).resize((192, 192), Image.NEAREST)
panel = Image.new("RGBA", (392, 192), (255, 255, 255, 255))
panel.paste(on_dark(straight_shift(src, 0.5)), (0, 0))
panel.paste(on_dark(out), (200, 0))
panel.save("edges.png")
PY
cp edges.png "$root/docs/edges.png"
echo "wrote docs/touch.png docs/edges.png"

# The same sway as a patch and as a cutout (Examples/cutout, frame 12),
# each above what changed against the still picture.
cp "$root/Examples/latte/coffee.png" coffee.png
sed 's|"../latte/coffee.png"|"coffee.png"|' "$root/Examples/cutout/cutout.lua" > cutout.lua
sed 's|, cutout = "auto"||' cutout.lua > patch.lua
"$bin" patch.lua -q --backend cpu --frames 12 -o patch/
"$bin" cutout.lua -q --backend cpu --frames 12 -o cut/
python3 - <<'PY'
from PIL import Image, ImageChops
still = Image.open("coffee.png").convert("RGB")
panel = Image.new("RGB", (608, 408), (255, 255, 255))
for k, name in enumerate(["patch", "cut"]):
    frame = Image.open(f"{name}/frame_00012.png").convert("RGB")
    moved = ImageChops.difference(frame, still).convert("L").point(lambda v: 255 if v > 0 else 0)
    panel.paste(frame.resize((300, 200), Image.LANCZOS), (k * 308, 0))
    panel.paste(moved.resize((300, 200), Image.LANCZOS).convert("RGB"), (k * 308, 208))
panel.save("cutout.png")
PY
cp cutout.png "$root/docs/cutout.png"
echo "wrote docs/cutout.png"

# The studio's inspector (docs/studio-inspector.png), under Xvfb: the cat's
# left cheek selected with Ctrl+click, made a spring with duration 0.8 s and
# strength 0.18 in the inspector, paused on frame 12 (not saved).
if command -v Xvfb >/dev/null && command -v xdotool >/dev/null; then
    mkdir studio && cp "$root/Examples/cat/cat.lua" "$root/Examples/cat/chelsea.png" studio/
    n=$((90 + $$ % 50))
    Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
    xvfb=$!
    trap 'kill $xvfb 2>/dev/null; rm -rf "$tmp"' EXIT
    export DISPLAY=":$n"
    sleep 1
    (cd studio && "$bin" edit cat.lua -v --window-position 0,0 2>../studio.log) &
    studio=$!
    win=$(xdotool search --sync --name "wobble-run edit: cat.lua" | head -1)
    until grep -q " presented" studio.log; do sleep 0.2; done
    xdotool windowfocus --sync "$win"
    xdotool key --delay 60 space Home
    for _ in $(seq 12); do xdotool key --delay 40 Right; done
    xdotool mousemove --window "$win" 150 230 keydown ctrl click 1 keyup ctrl
    xdotool key --delay 80 Down plus Down minus minus minus minus minus minus minus minus Down Prior
    sleep 3
    import -window "$win" "PNG24:$root/docs/studio-inspector.png"
    xdotool key --delay 200 Escape Escape
    wait $studio || true

    # Playing, the left cheek just poked (a drag inside it, handles shown).
    (cd studio && "$bin" edit cat.lua -v --window-position 0,0 2>../studio2.log) &
    studio=$!
    win=$(xdotool search --sync --name "wobble-run edit: cat.lua" | head -1)
    until grep -q " presented" studio2.log; do sleep 0.2; done
    xdotool windowfocus --sync "$win"
    sleep 1
    xdotool mousemove --window "$win" 150 230 mousedown 1 mousemove --window "$win" 175 225 mouseup 1
    sleep 0.25
    import -window "$win" "PNG24:$root/docs/studio.png"
    # Paused on frame 12, zoomed three wheel notches on the nose, the mouse
    # on the timeline's tick of the touch at 0.6 s.
    xdotool key --delay 60 space Home
    for _ in $(seq 12); do xdotool key --delay 40 Right; done
    xdotool mousemove --window "$win" 250 200 click --delay 120 --repeat 3 4
    sleep 1
    grep -o 'tick .*' studio2.log | tail -1 || true
    for x in $(seq 40 60); do
        xdotool mousemove --window "$win" "$x" 310
        sleep 0.1
        if grep -q "studio: tick: touch at 0.600" studio2.log; then break; fi
    done
    sleep 1
    import -window "$win" -quality 90 "JPEG:$root/docs/studio-zoom.jpg"
    xdotool key --delay 200 Escape Escape
    wait $studio || true

    # The export chooser (docs/studio-export.png): Shift+E, Discord's row.
    (cd studio && "$bin" edit cat.lua -v --window-position 0,0 2>../studio3.log) &
    studio=$!
    win=$(xdotool search --sync --name "wobble-run edit: cat.lua" | head -1)
    until grep -q " presented" studio3.log; do sleep 0.2; done
    xdotool windowfocus --sync "$win"
    xdotool key --delay 120 shift+e Down Down Down
    sleep 1
    import -window "$win" "PNG24:$root/docs/studio-export.png"
    xdotool key --delay 200 Escape Escape
    wait $studio || true
fi
