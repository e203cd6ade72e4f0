"""Drives the browser studio in Debian's chromium (headless, SwiftShader)
with Playwright, for BrowserStudioTests and Scripts/bench-browser.sh.

Usage: drive.py URL OUT_DIR STEPS_JSON
STEPS_JSON is a list of steps, each a list: ["wait_ready"], ["seek", k],
["hide_handles"], ["screenshot", name], ["poke", x0, y0, x1, y1] (image
pixels, waits for the answer), ["drag", x0, y0, x1, y1], ["key", "Control+s"],
["wait_saved"], ["play_fps", seconds], ["floor_fps", seconds] (the page drawing
empty frames: a clear), ["wait_generation_above", g],
["metrics", name], ["status", name] (HTTP status of URL, as the page gets it),
["click", x, y] (image pixels), ["fill", input_name, value] (an inspector
field, then Enter), ["wait", js] (until true), ["eval", name, js],
["click_timeline", js] (at the seconds js gives),
["drag_timeline", js, seconds] (from js's seconds to those), ["viewport", w, h], ["page_shot", name] (the whole page),
["drag_js", js] (a drag from js's [x0, y0, x1, y1]), ["wheel", x, y, delta_y] (at image point x, y; waits for the view to change),
["pan", "middle" | "space", x, y, dx, dy] (a drag from image point x, y by dx, dy page pixels),
["download_click", selector, name] (clicks, saves the download it starts
as OUT_DIR/name; result[name]: its size in bytes),
["key_down", key], ["key_up", key] (a modifier held: "Shift", "Alt"),
["mouse_down", x, y], ["mouse_move", x, y] (image pixels; one move),
["mouse_up"] (the left button, where the mouse is).
Writes OUT_DIR/result.json: {"name": value, ...}; a step that fails writes
{"error": "..."} and exits 1.
"""
import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("WOBBLE_CHROMIUM", "/usr/bin/chromium")


def main():
    url, out, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    result = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist", "--no-sandbox"],
        )
        # bypass_csp: Playwright's own wait_for_function evaluates strings,
        # which the page's policy (no eval) refuses; the page is unchanged.
        context = browser.new_context(viewport={"width": 1600, "height": 1000}, device_scale_factor=1, bypass_csp=True)
        page = context.new_page()
        page.on("console", lambda m: result.setdefault("console", []).append(m.text))
        page.on("pageerror", lambda e: result.setdefault("pageerrors", []).append(str(e)))
        run_steps(browser, steps, lambda step: run(page, url, out, step, result), out, result)


def run_steps(browser, steps, run_one, out, result):
    """Runs each step with `run_one` (the first that fails ends them: its
    error in `result`), closes `browser`, writes `result` as out/result.json
    and exits: 1 when a step failed, else 0."""
    step = None
    try:
        for step in steps:
            run_one(step)
    except Exception as e:  # noqa: BLE001 - reported to the Swift test
        result["error"] = f"{step}: {e}"
    browser.close()
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f)
    sys.exit(1 if "error" in result else 0)


