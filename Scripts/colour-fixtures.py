#!/usr/bin/env python3
"""Colour-managed test images and what Pillow's ImageCms (Little CMS) makes of them.

Usage: colour-fixtures.py OUTDIR [--big WIDTHxHEIGHT]

Writes into OUTDIR, for each case NAME, the input file (NAME.jpg or
NAME.png) and NAME.ref.png: Pillow's conversion of the decoded pixels to
sRGB (ImageCms.profileToProfile, perceptual intent), as plain RGB with no
colour chunk. The profiles are written here, byte by byte, from their
published primaries, white points and curves (Adobe RGB (1998), Display
P3, ProPhoto (ROMM) RGB), and a small table-based CMYK profile, so that the
tests need no profile package. Prints the case names, one a line.

With --big, writes only photo-sized JPEGs for timing (Scripts/bench-colour.sh):
big-untagged.jpg, big-srgb.jpg, big-adobe-rgb.jpg, big-cmyk-untagged.jpg and
big-cmyk.jpg, the same picture each.

Needs python3-pil and python3-numpy.
"""
import io
import struct
import sys
import zlib

import numpy as np
from PIL import Image, ImageChops, ImageCms

D50 = (0.9642, 1.0, 0.8249)
BRADFORD = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])


def s15(v):
    return struct.pack(">i", int(round(v * 65536)))


def xyz_of(x, y):
    return np.array([x / y, 1.0, (1 - x - y) / y])


def adapt_to_d50(white_xyz):
    src = BRADFORD @ white_xyz
    dst = BRADFORD @ np.array(D50)
    return np.linalg.inv(BRADFORD) @ np.diag(dst / src) @ BRADFORD


def rgb_to_xyz_d50(white, red, green, blue):
    """The D50-adapted colorants (columns) of an RGB space, as an ICC profile stores them."""
    w = xyz_of(*white)
    p = np.column_stack([xyz_of(*red), xyz_of(*green), xyz_of(*blue)])
    scale = np.linalg.solve(p, w)
    return adapt_to_d50(w) @ (p * scale)


def tag_desc(text):
    a = text.encode("ascii") + b"\0"
    return b"desc" + bytes(4) + struct.pack(">I", len(a)) + a + bytes(4) + bytes(4) + bytes(2) + bytes(1) + bytes(67)


def tag_xyz(v):
    return b"XYZ " + bytes(4) + b"".join(s15(c) for c in v)


def tag_curve(gamma=None, table=None):
    if table is None:
        return b"curv" + bytes(4) + struct.pack(">I", 1) + struct.pack(">H", int(round(gamma * 256)))
    return b"curv" + bytes(4) + struct.pack(">I", len(table)) + b"".join(struct.pack(">H", int(round(t * 65535))) for t in table)


def profile(device_class, space, pcs, tags):
    """An ICC v2.1 profile from (signature, data) pairs."""
    header_size, count = 128, len(tags)
    offset = header_size + 4 + 12 * count
    table, body = b"", b""
    for sig, data in tags:
        table += sig + struct.pack(">II", offset + len(body), len(data))
        body += data + bytes((-len(data)) % 4)
    size = offset + len(body)
    header = (struct.pack(">I", size) + b"lcms" + struct.pack(">I", 0x02100000) + device_class + space + pcs
              + bytes(12) + b"acsp" + bytes(4) + bytes(4) + bytes(4) + bytes(4) + bytes(8) + bytes(4)
              + b"".join(s15(c) for c in D50) + bytes(4) + bytes(16) + bytes(28))
    assert len(header) == 128
    return header + struct.pack(">I", count) + table + body


def srgb_curve(n=4096):
    v = np.linspace(0, 1, n)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def rgb_profile(name, white, red, green, blue, gamma=None, table=None):
    m = rgb_to_xyz_d50(white, red, green, blue)
    trc = tag_curve(gamma=gamma, table=table)
    return profile(b"mntr", b"RGB ", b"XYZ ", [
        (b"desc", tag_desc(name)), (b"wtpt", tag_xyz(D50)),
        (b"rXYZ", tag_xyz(m[:, 0])), (b"gXYZ", tag_xyz(m[:, 1])), (b"bXYZ", tag_xyz(m[:, 2])),
        (b"rTRC", trc), (b"gTRC", trc), (b"bTRC", trc),
    ])


