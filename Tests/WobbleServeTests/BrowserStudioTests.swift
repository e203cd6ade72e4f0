import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleStudioCore
import WobbleTestSupport
@testable import WobbleServe

/// The browser studio in a real browser: Debian's chromium, headless, WebGL2
/// on SwiftShader, driven by Playwright for Python (`Browser/drive.py`).
/// `Scripts/test.sh` installs both (`Scripts/install-deps.sh --bench`,
/// `Scripts/install-browser-tests.sh`) and sets `WOBBLE_BROWSER_TESTS=1`:
/// then a missing browser fails; elsewhere the tests skip saying what is missing.
final class BrowserStudioTests: XCTestCase {
    var box: Sandbox!
    var studio: StudioServer!

    static let sceneText = """
    image("img.png")
    local body = addSketch{x = 60, y = 40, w = 120, h = 110}
    prepare()
    touch(120, 95, 150, 95)
    wait(2)

    """

    /// The python with playwright, and chromium; skips (or fails, under the test command) without them.
    static func browser() throws -> (python: String, chromium: String) {
        let env = ProcessInfo.processInfo.environment
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = env["WOBBLE_PLAYWRIGHT_PYTHON"] ?? repo.appendingPathComponent(".build/browser-tests/venv/bin/python").path
        let chromium = env["WOBBLE_CHROMIUM"] ?? "/usr/bin/chromium"
        var missing: [String] = []
        if !FileManager.default.isExecutableFile(atPath: chromium) { missing.append("chromium (\(chromium); apt install chromium)") }
        if !FileManager.default.isExecutableFile(atPath: python) {
            missing.append("Playwright for Python (\(python); Scripts/install-browser-tests.sh)")
        }
        if !missing.isEmpty {
            let why = "browser tests need " + missing.joined(separator: " and ")
            if env["WOBBLE_BROWSER_TESTS"] == "1" { XCTFail(why + ", which Scripts/test.sh installs") }
            throw XCTSkip(why)
        }
        return (python, chromium)
    }

    override func setUpWithError() throws {
        _ = try BrowserStudioTests.browser()
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        // The inspector's test has a warning too (a touch that hits nothing).
        let warned = name.contains("testTheInspector")
        try box.write("scene.lua", warned ? BrowserStudioTests.sceneText.replacingOccurrences(of: "wait(2)", with: "touch(5, 5, 10, 5)\nwait(2)")
                                          : BrowserStudioTests.sceneText)
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
    }

    override func tearDown() {
        studio?.stop()
    }

