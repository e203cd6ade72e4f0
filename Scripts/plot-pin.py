#!/usr/bin/env python3
"""Plots the displacement profile of a pinned region (docs/pin.png), next to
the hemisphere bulge of an unpinned one. Left: the profile along the
region's middle line, from the pinned side (0) to the opposite side (1), as
a fraction of the peak M. Right: the pinned profile over a whole region (a
rectangle 1 wide and 2 tall with pin = "bottom", its Bezier boundary drawn),
darker where the content moves more.

The formulas are those of docs/API.md ("Pins"): with rho = d/R and
sigma = ((p - C).a)/R (a the unit axis from the pinned side's midpoint to
the opposite one's),
    pinned:     m = M (1 - rho^2) ((1 + sigma)/2)^3 / 0.32768
    hemisphere: m = R (cos(theta acos(M/R) / (pi/2)) - cos theta), theta = acos(rho)
(M = 0.08 of the shorter side, here R = 0.5 along the middle line).

Needs python3 and ImageMagick's `convert` (no Python packages).
Usage: Scripts/plot-pin.py [OUT.png]   (default docs/pin.png)
"""
import math
import os
import subprocess
import sys
import tempfile


def pinned(rho, sigma):
    h = (1 + max(-1.0, min(1.0, sigma))) / 2
    return max(0.0, (1 - rho * rho) * h ** 3 / 0.32768)


def hemisphere(rho, m_over_r=0.16):
    theta_c = math.acos(m_over_r)
    theta = math.acos(max(0.0, min(1.0, rho)))
    return max(0.0, (math.cos(theta * theta_c / (math.pi / 2)) - math.cos(theta)) / m_over_r)


def boundary_distance(c, u, curves):
    """R: the distance from c along unit u to the nearest crossing of the
    quadratic Bezier curves (the ray-curve solve of the renderers)."""
    best = math.inf
    for p0, p1, p2 in curves:
        a = (p0[0] - 2 * p1[0] + p2[0], p0[1] - 2 * p1[1] + p2[1])
        b = (2 * (p1[0] - p0[0]), 2 * (p1[1] - p0[1]))
        cc = (p0[0] - c[0], p0[1] - c[1])
        cross = lambda v: v[0] * u[1] - v[1] * u[0]
        qa, qb, qc = cross(a), cross(b), cross(cc)
        roots = []
        if abs(qa) < 1e-12:
            if qb != 0:
                roots.append(-qc / qb)
        else:
            disc = qb * qb - 4 * qa * qc
            if disc >= 0:
                s = math.sqrt(disc)
                roots += [(-qb + s) / (2 * qa), (-qb - s) / (2 * qa)]
        for t in roots:
            if -1e-9 <= t <= 1 + 1e-9:
                v = (a[0] * t * t + b[0] * t + cc[0], a[1] * t * t + b[1] * t + cc[1])
                along = v[0] * u[0] + v[1] * u[1]
                if 0 < along < best:
                    best = along
    return best