D65 = (0.3127, 0.3290)
ADOBE_RGB = rgb_profile("Adobe RGB (1998) (test)", D65, (0.64, 0.33), (0.21, 0.71), (0.15, 0.06), gamma=563 / 256)
DISPLAY_P3 = rgb_profile("Display P3 (test)", D65, (0.680, 0.320), (0.265, 0.690), (0.150, 0.060), table=srgb_curve())
PROPHOTO = rgb_profile("ProPhoto RGB (test)", (0.3457, 0.3585), (0.7347, 0.2653), (0.1596, 0.8404), (0.0366, 0.0001), gamma=1.8)
# Over 64 KB (three 16384-entry curves): a JPEG holds it in two APP2 segments.
WIDE_SPLIT = rgb_profile("Wide gamut, split (test)", D65, (0.7, 0.3), (0.17, 0.78), (0.13, 0.04),
                         table=np.linspace(0, 1, 16384) ** 2.4)


def lab_d50(rgb):
    """sRGB values (…, 3) in 0..1 to CIE Lab (D50)."""
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = rgb_to_xyz_d50(D65, (0.64, 0.33), (0.30, 0.60), (0.15, 0.06))
    xyz = lin @ m.T / np.array(D50)
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def cmyk_profile(grid=9):
    """A table-based CMYK printer profile (A2B0: CMYK to Lab), a plain ink model with dot gain."""
    g = np.linspace(0, 1, grid)
    c, m, y, k = np.meshgrid(g, g, g, g, indexing="ij")  # the first channel varies slowest
    ink = lambda v: v ** 0.8
    rgb = np.stack([(1 - ink(c)) * (1 - ink(k)), (1 - 0.9 * ink(m)) * (1 - ink(k)), (1 - 0.95 * ink(y)) * (1 - ink(k))], axis=-1)
    lab = lab_d50(np.clip(rgb, 0, 1)).reshape(-1, 3)
    enc = np.stack([lab[:, 0] / 100 * 0xFF00, (lab[:, 1] + 128) * 256, (lab[:, 2] + 128) * 256], axis=-1)
    clut = np.clip(np.round(enc), 0, 65535).astype(">u2").tobytes()
    identity = b"".join(s15(v) for v in (1, 0, 0, 0, 1, 0, 0, 0, 1))
    ramp = struct.pack(">HH", 0, 65535)
    lut = (b"mft2" + bytes(4) + bytes([4, 3, grid, 0]) + identity + struct.pack(">HH", 2, 2)
           + ramp * 4 + clut + ramp * 3)
    return profile(b"prtr", b"CMYK", b"Lab ", [
        (b"desc", tag_desc("Test CMYK (table)")), (b"wtpt", tag_xyz(D50)), (b"A2B0", lut), (b"A2B1", lut),
    ])


SRGB = ImageCms.createProfile("sRGB")


def photo(w=96, h=64):
    """Saturated, smooth content: ramps of hue and lightness, no JPEG-hostile edges."""
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    r = 0.5 + 0.5 * np.sin(xx / w * 6.0 + 0.3)
    g = 0.5 + 0.5 * np.sin(yy / h * 5.0 + 1.7 + xx / w)
    b = 0.5 + 0.5 * np.cos((xx + yy) / (w + h) * 7.0)
    return np.round(np.stack([r, g, b], axis=-1) * 255).astype(np.uint8)


