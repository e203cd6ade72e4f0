#!/usr/bin/env python3
"""Mean PSNR (dB, RGB) of the frames of an animated GIF against PNG frames.

usage: Scripts/psnr.py OUT.gif PNG_DIR      (PNG_DIR/frame_00000.png, ...)

ffmpeg decodes and composites the GIF, one output frame per GIF image (no
frames dropped or repeated for timing), and reads the PNG frames. Both are
compared on RGB after making pixels with alpha < 128 black (GIF transparency
is binary). Prints the mean of the per-frame PSNRs (each capped at
99 dB); fails when the frame counts differ. Needs numpy.
"""
import glob
import subprocess
import sys

import numpy as np


def decode(path_args, size):
    w, h = size
    for sync in (["-fps_mode", "passthrough"], ["-vsync", "passthrough"]):
        run = subprocess.run(["ffmpeg", "-v", "error"] + path_args + sync +
                             ["-f", "rawvideo", "-pix_fmt", "rgba", "-"], capture_output=True)
        if run.returncode == 0:
            return np.frombuffer(run.stdout, np.uint8).reshape(-1, h, w, 4)
    sys.exit(f"psnr.py: ffmpeg could not decode {path_args[-1]}: {run.stderr.decode(errors='replace')}")


def probe_size(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height", "-of", "csv=p=0", path],
                         capture_output=True, text=True, check=True).stdout
    w, h = out.strip().split(",")[:2]
    return int(w), int(h)


def flat(a):
    return np.where(a[..., 3:4] >= 128, a[..., :3].astype(np.float64), 0.0)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gif, folder = sys.argv[1], sys.argv[2]
    pngs = sorted(glob.glob(folder + "/frame_*.png"))
    if not pngs:
        sys.exit(f"psnr.py: no frame_*.png in {folder}")
    size = probe_size(pngs[0])
    ref = decode(["-i", folder + "/frame_%05d.png"], size)
    out = decode(["-i", gif], size)
    if len(ref) != len(pngs) or len(out) != len(pngs):
        sys.exit(f"psnr.py: {len(out)} GIF frames, {len(ref)} PNG frames decoded, {len(pngs)} files")
    scores = []
    for r, o in zip(ref, out):
        mse = np.mean((flat(r) - flat(o)) ** 2)
        scores.append(99.0 if mse == 0 else min(99.0, 10 * np.log10(255.0 ** 2 / mse)))
    print(f"{np.mean(scores):.2f}")


if __name__ == "__main__":
    main()