    /// Runs the steps in the browser; the result object (screenshots in `out`).
    func drive(_ steps: [[Any]], out: String, url: String? = nil) throws -> [String: Any] {
        let (python, chromium) = try BrowserStudioTests.browser()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/drive.py").path
        let json = String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let r = try Tool.exec(python, [script, url ?? studio.url, out, json], env: ["WOBBLE_CHROMIUM": chromium])
        let result = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/result.json"))) as? [String: Any],
                                   "drive.py: \(r.stderr)")
        XCTAssertNil(result["error"], "\(result["error"] ?? "")")
        XCTAssertNil(result["pageerrors"], "\(result["pageerrors"] ?? "")")
        return result
    }

    func image(_ path: String) throws -> RGBAImage { try ImageIO.load(path: path) }

    /// PSNR of the RGB channels (alpha is 255 in both).
    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        XCTAssertEqual(a.width, b.width)
        XCTAssertEqual(a.height, b.height)
        return PSNR.of(a, b, channels: .rgb)
    }

    func testThePreviewIsTheHeadlessFrameAndAPokeMovesIt() throws {
        let out = box.path("shots")
        let result = try drive([["open"], ["wait_ready"], ["seek", 10], ["hide_handles"], ["screenshot", "f10"],
                                ["seek", 52], ["screenshot", "before"], ["seek", 50], ["poke", 120, 95, 120, 140], ["key", "Space"],
                                ["seek", 52], ["screenshot", "after"], ["metrics", "m"]], out: out)
        XCTAssertEqual(result["open_status"] as? Int, 200)
        // The headless render of frame 10.
        let r = try Tool.run([box.path("scene.lua"), "--frames", "10-10", "-o", box.path("ref") + "/", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = try image(out + "/f10.png"), headless = try image(box.path("ref/frame_00010.png"))
        let db = psnr(page, headless)
        XCTAssertGreaterThanOrEqual(db, 40, "the page's frame 10 against the headless one")
        // The poke (at frame 50, downwards; stamped in whole milliseconds, so
        // just after frame 50's time) changed frame 52's picture inside the region.
        let before = try image(out + "/before.png"), after = try image(out + "/after.png")
        XCTAssertLessThan(psnr(before, after), 35, "a poke moves the picture")
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        XCTAssertEqual((m["pokeLatency"] as? [Double])?.count, 1)
    }

    /// A cutout region (a disc with a soft, 3 px rim over a checker, its
    /// mask a file) paused at a moving frame: the page draws the object
    /// layer displaced over the plate, as the renderers do, so its canvas is
    /// the headless frame (≥ 40 dB) inside the object's box and overall;
    /// drawn as a plain region (the page before) it is 22.6 dB inside the
    /// box, 27.2 dB overall.
    func testACutoutFrameIsTheHeadlessFrame() throws {
        studio.stop()
        let (w, h) = (320, 200)
        var img = Sandbox.pattern(width: w, height: h, checker: 16)
        var mask = RGBAImage(width: w, height: h, pixels: [UInt8](repeating: 255, count: w * h * 4))
        var ob = (x0: w, y0: h, x1: 0, y1: 0)
        for y in 0..<h {
            for x in 0..<w {
                let d = ((Double(x) + 0.5 - 160) * (Double(x) + 0.5 - 160) + (Double(y) + 0.5 - 100) * (Double(y) + 0.5 - 100)).squareRoot()
                let a = min(1, max(0, (46 - d) / 3))   // 1 inside 43 px, a 3 px rim
                let i = (y * w + x) * 4
                let v = UInt8((a * 255).rounded())
                for c in 0..<3 { mask.pixels[i + c] = v }
                guard a > 0 else { continue }
                ob = (min(ob.x0, x), min(ob.y0, y), max(ob.x1, x + 1), max(ob.y1, y + 1))
                // The disc's colour mixed with the background by the rim's alpha.
                let disc: [Double] = [250, 220, 40 + Double((x + y) % 8) * 8]
                for c in 0..<3 { img.pixels[i + c] = UInt8((a * disc[c] + (1 - a) * Double(img.pixels[i + c])).rounded()) }
            }
        }
        try box.writeImage("img.png", img)
        try box.writeImage("disc-mask.png", mask)
        try box.write("scene.lua", """
        image("img.png")
        local disc = addSketch{x = 100, y = 40, w = 120, h = 130, pin = "bottom", cutout = "disc-mask.png"}
        prepare()
        touch(160, 100, 200, 100)
        wait(2)

        """)
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
        let out = box.path("shots")
        _ = try drive([["open"], ["wait_ready"], ["seek", 10], ["hide_handles"], ["screenshot", "f10"], ["seek", 0], ["screenshot", "f0"]],
                      out: out)
        let r = try Tool.run([box.path("scene.lua"), "--frames", "10-10", "-o", box.path("ref") + "/", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = try image(out + "/f10.png"), headless = try image(box.path("ref/frame_00010.png"))
        func crop(_ im: RGBAImage) -> RGBAImage {
            var px: [UInt8] = []
            for y in ob.y0..<ob.y1 { px += im.pixels[(y * im.width + ob.x0) * 4 ..< (y * im.width + ob.x1) * 4] }
            return RGBAImage(width: ob.x1 - ob.x0, height: ob.y1 - ob.y0, pixels: px)
        }
        XCTAssertGreaterThanOrEqual(psnr(page, headless), 40, "the page's frame 10 against the headless one")
        XCTAssertGreaterThanOrEqual(psnr(crop(page), crop(headless)), 40, "inside the object's box")
        // Frame 10 moves the object (else the test shows nothing).
        XCTAssertLessThan(psnr(crop(try image(out + "/f0.png")), crop(page)), 30, "the object moves at frame 10")
    }

    func testADragThenCtrlSChangesTheFile() throws {
        let result = try drive([["open"], ["wait_ready"], ["seek", 0], ["drag", 60, 40, 40, 30], ["key", "Control+s"], ["wait_saved"],
                                ["metrics", "m"]], out: box.path("shots"))
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        let saved = try XCTUnwrap((m["saved"] as? [[String: Any]])?.first)
        XCTAssertEqual(saved["ok"] as? Bool, true, "\(saved)")
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        XCTAssertEqual(text, BrowserStudioTests.sceneText.replacingOccurrences(
            of: "addSketch{x = 60, y = 40, w = 120, h = 110}", with: "addSketch{lt = {40, 30}, rt = {180, 40}, rb = {180, 150}, lb = {60, 150}}"))
    }

    /// `Delete` on the selected region in the page is the window's: the
    /// preview loses it at once (its frame 10 is the saved scene's headless
    /// frame), `Ctrl+Z` brings it back, `Backspace` deletes it again and
    /// `Ctrl+S` writes the scene without its line.
    func testDeleteInThePageDeletesTheSelectedRegionAndCtrlSTakesItsLineOut() throws {
        let out = box.path("shots")
        let studio = BrowserStudioTests.studio
        let result = try drive([["open"], ["wait_ready"], ["seek", 10], ["hide_handles"], ["screenshot", "before"], ["hide_handles"],
                                ["click", 120, 95], studio("s.inspector !== null"),
                                ["eval", "_", "window.g0 = window.wobble.generation"],
                                ["key", "Delete"], studio("s.unsaved && s.inspector === null && s.message.startsWith('deleted body')"),
                                ["eval", "deleted", "window.wobble.studio.message"],
                                ["wait", "window.wobble.generation > window.g0"], ["seek", 9], ["seek", 10],
                                ["hide_handles"], ["screenshot", "after"], ["hide_handles"],
                                ["key", "Control+z"], studio("!s.unsaved"),
                                ["click", 120, 95], studio("s.inspector !== null"),
                                ["key", "Backspace"], studio("s.unsaved && s.message.startsWith('deleted body')"),
                                ["key", "Control+s"], ["wait_saved"], ["metrics", "m"]], out: out)
        XCTAssertEqual(result["deleted"] as? String, "deleted body (line 2); Ctrl+S takes its line out of the scene, Ctrl+Z brings it back")
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        XCTAssertEqual((m["saved"] as? [[String: Any]])?.first?["ok"] as? Bool, true, "\(m)")
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        XCTAssertEqual(text, BrowserStudioTests.sceneText.replacingOccurrences(of: "local body = addSketch{x = 60, y = 40, w = 120, h = 110}\n", with: ""))
        // The saved scene's headless frame 10 is what the page showed after Delete.
        let r = try Tool.run([box.path("scene.lua"), "--frames", "10-10", "-o", box.path("ref") + "/", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let before = try image(out + "/before.png"), after = try image(out + "/after.png")
        XCTAssertGreaterThanOrEqual(psnr(after, try image(box.path("ref/frame_00010.png"))), 40, "the page's frame 10 after Delete")
        XCTAssertLessThan(psnr(before, after), 35, "the region's wobble is gone")
    }

    func testWithoutTheTokenThePageIsRefused() throws {
        let bare = "http://127.0.0.1:\(studio.server.port)/"
        let result = try drive([["status", "bare", bare], ["status", "script", bare + "app.js"],
                                ["status", "files", bare + "files/scene.lua"]], out: box.path("shots"))
        XCTAssertEqual(result["bare"] as? Int, 403)
        XCTAssertEqual(result["script"] as? Int, 403)
        XCTAssertEqual(result["files"] as? Int, 403)
    }

    /// Waits until the core's snapshot says `js` (of `s`, the snapshot).
    static func studio(_ js: String) -> [Any] { ["wait", "window.wobble.studio && ((s) => \(js))(window.wobble.studio)"] }

    func testTheInspectorEditsUndoRestoresAndLoopIsSaved() throws {
        let result = try drive([["open"], ["wait_ready"], ["seek", 0], ["click", 120, 95], BrowserStudioTests.studio("s.inspector !== null"),
                                ["fill", "strength", 0.25], BrowserStudioTests.studio("s.unsaved"),
                                ["key", "Control+z"], BrowserStudioTests.studio("!s.unsaved"),
                                ["fill", "duration", 0.9], BrowserStudioTests.studio("s.unsaved"),
                                ["fill", "name", "belly"], BrowserStudioTests.studio("s.inspector.name === 'belly'"),
                                ["key", "l"], BrowserStudioTests.studio("s.message.startsWith('loop on')"),
                                ["key", "Control+s"], ["wait_saved"], ["metrics", "m"],
                                ["eval", "warnings", "[...document.querySelectorAll('#messages .warning')].map((e) => [e.textContent, getComputedStyle(e).color])"]],
                               out: box.path("shots"))
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        let saved = try XCTUnwrap((m["saved"] as? [[String: Any]])?.first)
        XCTAssertEqual(saved["ok"] as? Bool, true, "\(saved)")
        // The scene's warning (a touch that hits nothing) in the status area, in amber.
        let warnings = try XCTUnwrap(result["warnings"] as? [[String]])
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?[0].contains("touch at (5, 5) hits nothing") ?? false, "\(warnings)")
        XCTAssertEqual(warnings.first?[1], "rgb(251, 188, 4)")
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        // The inspector's duration and name are in the sketch's line; the
        // strength undone is not; L wrote loop().
        XCTAssertTrue(text.contains("local belly = addSketch{x = 60, y = 40, w = 120, h = 110, duration = 0.9}"), text)
        XCTAssertFalse(text.contains("strength"), text)
        XCTAssertTrue(text.contains("loop()"), text)
    }

    func testATakeBakedItsTickDeletedAndUndoneThenSavedWritesTheEvent() throws {
        let result = try drive([["open"], ["wait_ready"],
                                // Home while playing: the start, paused (as the window).
                                ["eval", "_", "window.wobble.play()"], ["wait", "window.wobble.frame > 3"], ["key", "Home"],
                                ["wait", "window.wobble.frame === 0"], ["eval", "home", BrowserStudioTests.sampleFrames],
                                ["seek", 10], ["key", "r"], BrowserStudioTests.studio("s.recording"),
                                ["poke", 120, 95, 160, 95], ["key", "r"], BrowserStudioTests.studio("!s.recording"),
                                ["key", "b"], BrowserStudioTests.studio("s.ticks.some((t) => t.ref && t.ref.kind === 'baked')"),
                                // Its tick selected, deleted, the deletion undone.
                                ["click_timeline", "window.wobble.studio.ticks.find((t) => t.ref && t.ref.kind === 'baked').time"],
                                BrowserStudioTests.studio("s.ticks.some((t) => t.selected && t.ref.kind === 'baked')"),
                                // The pointer rests on it: the status names it, from the core.
                                BrowserStudioTests.studio("s.hovered && s.hovered.includes(' baked at ')"),
                                ["eval", "hovered", "document.getElementById('messages').textContent"],
                                ["key", "Delete"], BrowserStudioTests.studio("!s.ticks.some((t) => t.ref && t.ref.kind === 'baked')"),
                                // Deleted: named no more, the deletion said instead.
                                BrowserStudioTests.studio("!s.hovered && s.message.startsWith('deleted the baked event')"),
                                ["eval", "deleted", "document.getElementById('messages').textContent"],
                                ["key", "Control+z"], BrowserStudioTests.studio("s.ticks.some((t) => t.ref && t.ref.kind === 'baked')"),
                                // Dragged to 0.5 s.
                                ["drag_timeline", "window.wobble.studio.ticks.find((t) => t.ref && t.ref.kind === 'baked').time", 0.5],
                                BrowserStudioTests.studio("s.ticks.some((t) => t.ref && t.ref.kind === 'baked' && Math.abs(t.time - 0.5) < 0.02)"),
                                ["key", "Control+s"], ["wait_saved"], ["metrics", "m"]], out: box.path("shots"))
        XCTAssertEqual(result["home"] as? [Int], [Int](repeating: 0, count: 30), "Home pauses at the start")
        let hovered = try XCTUnwrap(result["hovered"] as? String)
        XCTAssertTrue(hovered.contains("touch baked at ") && hovered.contains("(click selects, drag moves, Delete deletes)"), hovered)
        let deleted = try XCTUnwrap(result["deleted"] as? String)
        XCTAssertTrue(deleted.contains("deleted the baked event"), deleted)
        XCTAssertFalse(deleted.contains(" baked at "), "the deleted tick is named no more: \(deleted)")
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        XCTAssertEqual((m["saved"] as? [[String: Any]])?.first?["ok"] as? Bool, true, "\(m)")
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        XCTAssertTrue(text.contains("perform{"), text)
        // The one poke of the take, baked: `{TIME, touch = {x0, y0, x1, y1}}`, at the time it was dragged to.
        XCTAssertEqual(text.components(separatedBy: "touch = {").count - 1, 1, text)
        let time = try XCTUnwrap(text.firstMatch(of: /perform\{\s*\{([0-9.]+),/).flatMap { Double($0.1) }, text)
        XCTAssertEqual(time, 0.5, accuracy: 0.02, text)
    }

    /// The page's frame every 50 ms for 1.5 s (an `eval` step).
    static let sampleFrames = "new Promise((done) => { const xs = []; const t = setInterval(() => { xs.push(window.wobble.frame);"
        + " if (xs.length === 30) { clearInterval(t); done(xs); } }, 50); })"

    func testWhileATakeRecordsThePageRunsOnPastTheClipsEndAndAPokeShowsThere() throws {
        let out = box.path("shots")
        let result = try drive([["open"], ["wait_ready"], ["hide_handles"], ["metrics", "m0"],
                                ["key", "r"], BrowserStudioTests.studio("s.recording"),
                                ["eval", "recording", BrowserStudioTests.sampleFrames], ["screenshot", "still"],
                                // (A fifth of a second for the wobble to grow: a screenshot at once,
                                // on a loaded machine, caught it a frame in, too faint to tell.)
                                ["poke", 120, 95, 120, 140], ["eval", "grown", "new Promise((done) => setTimeout(() => done(0), 200))"],
                                ["screenshot", "poked"],
                                ["eval", "afterPoke", BrowserStudioTests.sampleFrames],
                                ["key", "r"], BrowserStudioTests.studio("!s.recording"),
                                ["wait", "window.wobble.frame < window.wobble.frameCount"], ["metrics", "m"]], out: out)
        let frameCount = try XCTUnwrap((result["m0"] as? [String: Any])?["frameCount"] as? Int)
        // From the scripted clip's end on, frame after frame: never back into the clip.
        for key in ["recording", "afterPoke"] {
            let frames = try XCTUnwrap(result[key] as? [Int], key)
            XCTAssertEqual(frames.count, 30)
            XCTAssertGreaterThanOrEqual(frames.min() ?? -1, frameCount - 1, "\(key): \(frames) (the clip has \(frameCount) frames)")
            XCTAssertEqual(frames, frames.sorted(), "\(key): \(frames)")
            XCTAssertGreaterThan((frames.last ?? 0) - (frames.first ?? 0), 20, "\(key): \(frames) runs at the clip's rate")
        }
        // The poke, stamped on the live clock, moves the picture there.
        XCTAssertLessThan(psnr(try image(out + "/still.png"), try image(out + "/poked.png")), 35, "the poke shows past the end")
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        XCTAssertEqual((m["pokeLatency"] as? [Double])?.count, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("")).filter { $0.contains("take") && $0.hasSuffix(".lua") }.count, 1,
                       "the take is written when R stops it")
    }

    func testAMalformedCommandIsAnErrorAndShiftEDownloadsTelegramWithinItsLimits() throws {
        let result = try drive([["open"], ["wait_ready"],
                                ["eval", "sent", #"window.wobble.sendRaw('{"type":"explode"}'), true"#],
                                ["wait", "window.wobble.errors.length > 0"],
                                ["key", "Shift+E"], BrowserStudioTests.studio("s.chooserChoices !== null && s.chooserChoices !== undefined"),
                                ["download_click", "#chooser li:has-text('telegram')", "sticker.webm"],
                                ["wait", "window.wobble.exported.length > 0"], ["metrics", "m"],
                                ["eval", "exported", "window.wobble.exported[0]"]], out: box.path("shots"))
        let m = try XCTUnwrap(result["m"] as? [String: Any])
        let errors = try XCTUnwrap(m["errors"] as? [String])
        XCTAssertEqual(errors.count, 1, "\(errors)")
        XCTAssertTrue(errors[0].hasPrefix("not a studio message"), errors[0])
        let exported = try XCTUnwrap(result["exported"] as? [String: Any])
        XCTAssertEqual(exported["ok"] as? Bool, true, "\(exported)")
        XCTAssertTrue((exported["message"] as? String ?? "").hasPrefix("telegram: "), "\(exported)")
        let bytes = try XCTUnwrap(result["sticker.webm"] as? Int)
        XCTAssertGreaterThan(bytes, 0)
        XCTAssertLessThanOrEqual(bytes, try Preset.named("telegram").byteLimit)
        let written = try FileManager.default.contentsOfDirectory(atPath: box.path("")).filter { $0.hasSuffix(".webm") }
        XCTAssertEqual(written.count, 1, "\(written)")
    }

    // MARK: the page at parity with the window

    /// The sketches as the last scene has them (image pixels), and the view.
    static let state = "({sketches: window.wobble.sketches, view: window.wobble.view, playing: window.wobble.playing, frame: window.wobble.frame})"

    /// The point `[x, y]` of a sketch's corner in a `state` result.
    func corner(_ state: Any?, _ key: String, sketch: Int = 0) throws -> [Double] {
        let s = try XCTUnwrap((state as? [String: Any])?["sketches"] as? [[String: Any]], "\(state ?? "nil")")
        let points = try XCTUnwrap(s[sketch]["points"] as? [String: Any])
        return try XCTUnwrap(points[key] as? [Double])
    }

    func view(_ state: Any?) throws -> [String: Double] {
        try XCTUnwrap(((state as? [String: Any])?["view"] as? [String: Any])?.compactMapValues { $0 as? Double }, "\(state ?? "nil")")
    }

    /// The wheel zooms around the mouse by the window's 1.25 a notch (the
    /// image point under it stays there), a middle drag and a Space drag
    /// pan (the Space press's play/pause given back), F fits (enlarging);
    /// at a zoom a handle dragged lands where the pointer is, a poke is
    /// where it was made, and Home pauses at the start.
    func testZoomAndPanAsTheWindowWithHandlesAndPokesInPlace() throws {
        let out = box.path("shots")
        let result = try drive([["open"], ["wait_ready"], ["seek", 0], ["eval", "fitted", BrowserStudioTests.state],
                                ["eval", "under0", "window.wobble.toPage(120, 95)"],
                                ["wheel", 120, 95, -100], ["eval", "zoom1", BrowserStudioTests.state],
                                ["eval", "under1", "window.wobble.toPage(120, 95)"],
                                ["wheel", 120, 95, -100], ["wheel", 120, 95, -100], ["eval", "zoom3", BrowserStudioTests.state],
                                ["page_shot", "zoomed"],
                                // A corner dragged at this zoom: (60, 40) to (50, 30).
                                ["drag", 60, 40, 50, 30], ["wait", "window.wobble.sketches[0].points.lt[0] < 55"],
                                ["eval", "dragged", BrowserStudioTests.state],
                                // A poke at this zoom, at frame 10.
                                ["seek", 10], ["poke", 100, 120, 100, 140], ["key", "Home"], ["wait", "window.wobble.frame === 0"],
                                BrowserStudioTests.studio("s.performed.length === 1"),
                                ["eval", "performed", "window.wobble.studio.performed[0]"],
                                ["eval", "home", BrowserStudioTests.state],
                                // Pans: middle button, then Space held (paused before, paused after).
                                ["pan", "middle", 120, 95, 40, 25], ["eval", "middle", BrowserStudioTests.state],
                                ["pan", "space", 120, 95, -30, 10], ["eval", "space", BrowserStudioTests.state],
                                ["key", "f"], ["eval", "fit", BrowserStudioTests.state],
                                ["eval", "fitMessage", "document.getElementById('messages').textContent"]], out: out)
        // Fitted: 1:1 (the picture fits), centred in the area.
        let v0 = try view(result["fitted"])
        XCTAssertEqual(v0["scale"], 1)
        XCTAssertEqual(v0["x"] ?? -1, ((v0["areaW"] ?? 0) - 320) / 2, accuracy: 0.5)
        XCTAssertEqual(v0["y"] ?? -1, ((v0["areaH"] ?? 0) - 200) / 2, accuracy: 0.5)
        // One notch: 1.25, the image point under the mouse still there (to a rounded pixel).
        let v1 = try view(result["zoom1"])
        XCTAssertEqual(v1["scale"] ?? 0, 1.25, accuracy: 1e-9)
        let u0 = try XCTUnwrap(result["under0"] as? [Double]), u1 = try XCTUnwrap(result["under1"] as? [Double])
        XCTAssertEqual(u0[0], u1[0], accuracy: 1)
        XCTAssertEqual(u0[1], u1[1], accuracy: 1)
        let v3 = try view(result["zoom3"])
        XCTAssertEqual(v3["scale"] ?? 0, 1.25 * 1.25 * 1.25, accuracy: 1e-9)
        XCTAssertEqual(v3["w"] ?? 0, (320 * 1.953125).rounded(), accuracy: 0.5)
        // The corner is where the pointer let it go (within a screen pixel's worth of image).
        let lt = try corner(result["dragged"], "lt")
        XCTAssertEqual(lt[0], 50, accuracy: 0.6)
        XCTAssertEqual(lt[1], 30, accuracy: 0.6)
        // The poke, in image pixels.
        let performed = try XCTUnwrap(result["performed"] as? [String: Any])
        XCTAssertEqual(performed["kind"] as? String, "touch", "\(performed)")
        let from = try XCTUnwrap(performed["from"] as? [String: Double]), to = try XCTUnwrap(performed["to"] as? [String: Double])
        XCTAssertEqual(from["x"] ?? 0, 100, accuracy: 0.6)
        XCTAssertEqual(from["y"] ?? 0, 120, accuracy: 0.6)
        XCTAssertEqual(to["y"] ?? 0, 140, accuracy: 0.6)
        // Home: frame 0, paused.
        let home = try XCTUnwrap(result["home"] as? [String: Any])
        XCTAssertEqual(home["frame"] as? Int, 0)
        XCTAssertEqual(home["playing"] as? Bool, false)
        // The pans move the picture by the pointer's move, the zoom kept; the
        // Space press used to pan gave its play/pause back (still paused).
        let vm = try view(result["middle"]), vs = try view(result["space"])
        XCTAssertEqual(vm["x"], (v3["x"] ?? 0) + 40)
        XCTAssertEqual(vm["y"], (v3["y"] ?? 0) + 25)
        XCTAssertEqual(vs["x"], (vm["x"] ?? 0) - 30)
        XCTAssertEqual(vs["y"], (vm["y"] ?? 0) + 10)
        XCTAssertEqual(vs["scale"], v3["scale"])
        XCTAssertEqual((result["space"] as? [String: Any])?["playing"] as? Bool, false, "a Space press that panned does not play")
        // F: the whole picture as large as it fits, centred.
        let vf = try view(result["fit"])
        let fit = min((vf["areaW"] ?? 0) / 320, (vf["areaH"] ?? 0) / 200)
        XCTAssertEqual(vf["scale"] ?? 0, fit, accuracy: 1e-9)
        XCTAssertEqual(vf["x"] ?? 0, (((vf["areaW"] ?? 0) - (320 * fit).rounded()) / 2).rounded(.down))
        XCTAssertTrue((result["fitMessage"] as? String ?? "").contains("fitted: "), "\(result["fitMessage"] ?? "")")
    }

    /// A corner dragged past the picture's edge stays beside it, where it
    /// can be taken again (the handles' layer is the whole picture area);
    /// a drag past the area's edge stops at the edge; the file gets the points.
    func testAHandleDraggedOffThePictureCanBeTakenAgain() throws {
        let result = try drive([["open"], ["wait_ready"], ["seek", 0],
                                ["drag", 60, 40, -25, -15], ["wait", "window.wobble.sketches[0].points.lt[0] < 0"],
                                ["eval", "outside", BrowserStudioTests.state], ["page_shot", "outside"],
                                ["drag", -25, -15, 30, 20], ["wait", "window.wobble.sketches[0].points.lt[0] > 0"],
                                ["eval", "back", BrowserStudioTests.state],
                                // Past the area's top-left corner: held at its edge.
                                ["drag", 180, 150, -5000, -5000], ["wait", "window.wobble.sketches[0].points.rb[0] < 0"],
                                ["eval", "edge", BrowserStudioTests.state],
                                ["drag_js", "(() => { const p = window.wobble.sketches[0].points.rb; return [p[0], p[1], 200, 160]; })()"], ["wait", "window.wobble.sketches[0].points.rb[0] > 0"],
                                ["eval", "rb", BrowserStudioTests.state],
                                ["key", "Control+s"], ["wait_saved"]], out: box.path("shots"))
        let outside = try corner(result["outside"], "lt")
        XCTAssertEqual(outside[0], -25, accuracy: 0.01)
        XCTAssertEqual(outside[1], -15, accuracy: 0.01)
        let back = try corner(result["back"], "lt")
        XCTAssertEqual(back[0], 30, accuracy: 0.01)
        XCTAssertEqual(back[1], 20, accuracy: 0.01)
        // Held at the area's first pixel (the picture at 1:1 in the area).
        let v = try view(result["edge"]), edge = try corner(result["edge"], "rb")
        XCTAssertEqual(edge[0], -(v["x"] ?? 0), accuracy: 0.01)
        XCTAssertEqual(edge[1], -(v["y"] ?? 0), accuracy: 0.01)
        let rb = try corner(result["rb"], "rb")
        XCTAssertEqual(rb[0], 200, accuracy: 0.01)
        XCTAssertEqual(rb[1], 160, accuracy: 0.01)
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        XCTAssertTrue(text.contains("lt = {30, 20}") && text.contains("rb = {200, 160}"), text)
    }

    /// F1 and ? show the keys' help, the core's list (the window's sheet)
    /// row by row; any key closes it, and that key does nothing else.
    func testTheHelpSheetIsTheWindowsKeyList() throws {
        let rows = "[...document.querySelectorAll('#help-keys tr')].map((r) => [...r.cells].map((c) => c.textContent))"
        let result = try drive([["open"], ["wait_ready"], ["wait", "window.wobble.keys !== null"],
                                ["key", "F1"], ["wait", "window.wobble.helpShown"], ["page_shot", "help"],
                                ["eval", "rows", rows],
                                ["eval", "visible", "!document.getElementById('help-sheet').hidden"],
                                ["key", "h"], ["wait", "!window.wobble.helpShown"],
                                ["key", "?"], ["wait", "window.wobble.helpShown"], ["key", "Escape"], ["wait", "!window.wobble.helpShown"],
                                ["eval", "handles", "window.wobble.studio.handlesShown"]], out: box.path("shots"))
        let shown = try XCTUnwrap(result["rows"] as? [[String]])
        XCTAssertEqual(shown.map { $0.first ?? "" }, StudioKeyMap.help.map(\.keys))
        XCTAssertEqual(shown.map { $0.last ?? "" }, StudioKeyMap.help.map(\.what))
        XCTAssertEqual(result["visible"] as? Bool, true)
        // The H that closed the sheet did not hide the handles.
        XCTAssertEqual(result["handles"] as? Bool, true)
    }

    /// A mono 16-bit WAV at 8 kHz of `samples`.
    static func wav(_ samples: [Float], rate: Int = 8000) -> Data {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + samples.count * 2)
        d.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(samples.count * 2)
        for s in samples { withUnsafeBytes(of: Int16((max(-1, min(1, s)) * 32767).rounded()).littleEndian) { d.append(contentsOf: $0) } }
        return d
    }

    /// The soundtrack plays on the page: the server sends the decoded
    /// track, the page lays it on the clip (its buffer is the track's
    /// samples at their clip samples), starts it at the first key, plays it
    /// from the playhead with the playhead following its clock, stops it
    /// when paused, starts it again from a seek, and mutes it with M.
    func testTheSoundtrackPlaysWithThePlayheadAndMutes() throws {
        studio.stop()
        // 2 s at 44.1 kHz (the rate the studio plays): a ramp, so every
        // sample says where it is; the sound starts 0.25 s into the clip.
        let rate = 44_100
        let samples = (0..<(2 * rate)).map { Float(($0 % 4000) - 2000) / 2500 }
        try BrowserStudioTests.wav(samples, rate: rate).write(to: URL(fileURLWithPath: box.path("tone.wav")))
        try box.write("scene.lua", BrowserStudioTests.sceneText.replacingOccurrences(
            of: "image(\"img.png\")", with: "image(\"img.png\")\nsoundtrack(sound(\"tone.wav\"), 0.25)"))
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
        let result = try drive([["open"], ["wait_ready"], ["wait", "window.wobble.sound !== null"], ["eval", "sound", "window.wobble.sound"],
                                // The first key lets the sound start (Home: paused at 0; Space plays).
                                ["key", "Home"], ["key", "Space"], ["wait", "window.wobble.soundState().playing"],
                                ["eval", "samples", "[0, 11024, 11025, 11026, 20000, 50000, 88199].map((i) => window.wobble.soundSample(i))"],
                                ["wait", "window.wobble.soundLog.length > 20"], ["eval", "log", "window.wobble.soundLog.slice(0, 20)"],
                                ["eval", "fps", "window.wobble.studio.fps"],
                                // (The page sets the gain at its next animation frame after the
                                // studio's state says muted: under load that comes later.)
                                ["key", "m"], BrowserStudioTests.studio("s.muted"), ["wait", "window.wobble.soundState().gain === 0"],
                                ["eval", "muted", "window.wobble.soundState()"],
                                ["key", "m"], BrowserStudioTests.studio("!s.muted"), ["wait", "window.wobble.soundState().gain === 1"],
                                ["eval", "unmuted", "window.wobble.soundState()"],
                                ["seek", 30], ["eval", "paused", "window.wobble.soundState()"],
                                ["eval", "_", "window.wobble.play()"], ["wait", "window.wobble.soundState().playing"],
                                ["eval", "resumed", "window.wobble.soundState()"]], out: box.path("shots"))
        let sound = try XCTUnwrap(result["sound"] as? [String: Any])
        XCTAssertEqual(sound["rate"] as? Int, rate)
        XCTAssertEqual(sound["start"] as? Int, 11025, "0.25 s at 44.1 kHz")
        XCTAssertEqual(sound["count"] as? Int, samples.count)
        XCTAssertEqual(sound["length"] as? Int, 2 * rate, "the clip's 2 s")
        // The buffer: silence before the sound's start, then its samples (16-bit), cut at the clip's end.
        let got = try XCTUnwrap(result["samples"] as? [Double])
        let want: [Double] = [0, 0] + [0, 1, 20000 - 11025, 50000 - 11025, 88199 - 11025].map { Double(samples[$0]) }
        XCTAssertEqual(got.count, want.count)
        for (g, w) in zip(got, want) { XCTAssertEqual(g, w, accuracy: 1e-4, "\(got)") }   // (16-bit; the ramp's steps are 4e-4)
        // The playhead follows the sound's clock: each frame drawn is the one at the clip time heard.
        let fps = try XCTUnwrap(result["fps"] as? Double)
        let log = try XCTUnwrap(result["log"] as? [[Double]])
        for entry in log { XCTAssertEqual(entry[0], (entry[1] * fps + 1e-9).rounded(.down), "\(log)") }
        XCTAssertGreaterThan((log.last?[1] ?? 0) - (log.first?[1] ?? 0), 0, "the sound's clock runs: \(log)")
        let muted = try XCTUnwrap(result["muted"] as? [String: Any]), unmuted = try XCTUnwrap(result["unmuted"] as? [String: Any])
        XCTAssertEqual(muted["gain"] as? Double, 0)
        XCTAssertEqual(muted["playing"] as? Bool, true, "muted, it plays on (silently)")
        XCTAssertEqual(unmuted["gain"] as? Double, 1)
        XCTAssertEqual((result["paused"] as? [String: Any])?["playing"] as? Bool, false)
        let resumed = try XCTUnwrap(result["resumed"] as? [String: Any])
        XCTAssertEqual(resumed["offset"] as? Double ?? -1, 30 / fps, accuracy: 1e-9, "played again from the frame sought")
    }
}