def converted(im, prof):
    return ImageCms.profileToProfile(im, ImageCms.ImageCmsProfile(io.BytesIO(prof)), SRGB,
                                     renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")


def save_ref(im, out, name):
    im.convert("RGB").save(f"{out}/{name}.ref.png")


def jpeg_case(out, name, prof):
    Image.fromarray(photo()).save(f"{out}/{name}.jpg", quality=95, subsampling=0, icc_profile=prof)
    save_ref(converted(Image.open(f"{out}/{name}.jpg").convert("RGB"), prof), out, name)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def with_chunks(png, chunks):
    """`png` with `chunks` right after IHDR."""
    return png[:33] + b"".join(chunks) + png[33:]


def big(out, w, h):
    """Photo-sized JPEGs (noise as a camera's, so that they decode like one):
    untagged, sRGB-tagged, Adobe RGB; CMYK with and without a profile."""
    rng = np.random.default_rng(1)
    pixels = np.clip(photo(w, h) + rng.normal(0, 6, (h, w, 3)), 0, 255).astype(np.uint8)
    im = Image.fromarray(pixels)
    im.save(f"{out}/big-untagged.jpg", quality=90)
    im.save(f"{out}/big-srgb.jpg", quality=90, icc_profile=ImageCms.ImageCmsProfile(SRGB).tobytes())
    im.save(f"{out}/big-adobe-rgb.jpg", quality=90, icc_profile=ADOBE_RGB)
    rgb = pixels / 255.0
    k = (1 - rgb.max(axis=-1)) * 0.7
    cmy = (1 - rgb - k[..., None]) / (1 - k[..., None])
    cmyk = Image.fromarray(np.round(np.dstack([cmy, k]) * 255).astype(np.uint8), "CMYK")
    cmyk.save(f"{out}/big-cmyk-untagged.jpg", quality=90)
    cmyk.save(f"{out}/big-cmyk.jpg", quality=90, icc_profile=cmyk_profile())


def main():
    out = sys.argv[1]
    if len(sys.argv) > 3 and sys.argv[2] == "--big":
        big(out, *(int(v) for v in sys.argv[3].split("x")))
        return
    cases = []

    for name, prof in [("adobe-rgb", ADOBE_RGB), ("display-p3", DISPLAY_P3), ("prophoto", PROPHOTO), ("split-app2", WIDE_SPLIT)]:
        jpeg_case(out, name, prof)
        cases.append(name)

    # PNG iCCP, with alpha (the reference is RGB: alpha is checked against the source).
    rgba = np.dstack([photo(), (np.arange(96 * 64) % 256).reshape(64, 96).astype(np.uint8)])
    src = Image.fromarray(rgba, "RGBA")
    src.save(f"{out}/iccp.png", icc_profile=DISPLAY_P3)
    Image.fromarray(rgba[..., 3]).save(f"{out}/iccp.alpha.png")
    save_ref(converted(src.convert("RGB"), DISPLAY_P3), out, "iccp")
    cases.append("iccp")

    # PNG gAMA (1/1.8) and cHRM (Adobe RGB's primaries): the same as this profile.
    gamma = 55556
    chrm = [0.3127, 0.3290, 0.64, 0.33, 0.21, 0.71, 0.15, 0.06]
    plain = io.BytesIO()
    Image.fromarray(photo()).save(plain, "PNG")
    chunks = [png_chunk(b"gAMA", struct.pack(">I", gamma)),
              png_chunk(b"cHRM", b"".join(struct.pack(">I", round(v * 100000)) for v in chrm))]
    with open(f"{out}/gama-chrm.png", "wb") as f:
        f.write(with_chunks(plain.getvalue(), chunks))
    equivalent = rgb_profile("gAMA/cHRM", (chrm[0], chrm[1]), (chrm[2], chrm[3]), (chrm[4], chrm[5]), (chrm[6], chrm[7]),
                             table=np.linspace(0, 1, 4096) ** (100000 / gamma))
    save_ref(converted(Image.fromarray(photo()), equivalent), out, "gama-chrm")
    cases.append("gama-chrm")

    # A grey PNG with gAMA 1.0 (linear light): the same as a grey profile with that curve.
    grey = Image.fromarray(photo()[..., 1])
    plain_grey = io.BytesIO()
    grey.save(plain_grey, "PNG")
    with open(f"{out}/grey-gama.png", "wb") as f:
        f.write(with_chunks(plain_grey.getvalue(), [png_chunk(b"gAMA", struct.pack(">I", 100000))]))
    linear_grey = profile(b"mntr", b"GRAY", b"XYZ ", [
        (b"desc", tag_desc("linear grey (test)")), (b"wtpt", tag_xyz(D50)), (b"kTRC", tag_curve(gamma=1.0)),
    ])
    save_ref(converted(grey, linear_grey), out, "grey-gama")
    cases.append("grey-gama")

    # CMYK JPEGs through a CMYK profile. Pillow writes Adobe's inverted CMYK
    # with an APP14 marker, and reads every CMYK JPEG as inverted.
    rgb = photo() / 255.0
    k = (1 - rgb.max(axis=-1)) * 0.7
    cmy = (1 - rgb - k[..., None]) / (1 - k[..., None])
    cmyk = Image.fromarray(np.round(np.dstack([cmy, k]) * 255).astype(np.uint8), "CMYK")
    cmyk_prof = cmyk_profile()
    cmyk.save(f"{out}/cmyk-adobe.jpg", quality=95, icc_profile=cmyk_prof)
    save_ref(converted(Image.open(f"{out}/cmyk-adobe.jpg"), cmyk_prof), out, "cmyk-adobe")
    cases.append("cmyk-adobe")
    # Plain CMYK (0 is no ink, no APP14): give Pillow inverted values (it
    # inverts them again on saving), then take its APP14 marker out.
    buf = io.BytesIO()
    ImageChops.invert(cmyk).save(buf, "JPEG", quality=95, icc_profile=cmyk_prof)
    data = buf.getvalue()
    at = data.find(b"\xff\xee\x00\x0eAdobe")
    assert at > 0
    length = struct.unpack(">H", data[at + 2:at + 4])[0]
    data = data[:at] + data[at + 2 + length:]
    with open(f"{out}/cmyk-plain.jpg", "wb") as f:
        f.write(data)
    decoded = ImageChops.invert(Image.open(io.BytesIO(data)))  # Pillow took it as inverted
    save_ref(converted(decoded, cmyk_prof), out, "cmyk-plain")
    cases.append("cmyk-plain")

    # Profiles that cannot be used: the pixels as stored (the reference is the untagged decode).
    Image.fromarray(photo()).save(f"{out}/untagged.jpg", quality=95, subsampling=0)
    Image.fromarray(photo()).save(f"{out}/broken.jpg", quality=95, subsampling=0, icc_profile=b"not a profile " * 40)
    Image.fromarray(photo()).save(f"{out}/srgb.jpg", quality=95, subsampling=0,
                                  icc_profile=ImageCms.ImageCmsProfile(SRGB).tobytes())
    # Opens, but cannot convert: colorants without curves.
    m = rgb_to_xyz_d50(D65, (0.64, 0.33), (0.21, 0.71), (0.15, 0.06))
    no_curves = profile(b"mntr", b"RGB ", b"XYZ ", [
        (b"desc", tag_desc("no curves (test)")), (b"wtpt", tag_xyz(D50)),
        (b"rXYZ", tag_xyz(m[:, 0])), (b"gXYZ", tag_xyz(m[:, 1])), (b"bXYZ", tag_xyz(m[:, 2])),
    ])
    Image.fromarray(photo()).save(f"{out}/no-curves.jpg", quality=95, subsampling=0, icc_profile=no_curves)
    broken_png = with_chunks(plain.getvalue(), [png_chunk(b"iCCP", b"icc\0\0" + b"not zlib data")])
    with open(f"{out}/broken.png", "wb") as f:
        f.write(broken_png)
    Image.fromarray(photo()).save(f"{out}/untagged.png")
    cases += ["untagged", "broken", "srgb"]
    print("\n".join(cases))


if __name__ == "__main__":
    main()
