"""Decodes an APNG in three decoders and compares every frame with the PNG
frames it was made from (APNGDecoderTests).

    python decode-apng.py ANIM.apng FRAMES_DIR

Pillow (the python running this), ffmpeg (on PATH) and Chromium's WebCodecs
`ImageDecoder` (Debian's chromium, WOBBLE_CHROMIUM, driven by Playwright;
no colour conversion). Chromium keeps decoded pixels premultiplied by
alpha (the `ImageDecoder` hands out their unpremultiplied values even with
`premultiplyAlpha: "none"`: a partly transparent pixel comes back with
fewer levels), so its frames are compared premultiplied, exactly: the
most its decoder holds. Prints one JSON
object: the frame count of the reference and of each decoder, the frames
each decoder gets wrong (index and largest difference in levels; RGB under
alpha 0 does not count), and the dispose ops of the file's `fcTL` chunks.
"""
import base64, glob, json, os, struct, subprocess, sys, tempfile

from PIL import Image

anim, frames = sys.argv[1], sys.argv[2]
data = open(anim, "rb").read()
ref = [Image.open(p).convert("RGBA") for p in sorted(glob.glob(os.path.join(frames, "*.png")))]
width, height = ref[0].size


def dispose_ops(b):
    ops, i = [], 8
    while i + 8 <= len(b):
        n = struct.unpack(">I", b[i:i + 4])[0]
        if b[i + 4:i + 8] == b"fcTL":
            ops.append(b[i + 8 + 24])
        i += 12 + n
    return ops


def worst(got, want):
    """The largest channel difference (0: equal); RGB under alpha 0 does not count."""
    if got == want:
        return 0
    m = 0
    for a, b in zip(pixels(got), pixels(want)):
        if a[3] == 0 and b[3] == 0:
            continue
        m = max(m, abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2]), abs(a[3] - b[3]))
    return m


def premultiplied(raw):
    """RGBA bytes with RGB multiplied by alpha (rounded), alpha kept."""
    out = bytearray(raw)
    for i in range(0, len(out), 4):
        a = out[i + 3]
        if a != 255:
            for c in range(3):
                out[i + c] = (out[i + c] * a + 127) // 255
    return bytes(out)


def compare(decoded, premultiply=False):
    bad = []
    for k, (got, want) in enumerate(zip(decoded, ref)):
        want = want.tobytes()
        if premultiply:
            got, want = premultiplied(got), premultiplied(want)
        d = worst(got, want)
        if d:
            bad.append([k, d])
    return bad


def pixels(raw):
    return [tuple(raw[i:i + 4]) for i in range(0, len(raw), 4)]


# Pillow.
im = Image.open(anim)
pillow = []
for n in range(im.n_frames):
    im.seek(n)
    pillow.append(im.convert("RGBA").tobytes())

# ffmpeg.
d = tempfile.mkdtemp()
subprocess.run(["ffmpeg", "-v", "error", "-i", anim, "-f", "image2", "-pix_fmt", "rgba", d + "/%05d.png"], check=True)
ffmpeg = [Image.open(p).convert("RGBA").tobytes() for p in sorted(glob.glob(d + "/*.png"))]

# Chromium's ImageDecoder, on a page of a made-up https origin (a secure
# context) that Playwright answers itself.
from playwright.sync_api import sync_playwright

page_js = """async (b64) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const dec = new ImageDecoder({data: bytes, type: "image/apng", premultiplyAlpha: "none", colorSpaceConversion: "none"});
  await dec.tracks.ready;
  await dec.completed;
  const n = dec.tracks.selectedTrack.frameCount;
  const out = [];
  for (let i = 0; i < n; i++) {
    const {image} = await dec.decode({frameIndex: i});
    const size = image.allocationSize({format: "RGBA"});
    const buf = new Uint8Array(size);
    await image.copyTo(buf, {format: "RGBA"});
    image.close();
    let s = "";
    for (let j = 0; j < buf.length; j += 0x8000) s += String.fromCharCode.apply(null, buf.subarray(j, j + 0x8000));
    out.push(btoa(s));
  }
  return out;
}"""
chromium = []
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=os.environ.get("WOBBLE_CHROMIUM", "/usr/bin/chromium"), headless=True,
                                args=["--no-sandbox"])
    page = browser.new_page()
    page.route("https://apng.test/", lambda r: r.fulfill(status=200, content_type="text/html", body="<!doctype html><title>apng</title>"))
    page.goto("https://apng.test/")
    for f in page.evaluate(page_js, base64.b64encode(data).decode()):
        raw = base64.b64decode(f)
        chromium.append(raw[:width * height * 4])
    browser.close()

print(json.dumps({"reference": len(ref), "frames": {"pillow": len(pillow), "ffmpeg": len(ffmpeg), "chromium": len(chromium)},
                  "wrong": {"pillow": compare(pillow), "ffmpeg": compare(ffmpeg), "chromium": compare(chromium, premultiply=True)},
                  "dispose": sorted(set(dispose_ops(data))), "disposePrevious": dispose_ops(data).count(2),
                  "pillowVersion": __import__("PIL").__version__}))
