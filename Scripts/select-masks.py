#!/usr/bin/env python3
"""Rasterises the selection benchmark's hand-made object outlines
(Tests/WobbleVisionTests/SelectSet/objects.txt; the format is described at
its top) into masks, and draws each over its photo to look at.

Usage: Scripts/select-masks.py [OUT_FOLDER]   (default: select-masks/)
Writes OUT/<photo>-<object>.pgm (255 inside, 0 outside) and, with ImageMagick's
`convert` on the PATH, OUT/<photo>-overlay.png (every object of the photo
tinted, each a colour). The benchmark and its test rasterise the same file
the same way in Swift (SelectSet.swift): a pixel is inside when its centre is.
For each object it also prints what one pixel of edge costs: the IoU of the
mask with itself eroded and dilated by one pixel (4-neighbours). Where both
are under 0.85 (the tripod), a cutout whose edge is one pixel off all round
never reaches NoC@85's IoU.
"""
import os
import subprocess
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "WobbleVisionTests", "SelectSet")


def parse(path):
    photos = []
    for n, raw in enumerate(open(path), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if f[0] == "photo":
            photos.append((f[1], []))
        elif f[0] == "object":
            photos[-1][1].append((f[1], []))
        else:
            minus = f[0] == "minus"
            if minus:
                f = f[1:]
            pts = [tuple(float(v) for v in p.split(",")) for p in f[1:]]
            if f[0] not in ("polygon", "ellipse"):
                sys.exit(f"{path}:{n}: unknown shape {f[0]}")
            photos[-1][1][-1][1].append((minus, f[0], pts))
    return photos


def inside(kind, pts, x, y):
    if kind == "ellipse":
        (cx, cy), (rx, ry) = pts
        return ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1
    c = False
    for i in range(len(pts)):
        (ax, ay), (bx, by) = pts[i], pts[(i + 1) % len(pts)]
        if (ay > y) != (by > y) and x < ax + (y - ay) / (by - ay) * (bx - ax):
            c = not c
    return c


def size(photo):
    out = subprocess.run(["identify", "-format", "%w %h", photo], capture_output=True, text=True, check=True).stdout
    w, h = out.split()
    return int(w), int(h)


def edge_cost(rows, w, h, grow):
    """The IoU of the mask `rows` with itself eroded (grow False) or dilated by one pixel."""
    def at(x, y):
        return 0 <= x < w and 0 <= y < h and rows[y * w + x] > 127
    area = changed = 0
    for y in range(h):
        for x in range(w):
            here = at(x, y)
            near = [at(x - 1, y), at(x + 1, y), at(x, y - 1), at(x, y + 1)]
            area += here
            if grow and not here and any(near):
                changed += 1
            if not grow and here and not all(near):
                changed += 1
    return (area - changed) / area if not grow else area / (area + changed)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "select-masks"
    os.makedirs(out, exist_ok=True)
    colours = ["red", "lime", "blue", "yellow", "magenta", "cyan"]
    for photo, objects in parse(os.path.join(HERE, "objects.txt")):
        path = os.path.join(HERE, photo)
        w, h = size(path)
        base = os.path.splitext(os.path.basename(photo))[0]
        layers = []
        for k, (name, shapes) in enumerate(objects):
            rows = bytearray(w * h)
            for minus, kind, pts in shapes:
                xs = [p[0] for p in pts] if kind == "polygon" else [pts[0][0] - pts[1][0], pts[0][0] + pts[1][0]]
                ys = [p[1] for p in pts] if kind == "polygon" else [pts[0][1] - pts[1][1], pts[0][1] + pts[1][1]]
                for y in range(max(0, int(min(ys)) - 1), min(h, int(max(ys)) + 2)):
                    for x in range(max(0, int(min(xs)) - 1), min(w, int(max(xs)) + 2)):
                        if inside(kind, pts, x + 0.5, y + 0.5):
                            rows[y * w + x] = 0 if minus else 255
            mask = os.path.join(out, f"{base}-{name}.pgm")
            with open(mask, "wb") as f:
                f.write(b"P5 %d %d 255\n" % (w, h) + bytes(rows))
            layers.append((mask, colours[k % len(colours)]))
            print(f"{base}/{name}: one pixel of edge: eroded IoU {edge_cost(rows, w, h, False):.3f}, "
                  f"dilated IoU {edge_cost(rows, w, h, True):.3f}")
        args = ["convert", path, "-colorspace", "sRGB", "-type", "TrueColor"]
        for mask, colour in layers:
            args += ["(", "-size", f"{w}x{h}", f"xc:{colour}", mask, "-evaluate", "multiply", "0.45",
                     "-alpha", "off", "-compose", "copyopacity", "-composite", ")", "-compose", "over", "-composite"]
        args.append(os.path.join(out, f"{base}-overlay.png"))
        try:
            subprocess.run(args, check=True)
        except FileNotFoundError:
            pass
        print(f"{photo}: {len(objects)} objects")


main()
