#!/usr/bin/python3
"""Compares an animated WebP, APNG or GIF with the PNG frames it was made from.

usage: Scripts/anim-compare.py ANIMATION PNG_DIR FPS

Decodes ANIMATION with Pillow (each frame composited on its canvas, RGBA),
and maps every PNG frame k (PNG_DIR/frame_NNNNN.png, sorted) to the
animation frame showing at its start time round(1000 k / FPS) ms (libwebp
merges identical consecutive frames into one longer frame, so a frame can
cover several PNG frames). Prints one JSON object:

  frames      animation frames
  durations   their durations (ms)
  total       their sum (ms)
  loop        the loop count Pillow reports
  mean_psnr   the mean of the per-frame PSNRs
  min_psnr    the lowest per-frame PSNR (dB, premultiplied RGB and alpha:
              colour counts as much as it shows; 99 when equal)
  exact       every frame equal to its PNG frame (RGBA; RGB ignored where
              alpha is 0)
  alpha_equal every frame's alpha plane equal to its PNG frame's
  mode, width, height

Needs Pillow (Debian: python3-pil).
"""
import glob
import json
import math
import os
import sys

from PIL import Image, ImageChops


def frames_of(path):
    im = Image.open(path)
    out = []
    n = 0
    while True:
        try:
            im.seek(n)
        except EOFError:
            break
        out.append((im.convert("RGBA"), im.info.get("duration") or 0))
        n += 1
    return im, out


def visible_only(img, mask):
    """img with RGBA zeroed where mask is 0."""
    return Image.composite(img, Image.new("RGBA", img.size, (0, 0, 0, 0)), mask)


def compare(got, ref):
    """(psnr, alpha equal, exact) of two RGBA images."""
    ga, ra = got.getchannel("A"), ref.getchannel("A")
    mask = ImageChops.lighter(ga, ra).point(lambda v: 255 if v > 0 else 0)
    g, r = visible_only(got, mask), visible_only(ref, mask)
    # PSNR on premultiplied colour (what is seen over a background) and alpha.
    hist = ImageChops.difference(got.convert("RGBa"), ref.convert("RGBa")).histogram()
    se = sum(hist[band * 256 + v] * v * v for band in range(4) for v in range(256))
    mse = se / (got.size[0] * got.size[1] * 4)
    p = 99.0 if mse == 0 else min(99.0, 10 * math.log10(255 * 255 / mse))
    alpha_equal = ImageChops.difference(ga, ra).getbbox() is None
    exact = ImageChops.difference(g, r).getbbox() is None
    return p, alpha_equal, exact


def main():
    anim, pngdir, fps = sys.argv[1], sys.argv[2], float(sys.argv[3])
    im, frames = frames_of(anim)
    pngs = sorted(glob.glob(os.path.join(pngdir, "*.png")))
    starts = []
    t = 0
    for _, d in frames:
        starts.append(t)
        t += d
    min_psnr, exact, alpha_equal = 99.0, True, True
    psnrs = []
    j = 0
    for k, p in enumerate(pngs):
        ms = round(1000 * k / fps + 1e-9)
        while j + 1 < len(starts) and starts[j + 1] <= ms + 0.5:
            j += 1
        ref = Image.open(p).convert("RGBA")
        got = frames[j][0]
        if got.size != ref.size:
            print(json.dumps({"error": f"frame size {got.size} vs {ref.size}"}))
            return 1
        p, a, e = compare(got, ref)
        min_psnr = min(min_psnr, p)
        psnrs.append(p)
        alpha_equal = alpha_equal and a
        exact = exact and e
    print(json.dumps({
        "frames": len(frames), "durations": [d for _, d in frames], "total": t,
        "loop": im.info.get("loop"), "min_psnr": round(min_psnr, 2),
        "mean_psnr": round(sum(psnrs) / max(len(psnrs), 1), 3), "exact": exact,
        "alpha_equal": alpha_equal, "mode": im.mode, "width": im.size[0], "height": im.size[1],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