def browser_cpu_ms():
    """CPU time (user + system, ms) of this process's descendants: the browser's processes."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append((int(d), int(fields[11]) + int(fields[12])))
    total, todo = 0, [os.getpid()]
    while todo:
        for pid, ticks in children.get(todo.pop(), []):
            total += ticks
            todo.append(pid)
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def to_page(page, x, y):
    """Image pixels to page coordinates (the page's own mapping: at any zoom, beside the picture too)."""
    return page.evaluate(f"window.wobble.toPage({float(x)}, {float(y)})")


def run(page, url, out, step, result):
    kind = step[0]
    if kind == "open":
        response = page.goto(url if len(step) < 2 else step[1])
        result["open_status"] = response.status
    elif kind == "status":
        response = page.goto(step[2])
        result[step[1]] = response.status
    elif kind == "wait_ready":
        page.wait_for_function("window.wobble && window.wobble.ready && window.wobble.draws > 0", timeout=30000)
    elif kind == "seek":
        page.evaluate(f"window.wobble.seek({int(step[1])})")
        page.wait_for_function(f"window.wobble.drawn === {int(step[1])}", timeout=10000)
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    elif kind == "hide_handles":
        page.keyboard.press("h")
    elif kind == "screenshot":
        # The canvas's own pixels: its box at whole page pixels, its size.
        box = page.locator("#preview").bounding_box()
        w, h = page.evaluate("[document.getElementById('preview').width, document.getElementById('preview').height]")
        page.screenshot(path=os.path.join(out, step[1] + ".png"),
                        clip={"x": round(box["x"]), "y": round(box["y"]), "width": w, "height": h})
    elif kind == "poke":
        n = page.evaluate("window.wobble.pokeLatency.length")
        x0, y0 = to_page(page, step[1], step[2])
        x1, y1 = to_page(page, step[3], step[4])
        page.mouse.move(x0, y0)
        page.mouse.down()
        page.mouse.move(x1, y1, steps=4)
        page.mouse.up()
        page.wait_for_function(f"window.wobble.pokeLatency.length > {n}", timeout=20000)
    elif kind in ("drag", "drag_js"):
        n = page.evaluate("window.wobble.dragLatency.length")
        a = step[1:5] if kind == "drag" else page.evaluate(step[1])
        x0, y0 = to_page(page, a[0], a[1])
        x1, y1 = to_page(page, a[2], a[3])
        page.mouse.move(x0, y0)
        page.mouse.down()
        page.mouse.move(x1, y1, steps=6)
        page.mouse.up()
        page.wait_for_function(f"window.wobble.dragLatency.length > {n}", timeout=20000)
        time.sleep(0.3)
    elif kind == "key":
        page.keyboard.press(step[1])
    elif kind == "key_down":
        page.keyboard.down(step[1])
    elif kind == "key_up":
        page.keyboard.up(step[1])
    elif kind == "mouse_down":
        x, y = to_page(page, step[1], step[2])
        page.mouse.move(x, y)
        page.mouse.down()
    elif kind == "mouse_move":
        x, y = to_page(page, step[1], step[2])
        page.mouse.move(x, y)
    elif kind == "mouse_up":
        page.mouse.up()
    elif kind == "wheel":
        # The wheel at image point (x, y), deltaY page pixels (-100: a notch away, zooming in).
        x, y = to_page(page, step[1], step[2])
        before = page.evaluate("JSON.stringify(window.wobble.view)")
        page.mouse.move(x, y)
        page.mouse.wheel(0, float(step[3]))
        page.wait_for_function(f"JSON.stringify(window.wobble.view) !== {json.dumps(before)}", timeout=10000)
    elif kind == "pan":
        # ["pan", "middle" | "space", x, y, dx, dy]: from image point (x, y) by (dx, dy) page pixels.
        x, y = to_page(page, step[2], step[3])
        page.mouse.move(x, y)
        if step[1] == "space":
            page.keyboard.down(" ")
            page.mouse.down()
        else:
            page.mouse.down(button="middle")
        page.mouse.move(x + float(step[4]), y + float(step[5]), steps=5)
        if step[1] == "space":
            page.mouse.up()
            page.keyboard.up(" ")
        else:
            page.mouse.up(button="middle")
    elif kind == "viewport":
        page.set_viewport_size({"width": int(step[1]), "height": int(step[2])})
    elif kind == "click_timeline":
        seconds = page.evaluate(step[1])
        box = page.locator("#timeline").bounding_box()
        n, fps = page.evaluate("[window.wobble.frameCount, window.wobble.studio.fps]")
        page.mouse.click(box["x"] + seconds * fps / n * box["width"], box["y"] + box["height"] / 2)
    elif kind == "drag_timeline":
        a, b = page.evaluate(step[1]), float(step[2])
        box = page.locator("#timeline").bounding_box()
        n, fps = page.evaluate("[window.wobble.frameCount, window.wobble.studio.fps]")
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + a * fps / n * box["width"], y)
        page.mouse.down()
        page.mouse.move(box["x"] + b * fps / n * box["width"], y, steps=5)
        page.mouse.up()
    elif kind == "page_shot":
        page.screenshot(path=os.path.join(out, step[1] + ".png"))
    elif kind == "click":
        x, y = to_page(page, step[1], step[2])
        page.mouse.click(x, y)
    elif kind == "fill":
        field = page.locator(f"#inspector [name='{step[1]}']")
        field.fill(str(step[2]))
        field.press("Enter")
        page.evaluate("document.activeElement.blur()")
    elif kind == "wait":
        page.wait_for_function(step[1], timeout=120000)
    elif kind == "eval":
        result[step[1]] = page.evaluate(step[2])
    elif kind == "download_click":
        with page.expect_download(timeout=120000) as d:
            page.locator(step[1]).click()
        path = os.path.join(out, step[2])
        d.value.save_as(path)
        result[step[2]] = os.path.getsize(path)
    elif kind == "wait_saved":
        page.wait_for_function("window.wobble.saved.length > 0", timeout=20000)
    elif kind in ("play_fps", "floor_fps"):
        # Frames drawn per second while playing, and the browser's CPU time
        # per frame (all its processes: a figure that holds on a busy
        # machine). floor_fps: the same page drawing an empty frame (a clear).
        name = "fps" if kind == "play_fps" else "floor_fps"
        if kind == "floor_fps":
            page.evaluate("(() => { const r = window.wobble.renderer; r.draw = () => { const gl = r.gl;"
                          " gl.bindFramebuffer(gl.FRAMEBUFFER, null); gl.clearColor(0, 0, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT); return true; }; })()")
        page.evaluate("window.wobble.forceDraw = true; window.wobble.play()")
        time.sleep(0.5)
        d0, c0 = page.evaluate("window.wobble.draws"), browser_cpu_ms()
        t0 = time.monotonic()
        time.sleep(float(step[1]))
        d1, c1 = page.evaluate("window.wobble.draws"), browser_cpu_ms()
        result[name] = (d1 - d0) / (time.monotonic() - t0)
        result[name + "_cpu_ms"] = (c1 - c0) / max(1, d1 - d0)
        page.evaluate("window.wobble.forceDraw = false")
    elif kind == "metrics":
        result[step[1]] = page.evaluate(
            "({generation: wobble.generation, frame: wobble.frame, frameCount: wobble.frameCount,"
            " pokeLatency: wobble.pokeLatency, dragLatency: wobble.dragLatency, saved: wobble.saved,"
            " errors: wobble.errors, renderer: (() => { const g = document.createElement('canvas').getContext('webgl2');"
            " const e = g && g.getExtension('WEBGL_debug_renderer_info'); return e ? g.getParameter(e.UNMASKED_RENDERER_WEBGL) : '?'; })()})")
    else:
        raise ValueError(f"unknown step {kind}")


if __name__ == "__main__":
    main()
