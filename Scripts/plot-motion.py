#!/usr/bin/env python3
"""Plots how the center of a region moves over time, classic vs spring
(docs/motion.png): one poke at t = 0 and a second one, in the same
direction, at t = 0.9 s, mid-swing. Classic restarts its cycle at the second
poke (the content jumps); the spring adds the second kick to the swing
already going. The formulas are those of docs/API.md ("Motion models"),
with every default (classic D = 1.2 s, decay 0.7, threshold 0.1; spring
P = 1.2 s, Z = 0.1, threshold 0.02). Values: the content's displacement at
the center along the poke, as a fraction of the peak of one poke
(strength · min(bbox w, h)).

Needs python3 and ImageMagick's `convert` (no Python packages).
Usage: Scripts/plot-motion.py [OUT.png]   (default docs/motion.png)
"""
import math
import os
import subprocess
import sys

KICKS = [0.0, 0.9]
T_END = 8.0


def classic(t):
    """The content's offset at the center (fraction of M at amplitude 1)."""
    d, decay, threshold = 1.2, 0.7, 0.1
    start = max(k for k in KICKS if k <= t)
    amp, begin = 1.0, start
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
    return -amp * progress  # the sample moves by +progress, the content by -progress


def spring(t):
    """(the content's offset at the center, the envelope E)."""
    p, z, threshold = 1.2, 0.1, 0.02
    w = 2 * math.pi / p
    wd = w * math.sqrt(1 - z * z)
    t_star = math.atan2(math.sqrt(1 - z * z), z) / wd
    c = math.sqrt(1 - z * z) * math.exp(-z * w * t_star)
    kicks = [k for k in KICKS if k <= t]
    last = kicks[-1]
    e_last = sum(math.exp(-z * w * (last - k)) for k in kicks) / c
    rest = last + math.log(e_last / threshold) / (z * w)
    if t >= rest:
        return 0.0, 0.0
    s = sum(math.exp(-z * w * (t - k)) * math.sin(wd * (t - k)) for k in kicks) / c
    e = sum(math.exp(-z * w * (t - k)) for k in kicks) / c
    # M grows with E (up to 4) and the sample is offset by m·s/E: at the
    # center the content moves by strength·min(w, h)·s.
    return s, e


def segments(points):
    """A curve as MVG line primitives (a polyline would be closed)."""
    return " ".join("line %.2f,%.2f %.2f,%.2f" % (a[0], a[1], b[0], b[1]) for a, b in zip(points, points[1:]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "motion.png")
    width, height = 960, 420
    left, right, top, bottom = 70, 20, 40, 50
    y_max = 2.2

    def px(t, v):
        x = left + (width - left - right) * t / T_END
        y = top + (height - top - bottom) * (y_max - v) / (2 * y_max)
        return x, y

    font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    mvg = []
    # Axes and grid.
    for v in [-2, -1, 1, 2]:
        (x0, y), (x1, _) = px(0, v), px(T_END, v)
        mvg.append(f"stroke #cccccc stroke-width 1 line {x0},{y} {x1},{y}")
    for s in range(1, int(T_END) + 1):
        (x, y0), (_, y1) = px(s, y_max), px(s, -y_max)
        mvg.append(f"stroke #cccccc stroke-width 1 line {x},{y0} {x},{y1}")
    (x0, y), (x1, _) = px(0, 0), px(T_END, 0)
    mvg.append(f"stroke #444444 stroke-width 1.5 line {x0},{y} {x1},{y}")
    (x, y0), (_, y1) = px(0, y_max), px(0, -y_max)
    mvg.append(f"stroke #444444 stroke-width 1.5 line {x},{y0} {x},{y1}")
    # Pokes.
    for k in KICKS:
        (x, y0), (_, y1) = px(k, y_max), px(k, -y_max)
        mvg.append(f"stroke #999999 stroke-width 1 line {x},{y0} {x},{y1}")

    n = 800
    ts = [T_END * i / n for i in range(n + 1)]
    env = [spring(t)[1] for t in ts]
    for sign in (1, -1):
        mvg.append("stroke #9ecae1 stroke-width 1.5 " + segments([px(t, sign * e) for t, e in zip(ts, env)]))
    for color, f in (("#e6550d", classic), ("#08519c", lambda t: spring(t)[0])):
        mvg.append(f"stroke {color} stroke-width 2.2 stroke-linecap round " + segments([px(t, f(t)) for t in ts]))

    text = ["fill #222222 stroke none font-size 15"]
    for s in range(0, int(T_END) + 1):
        x, y = px(s, -y_max)
        text.append(f"text {x - 4},{y + 20} '{s}'")
    for v in [-2, -1, 0, 1, 2]:
        x, y = px(0, v)
        text.append(f"text {x - 30},{y + 5} '{v:+d}'" if v else f"text {x - 22},{y + 5} '0'")
    text.append(f"text {width / 2 - 30},{height - 8} 'time (s)'")
    text.append(f"text {left},{24} 'center offset along the poke (1 = one poke’s peak); pokes at 0 and 0.9 s'")
    text.append(f"fill #e6550d text {width - 370},{top + 20} 'classic: the second poke restarts the cycle'")
    text.append(f"fill #08519c text {width - 370},{top + 40} 'spring: the kicks add up'")
    text.append(f"fill #6baed6 text {width - 370},{top + 60} 'spring envelope ±E (what amplitude reads)'")

    cmd = ["convert", "-size", f"{width}x{height}", "xc:white", "-font", font]
    for item in mvg:
        cmd += ["-draw", "fill none " + item]
    cmd += ["-draw", " ".join(text), out]
    subprocess.run(cmd, check=True)
    print("wrote", os.path.normpath(out))


if __name__ == "__main__":
    main()
