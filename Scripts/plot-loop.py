#!/usr/bin/env python3
"""Plots a looping clip (docs/loop.png): the content's offset at a region's
center over three periods of a loop() scene, classic and spring, with the
seams marked. Each period has two pokes (at 0.1 s along +x, at 1.0 s along
-x with amplitude 0.7); the period is 1.5 s. The loop is one period of the
steady state: the pokes repeated forever, so the curve goes on through each
seam without a jump (computed here by brute force, the pokes of 40 earlier
periods summed, independent of wobble-run's closed form). The faint curves
are the same pokes played once from rest, as a clip without loop() would
start: at its seam (1.5 s) it would jump back to rest.

The formulas are those of docs/API.md ("Motion models"), with every default.
Needs python3 and ImageMagick's `convert` (no Python packages).
Usage: Scripts/plot-loop.py [OUT.png]   (default docs/loop.png)
"""
import math
import os
import subprocess
import sys

P = 1.5
POKES = [(0.1, 1.0, 1.0), (1.0, -1.0, 0.7)]   # (time, direction along x, amplitude)
HISTORY = 40


def kicks(t, looping):
    """Every poke at or before t: (start, direction, amplitude), oldest first."""
    out = []
    periods = range(-HISTORY, 3) if looping else [0]
    for n in periods:
        for (s, d, a) in POKES:
            if n * P + s <= t + 1e-9:
                out.append((n * P + s, d, a))
    return out


def classic(t, looping):
    d, decay, threshold = 1.2, 0.7, 0.1
    ks = kicks(t, looping)
    if not ks:
        return 0.0
    start, direction, amp = ks[-1]
    begin = start
    while begin + d <= t + 1e-9 and amp > 0:
        amp *= decay
        if amp < threshold:
            amp = 0.0
        begin += d
    if amp == 0:
        return 0.0
    tau = t - begin
    u = math.fmod(2 * tau, d)
    x = (d - u if u > d / 2 else u) / (d / 2)
    progress = (-1 if tau < d / 2 else 1) * (2 * x - x * x)
    return -amp * progress * direction


def spring(t, looping):
    p, z = 1.2, 0.1
    w = 2 * math.pi / p
    wd = w * math.sqrt(1 - z * z)
    t_star = math.atan2(math.sqrt(1 - z * z), z) / wd
    c = math.sqrt(1 - z * z) * math.exp(-z * w * t_star)
    return sum(a * d * math.exp(-z * w * (t - s)) * math.sin(wd * (t - s)) for (s, d, a) in kicks(t, looping)) / c


def segments(points):
    return " ".join("line %.2f,%.2f %.2f,%.2f" % (a[0], a[1], b[0], b[1]) for a, b in zip(points, points[1:]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "loop.png")
    width, height = 960, 380
    left, right, top, bottom = 70, 45, 60, 50
    t0, t1, y_max = 0.0, 3 * P, 1.6

    def px(t, v):
        return left + (width - left - right) * (t - t0) / (t1 - t0), top + (height - top - bottom) * (y_max - v) / (2 * y_max)

    mvg = []
    for v in (-1, 1):
        (x0, y), (x1, _) = px(t0, v), px(t1, v)
        mvg.append(f"stroke #dddddd stroke-width 1 line {x0},{y} {x1},{y}")
    (x0, y), (x1, _) = px(t0, 0), px(t1, 0)
    mvg.append(f"stroke #444444 stroke-width 1.5 line {x0},{y} {x1},{y}")
    for n in range(0, 4):
        (x, y0), (_, y1) = px(n * P, y_max), px(n * P, -y_max)
        mvg.append(f"stroke #e6550d stroke-width 1.2 stroke-dasharray 6,4 line {x},{y0} {x},{y1}")
    n = 900
    ts = [t0 + (t1 - t0) * i / n for i in range(n + 1)]
    once = [t for t in ts if t < P]
    for color, f in (("#fdd0a2", classic), ("#c6dbef", spring)):
        mvg.append(f"stroke {color} stroke-width 2 " + segments([px(t, f(t, False)) for t in once]))
    for color, f in (("#e6550d", classic), ("#08519c", spring)):
        mvg.append(f"stroke {color} stroke-width 2.2 " + segments([px(t, f(t % P, True)) for t in ts]))
    text = ["fill #222222 stroke none font-size 15"]
    for k in range(0, 4):
        x, y = px(k * P, -y_max)
        text.append(f"text {x - 12},{y + 20} '{k * P:g} s'")
    text.append(f"text {left},{22} 'a loop(): three plays of one 1.5 s period, pokes at 0.1 s (+) and 1.0 s (−); dashed: the seams'")
    text.append(f"fill #e6550d text {left},{44} 'classic'")
    text.append(f"fill #08519c text {left + 70},{44} 'spring'")
    text.append(f"fill #9e9ac8 text {left + 140},{44} 'faint: the same pokes from rest, without loop() (a jump at the seam)'")
    cmd = ["convert", "-size", f"{width}x{height}", "xc:white", "-font", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]
    for item in mvg:
        cmd += ["-draw", "fill none " + item]
    cmd += ["-draw", " ".join(text), out]
    subprocess.run(cmd, check=True)
    print("wrote", os.path.normpath(out))


if __name__ == "__main__":
    main()