def segments(points):
    return " ".join("line %.2f,%.2f %.2f,%.2f" % (a[0], a[1], b[0], b[1]) for a, b in zip(points, points[1:]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "pin.png")
    width, height = 960, 420
    font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    # Left panel: the middle line.
    left, top, pw, ph = 70, 50, 520, 310

    def px(f, v):
        return left + pw * f, top + ph * (1.35 - v) / 1.35

    mvg = []
    for v in (0.25, 0.5, 0.75, 1.0):
        (x0, y), (x1, _) = px(0, v), px(1, v)
        mvg.append(f"stroke #cccccc stroke-width 1 line {x0},{y} {x1},{y}")
    for f in (0.2, 0.4, 0.6, 0.8, 1.0):
        (x, y0), (_, y1) = px(f, 1.35), px(f, 0)
        mvg.append(f"stroke #cccccc stroke-width 1 line {x},{y0} {x},{y1}")
    (x0, y), (x1, _) = px(0, 0), px(1, 0)
    mvg.append(f"stroke #444444 stroke-width 1.5 line {x0},{y} {x1},{y}")
    (x, y0), (_, y1) = px(0, 1.35), px(0, 0)
    mvg.append(f"stroke #444444 stroke-width 1.5 line {x},{y0} {x},{y1}")
    (x, y0), (_, y1) = px(0.6, 1.35), px(0.6, 0)
    mvg.append(f"stroke #e6550d stroke-width 1 stroke-dasharray 5,4 line {x},{y0} {x},{y1}")
    n = 400
    fs = [i / n for i in range(n + 1)]
    # Along the middle line: sigma = 2f - 1, rho = |sigma|.
    mvg.append("stroke #999999 stroke-width 2.2 " + segments([px(f, hemisphere(abs(2 * f - 1))) for f in fs]))
    mvg.append("stroke #08519c stroke-width 2.6 " + segments([px(f, pinned(abs(2 * f - 1), 2 * f - 1)) for f in fs]))
    text = ["fill #222222 stroke none font-size 15"]
    for f in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        x, y = px(f, 0)
        text.append(f"text {x - 8},{y + 20} '{f:g}'")
    for v in (0.5, 1.0):
        x, y = px(0, v)
        text.append(f"text {x - 34},{y + 5} '{v:g} M'")
    text.append(f"text {left + 60},{top + ph + 42} 'middle line: pinned side (0) → opposite side (1)'")
    text.append(f"text {left},{28} 'displacement m along the middle line'")
    text.append(f"fill #08519c text {left + 10},{top + 20} 'pinned: 0 at the root, peak M at 0.8 (≥ 0.6 for any center)'")
    text.append(f"fill #777777 text {left + 10},{top + 40} 'unpinned: the hemisphere bulge, peak M at the center'")

    # Right panel: the pinned profile over a rectangle region 1 × 2, pin = "bottom".
    rw, rh = 150, 300
    ox, oy = 700, 60
    lt, rt, rb, lb = (0, 0), (1, 0), (1, 2), (0, 2)
    mid = lambda a, b: ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    ml, mt, mr, mb = mid(lt, lb), mid(lt, rt), mid(rt, rb), mid(rb, lb)
    curves = [(ml, lt, mt), (mt, rt, mr), (mr, rb, mb), (mb, lb, ml)]
    c = (0.5, 1.0)
    axis = (0.0, -1.0)
    rows = []
    for j in range(rh):
        row = []
        for i in range(rw):
            p = ((i + 0.5) / rw, 2 * (j + 0.5) / rh)
            v = (p[0] - c[0], p[1] - c[1])
            d = math.hypot(*v)
            m = 0.0
            if d == 0:
                m = pinned(0, 0)
            else:
                r = boundary_distance(c, (v[0] / d, v[1] / d), curves)
                if d <= r:
                    m = pinned(d / r, (v[0] * axis[0] + v[1] * axis[1]) / r)
            g = int(255 - 200 * min(m, 1.0))
            row.append((g, g, 255) if m > 0 else (255, 255, 255))
        rows.append(row)
    with tempfile.NamedTemporaryFile(suffix=".ppm", delete=False) as f:
        f.write(b"P6\n%d %d\n255\n" % (rw, rh))
        for row in rows:
            f.write(bytes(v for px_ in row for v in px_))
        heat = f.name
    def bz(q, t):
        return tuple((1 - t) ** 2 * q[0][k] + 2 * t * (1 - t) * q[1][k] + t * t * q[2][k] for k in range(2))
    outline = []
    for q in curves:
        outline += [(ox + rw * bz(q, t / 40)[0], oy + rh / 2 * bz(q, t / 40)[1]) for t in range(41)]
    mvg.append("stroke #333333 stroke-width 1.5 " + segments(outline))
    mvg.append(f"stroke #e6550d stroke-width 4 line {ox + 20},{oy + rh} {ox + rw - 20},{oy + rh}")
    peak_y = oy + rh / 2 * (1 - 0.6)
    mvg.append(f"stroke #08519c stroke-width 1 stroke-dasharray 4,3 line {ox - 10},{peak_y} {ox + rw + 10},{peak_y}")
    text.append(f"fill #222222 text {ox - 40},{28} 'the pinned profile over a region'")
    text.append(f"fill #e6550d text {ox - 10},{oy + rh + 24} 'pin = \"bottom\" (the root)'")
    text.append(f"fill #08519c text {ox + rw + 14},{peak_y + 5} 'peak M'")

    cmd = ["convert", "-size", f"{width}x{height}", "xc:white", "-font", font,
           heat, "-geometry", f"+{ox}+{oy}", "-composite"]
    for item in mvg:
        cmd += ["-draw", "fill none " + item]
    cmd += ["-draw", " ".join(text), out]
    subprocess.run(cmd, check=True)
    os.unlink(heat)
    print("wrote", os.path.normpath(out))


if __name__ == "__main__":
    main()
