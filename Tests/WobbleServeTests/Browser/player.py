"""Drives the web player (<wobble-view>, a page `wobble-run -o clip.html`
wrote) in Debian's chromium (headless, SwiftShader) with Playwright, for
WebPlayerTests and Scripts/bench-web.sh.

Usage: player.py URL OUT_DIR JOB_JSON
JOB_JSON: {"options": {...}, "steps": [...]}. Options: "reduced_motion": true
(the context prefers reduced motion), "no_webgl2": true (chromium without
WebGL2), "offline": true (every request but the page's own file aborted;
result["requests"] lists every URL asked for, result["aborted"] those refused), "serve": true (URL is a folder: it is served
over HTTP on 127.0.0.1 and its index.html opened, as a site would).
Steps, each a list: ["open"] (or ["open", URL]: another page, in the same
browser, so one launch serves several pages), ["wait_ready"], ["pause"], ["time", seconds]
(sets currentTime), ["shot", name] (the canvas's pixels as OUT_DIR/name.png),
["poke", x, y, dx, dy] (image pixels; result["poke"]: the region hit),
["drag", x0, y0, x1, y1] (the mouse, image pixels), ["motion", ax, ay] (a
devicemotion event, m/s²), ["wait_img"] (the still picture loaded), ["eval", name, js], ["sleep", seconds],
["fps", name, seconds] (frames drawn per second while playing, and the
browser's CPU ms per frame), ["first_frame", name] (ms from navigation to the
first frame drawn).
Writes OUT_DIR/result.json: {"name": value, ...}; a failing step writes
{"error": "..."} and exits 1.
"""
import base64
import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

# No __pycache__ beside drive.py: the folder is inside a SwiftPM target,
# which would warn of an unhandled file on the next build.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(__file__))
from drive import CHROMIUM, browser_cpu_ms, run_steps  # noqa: E402

VIEW = "document.querySelector('wobble-view')"


def main():
    url, out, job = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    opts, steps = job.get("options", {}), job["steps"]
    result = {}
    if opts.get("serve"):
        url = serve(url) + "/index.html"
    args = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist", "--no-sandbox"]
    if opts.get("no_webgl2"):
        args.append("--disable-webgl2")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, device_scale_factor=1,
                                      reduced_motion="reduce" if opts.get("reduced_motion") else "no-preference")
        page = context.new_page()
        page.on("console", lambda m: result.setdefault("console", []).append(m.text))
        page.on("pageerror", lambda e: result.setdefault("pageerrors", []).append(str(e)))
        page.on("request", lambda r: result.setdefault("requests", []).append(r.url[:80]))
        if opts.get("offline"):
            def refuse(route):
                result.setdefault("aborted", []).append(route.request.url[:80])
                route.abort()
            context.route(lambda u: u != url, refuse)
        run_steps(browser, steps, lambda step: run(page, url, out, step, result), out, result)


def serve(folder):
    """Serves `folder` over HTTP on a free port (a thread); its base URL."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def to_page(page, x, y):
    """Image pixels to page coordinates (the canvas in the element's shadow root)."""
    r = page.evaluate(f"(() => {{ const c = {VIEW}.renderer.canvas, b = c.getBoundingClientRect();"
                      " return [b.left, b.top, b.width / c.width, b.height / c.height]; })()")
    return r[0] + x * r[2], r[1] + y * r[3]


def run(page, url, out, step, result):
    kind = step[0]
    if kind == "open":
        page.goto(step[1] if len(step) > 1 else url)
    elif kind == "wait_ready":
        page.wait_for_function(f"{VIEW} && {VIEW}.ready", timeout=60000)
        result["still"] = page.evaluate(f"{VIEW}.still")
        result["paused_when_ready"] = page.evaluate(f"{VIEW}.paused")
    elif kind == "pause":
        page.evaluate(f"{VIEW}.pause()")
    elif kind == "time":
        page.evaluate(f"{VIEW}.currentTime = {float(step[1])}")
    elif kind == "shot":
        data = page.evaluate(f"{VIEW}.renderer.canvas.toDataURL('image/png')")
        with open(os.path.join(out, step[1] + ".png"), "wb") as f:
            f.write(base64.b64decode(data.split(",", 1)[1]))
    elif kind == "poke":
        result["poke"] = page.evaluate(f"{VIEW}.poke({step[1]}, {step[2]}, {step[3]}, {step[4]})")
    elif kind == "drag":
        x0, y0 = to_page(page, step[1], step[2])
        x1, y1 = to_page(page, step[3], step[4])
        page.mouse.move(x0, y0)
        page.mouse.down()
        page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2)
        page.mouse.move(x1, y1)
        page.mouse.up()
        result["drag"] = page.evaluate(f"{VIEW}.lastPoke ?? null")
    elif kind == "motion":
        page.evaluate(f"window.dispatchEvent(new DeviceMotionEvent('devicemotion', {{acceleration: {{x: {step[1]}, y: {step[2]}, z: 0}},"
                      f" accelerationIncludingGravity: {{x: {step[1]}, y: {step[2]}, z: 9.8}}, interval: 16}}))")
        result["shake"] = page.evaluate(f"{VIEW}.lastShake ?? null")
    elif kind == "wait_img":
        page.wait_for_function(f"{VIEW}.shadowRoot.querySelector('img') && {VIEW}.shadowRoot.querySelector('img').complete", timeout=30000)
    elif kind == "eval":
        result[step[1]] = page.evaluate(step[2])
    elif kind == "sleep":
        time.sleep(float(step[1]))
    elif kind == "fps":
        page.evaluate(f"(() => {{ const v = {VIEW}; v.frames = 0; const d = v._draw.bind(v);"
                      " v._draw = (t) => { v.frames++; d(t); }; })()")
        cpu0, t0 = browser_cpu_ms(), time.monotonic()
        time.sleep(float(step[2]))
        n = page.evaluate(f"{VIEW}.frames")
        cpu, wall = browser_cpu_ms() - cpu0, time.monotonic() - t0
        result[step[1]] = {"fps": n / wall, "cpu_ms_per_frame": cpu / max(n, 1)}
    elif kind == "first_frame":
        t0 = time.monotonic()
        page.goto(url)
        page.wait_for_function(f"{VIEW} && {VIEW}.frameTime != null", timeout=60000, polling=5)
        result[step[1]] = (time.monotonic() - t0) * 1000
    else:
        raise ValueError(f"unknown step {step}")


if __name__ == "__main__":
    main()
