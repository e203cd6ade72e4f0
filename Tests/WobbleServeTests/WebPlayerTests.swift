import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleRender
import WobbleTestSupport
@testable import WobbleServe

/// The web player (`-o clip.html`, `<wobble-view>`): its arithmetic against
/// the Swift models (node runs `Web/wobble-motion.js` on a table Swift
/// writes), and its pages in Debian's chromium (Playwright,
/// `Browser/player.py`; skipped without them, as BrowserStudioTests).
final class WebPlayerTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: the physics against Swift

    /// A reading as the table holds it.
    static func row(_ r: MotionReading) -> [Double] {
        [r.amplitude, r.direction.x, r.direction.y, r.level, r.swing, r.offsetDirection.x, r.offsetDirection.y]
    }

    static func kicks(_ list: [(Double, Double, Double, Double)]) -> [Impulse] {
        list.map { Impulse(start: $0.0, direction: Scene.normalize($0.1, $0.2) ?? .zero, amplitude: $0.3) }
    }

    /// The table: for each model and kick list, the reading at many times
    /// (the kicks up to each time folded through `adding`), the rest time,
    /// and the loop's steady state; and for a few shapes, the exact fields
    /// of some grid peaks and the blend of some peaks.
    static func table() -> [String: Any] {
        let params: [WobbleParameters] = [
            .original, WobbleParameters(duration: 0.8, decay: 0.9, threshold: 0.05, strength: 0.1),
            .spring, WobbleParameters(motion: .spring, duration: 0.7, damping: 0.3, threshold: 0.05),
        ]
        let lists: [[Impulse]] = [
            kicks([(0.1, 1, 0, 1)]),
            kicks([(0, 0.6, 0.8, 1), (0.35, -1, 0, 0.5), (0.35, 0, 1, 1), (1.9, 0.3, -1, 2), (4.4, -1, -1, 0.7)]),
            kicks([(0.2, 3, 1, 1), (0.9, -1, 0.2, 1), (0.95, -1, 0.25, 1), (3.6, 0, -1, 3)]),
        ]
        var times = stride(from: 0.0, through: 7.0, by: 0.037).map { $0 }
        times += [0.1, 1.3, 2.5, 3.7, 0.35, 1.9, 1.9 + 1e-10, 4.4 - 1e-10]
        var cases: [[String: Any]] = []
        for p in params {
            var values: [String: Double] = [:]
            for d in p.motion.declaration.parameters { values[d.key] = d.get(p) }
            let model = p.model
            for list in lists {
                var readings: [[Double]] = []
                for t in times {
                    var h: [Impulse] = []
                    for k in list where k.start <= t + timeEpsilon { h = model.adding(k, to: h) }
                    readings.append(row(model.reading(h, at: t, preparedAt: 0)))
                }
                var h: [Impulse] = []
                for k in list { h = model.adding(k, to: h) }
                let period = 5.0
                let loop = LoopedMotion(parameters: p, period: period, kicks: list)
                cases.append([
                    "motion": p.motion.rawValue, "parameters": values, "times": times,
                    "kicks": list.map { [$0.start, $0.direction.x, $0.direction.y, $0.amplitude] },
                    "readings": readings, "rest": model.restTime(h), "period": period,
                    "loop": times.map { row(loop.reading(at: $0)) },
                ])
            }
        }
        let shapes: [(RegionShape, PinSide?)] = [
            (RegionShape(lt: Point(95, 160), rt: Point(225, 172), rb: Point(222, 278), lb: Point(92, 286), center: Point(158.5, 224)), nil),
            (RegionShape(lt: Point(40, 20), rt: Point(150, 30), rb: Point(140, 150), lb: Point(30, 140), center: Point(90, 85)), .bottom),
            (RegionShape(lt: Point(-10, -5), rt: Point(60, 0), rb: Point(70, 50.5), lb: Point(0, 60), center: Point(30, 25)), nil),
            (RegionShape(lt: Point(100, 100), rt: Point(180, 100), rb: Point(180, 160), lb: Point(100, 160), center: Point(140, 130)), .left),
        ]
        var fields: [[String: Any]] = []
        for (shape, pin) in shapes {
            guard let profile = ShapeProfile(shape: shape, pin: pin, width: 200, height: 200) else { continue }
            let grid = [1, 20, 40, 55, 60, 75]
            let peaks = [0.3, 2.5, 3.1415, 7.9, 12.25, 40]
            fields.append([
                "shape": [shape.lt, shape.rt, shape.rb, shape.lb, shape.center].map { [$0.x, $0.y] },
                "pin": pin?.rawValue ?? NSNull(), "box": [profile.x0, profile.y0, profile.width, profile.height],
                "grid": grid, "fields": grid.map { profile.field(grid: $0).map(Double.init) },
                "peaks": peaks,
                "blends": peaks.map { p -> [Double] in
                    guard let b = profile.blend(peak: p) else { return [] }
                    return [Double(b.k), Double(b.t)] + b.settled.flatMap { [Double($0.index), Double($0.m)] }
                },
            ])
        }
        return ["cases": cases, "shapes": fields]
    }

    /// The JS evaluates the table; its largest differences from Swift.
    static let checker = """
    import { makeModel, loopReading, Shape, Profile } from "./wobble-motion.mjs";
    import { readFileSync } from "node:fs";
    const table = JSON.parse(readFileSync(process.argv[2], "utf8"));
    const row = (r) => [r.amplitude, r.direction[0], r.direction[1], r.level, r.swing, r.offset[0], r.offset[1]];
    let worst = 0, where = "", compared = 0, fieldWorst = 0, boxes = 0, blends = 0;
    const diff = (a, b, what) => {
      compared++;
      const d = a === b ? 0 : Math.abs(a - b) / Math.max(1, Math.abs(a));
      if (!(d <= worst)) { worst = Number.isNaN(d) ? Infinity : d; where = `${what}: swift ${a} js ${b}`; }
    };
    for (const [ci, c] of table.cases.entries()) {
      const model = makeModel({ motion: c.motion, ...c.parameters });
      const kicks = c.kicks.map((k) => ({ start: k[0], direction: [k[1], k[2]], amplitude: k[3] }));
      c.times.forEach((t, i) => {
        let h = [];
        for (const k of kicks) if (k.start <= t + 1e-9) h = model.adding(k, h);
        row(model.reading(h, t)).forEach((v, j) => diff(c.readings[i][j], v, `case ${ci} t ${t} field ${j}`));
        const steady = model.looped(c.period, kicks);
        row(loopReading(steady, kicks, c.period, t)).forEach((v, j) => diff(c.loop[i][j], v, `loop ${ci} t ${t} field ${j}`));
      });
      let h = [];
      for (const k of kicks) h = model.adding(k, h);
      diff(c.rest, model.restTime(h), `rest ${ci}`);
    }
    for (const s of table.shapes) {
      const p = new Profile(new Shape(s.shape), s.pin, 200, 200);
      if ([p.x0, p.y0, p.w, p.h].join() === s.box.join()) boxes++;
      s.grid.forEach((k, i) => {
        const f = p.field(k);
        for (let n = 0; n < f.length; n++) fieldWorst = Math.max(fieldWorst, Math.abs(f[n] - s.fields[i][n]));
      });
      s.peaks.forEach((peak, i) => { if (p.blend(peak).join() === s.blends[i].join()) blends++; });
    }
    console.log(JSON.stringify({ worst, where, compared, fieldWorst, boxes, blends }));
    """

    func testTheJSPhysicsIsTheSwiftModels() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") else {
            if ProcessInfo.processInfo.environment["WOBBLE_BROWSER_TESTS"] == "1" { XCTFail("node is missing (apt install nodejs)") }
            throw XCTSkip("the physics check needs node (apt install nodejs)")
        }
        let table = WebPlayerTests.table()
        try JSONSerialization.data(withJSONObject: table).write(to: URL(fileURLWithPath: box.path("table.json")))
        let js = try String(contentsOf: WebPlayerTests.repo.appendingPathComponent("Web/wobble-motion.js"), encoding: .utf8)
        try box.write("wobble-motion.mjs", js)
        try box.write("check.mjs", WebPlayerTests.checker)
        let r = try Tool.exec("/usr/bin/node", [box.path("check.mjs"), box.path("table.json")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], r.stderr)
        print("web player physics against Swift: \(out)")
        let cases = try XCTUnwrap(table["cases"] as? [[String: Any]]), shapes = try XCTUnwrap(table["shapes"] as? [[String: Any]])
        // Every number of every reading, loop reading and rest time, to a
        // few ulps of a double (libm's last bit may differ from V8's).
        XCTAssertGreaterThan(out["compared"] as? Int ?? 0, cases.count * 150 * 14)
        XCTAssertLessThanOrEqual(out["worst"] as? Double ?? 1, 1e-12, "\(out["where"] ?? "")")
        // The fields the renderer draws: the same box, the same floats (to
        // a float's last bit), the same grid peaks and settled pixels.
        XCTAssertEqual(shapes.count, 4)
        XCTAssertEqual(out["boxes"] as? Int, shapes.count)
        XCTAssertLessThanOrEqual(out["fieldWorst"] as? Double ?? 1, 1e-5)
        XCTAssertEqual(out["blends"] as? Int, shapes.count * 6)
    }

    // MARK: in chromium

    /// Runs `steps` on the page at `url` (`Browser/player.py`); the result.
    func play(_ url: String, _ steps: [[Any]], options: [String: Any] = [:], out: String) throws -> [String: Any] {
        let (python, chromium) = try BrowserStudioTests.browser()
        let script = WebPlayerTests.repo.appendingPathComponent("Tests/WobbleServeTests/Browser/player.py").path
        let job = String(decoding: try JSONSerialization.data(withJSONObject: ["options": options, "steps": steps]), as: UTF8.self)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let r = try Tool.exec(python, [script, url, out, job], env: ["WOBBLE_CHROMIUM": chromium])
        let result = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/result.json"))) as? [String: Any],
                                   "player.py: \(r.stderr)")
        XCTAssertNil(result["error"], "\(result["error"] ?? "")")
        XCTAssertNil(result["pageerrors"], "\(result["pageerrors"] ?? "")")
        return result
    }

    /// Writes `scene` as a web page (`-o page.html`) and renders `frames`
    /// headless into `ref/`.
    func page(_ scene: String, html: String, frames: ClosedRange<Int>? = nil, ref: String = "ref") throws {
        try page(scene, html: html, frames: frames.map { ["\($0.lowerBound)-\($0.upperBound)"] } ?? [], ref: ref)
    }

    /// Writes `scene` as a web page and renders each of `frames` alone
    /// (`--frames k`) into `ref/`.
    func page(_ scene: String, html: String, frames: [Int], ref: String = "ref") throws {
        try page(scene, html: html, frames: frames.map { "\($0)" }, ref: ref)
    }

    func page(_ scene: String, html: String, frames slices: [String], ref: String) throws {
        let r = try Tool.run([scene, "-o", html, "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        for slice in slices {
            let f = try Tool.run([scene, "--frames", slice, "-o", box.path(ref) + "/", "-q"], cwd: box.url)
            XCTAssertEqual(f.status, 0, f.stderr)
        }
    }

    func image(_ path: String) throws -> RGBAImage { try ImageIO.load(path: path) }

    /// PSNR (dB) of the premultiplied colour (a transparent pixel's hidden
    /// colour does not count).
    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        XCTAssertEqual(a.width, b.width)
        XCTAssertEqual(a.height, b.height)
        return PSNR.of(a, b, channels: .premultipliedRGB)
    }

    func example(_ name: String) -> String {
        let dir = WebPlayerTests.repo.appendingPathComponent("Examples/\(name)")
        let lua = (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.first { $0.hasSuffix(".lua") } ?? "\(name).lua"
        return dir.appendingPathComponent(lua).path
    }

    /// Paused frames of every scene of the gallery against the headless
    /// render: the cat (classic, three regions), purr (a loop, a time past
    /// its period), the cutout (spring, pin, an "auto" cutout), sway
    /// (pins), sticker (transparent pixels, 25 fps), springs, latte,
    /// whiskers, table-bump (shakes), spoon, drums (kicks on the beats of
    /// its soundtrack).
    func testPausedFramesAreTheHeadlessRender() throws {
        _ = try BrowserStudioTests.browser()
        let gallery: [(name: String, fps: Double, times: [Double])] = [
            ("cat", 30, [0.5, 1.0, 2.7]), ("purr", 30, [0.3, 1.0, 1.95, 2.5]), ("cutout", 30, [0.5, 1.2]),
            ("sway", 30, [0.7, 1.6]), ("sticker", 25, [0.5, 1.0]), ("springs", 30, [0.6, 1.5]),
            ("latte", 30, [0.4, 1.3]), ("whiskers", 30, [1.1, 3.4]), ("table-bump", 30, [0.9, 2.2]),
            ("spoon", 30, [0.8, 1.9]), ("drums", 30, [1.0, 4.3]),
        ]
        // The headless frames each shot is compared with, each rendered
        // alone (`--frames k`: byte-identical to the same frame of a whole
        // render), not the range between them; then every page in one
        // browser (a launch each cost more than the page).
        var steps: [[Any]] = []
        var refs: [String: [Int]] = [:]
        for g in gallery {
            let frames = g.times.map { Int(($0 * g.fps + 1e-9).rounded(.down)) }
            let period = g.name == "purr" ? 60 : Int.max
            refs[g.name] = frames.map { $0 % period }
            try page(example(g.name), html: box.path(g.name + ".html"), frames: Set(refs[g.name] ?? []).sorted(), ref: "ref-" + g.name)
            steps += [["open", "file://" + box.path(g.name + ".html")], ["wait_ready"], ["pause"]]
            for (i, t) in g.times.enumerated() { steps += [["time", t], ["shot", "\(g.name)\(i)"]] }
        }
        let out = box.path("shots")
        _ = try play("file://" + box.path(gallery[0].name + ".html"), steps, out: out)
        for g in gallery {
            for (i, k) in (refs[g.name] ?? []).enumerated() {
                let shown = try image(out + "/\(g.name)\(i).png")
                let headless = try image(box.path(String(format: "ref-%@/frame_%05d.png", g.name, k)))
                let db = psnr(shown, headless)
                print(String(format: "web player: %@ at %.2f s against frame %d: %.1f dB", g.name, g.times[i], k, db))
                XCTAssertGreaterThanOrEqual(db, 40, "\(g.name) at \(g.times[i]) s against frame \(k)")
            }
        }
    }

    static let twoRegions = """
    image("img.png")
    local a = addSketch{x = 40, y = 30, w = 120, h = 110}
    local b = addSketch{x = 190, y = 50, w = 100, h = 100, motion = "spring"}
    prepare()

    """

    /// Pokes added live while paused at 0.5 s move as the engine moves the
    /// same touches at 0.5 s in the scene (the oracle), a classic region
    /// and a spring.
    func testALivePokeIsTheEnginesKick() throws {
        _ = try BrowserStudioTests.browser()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("live.lua", WebPlayerTests.twoRegions + "wait(3)\n")
        try box.write("oracle.lua", WebPlayerTests.twoRegions + "wait(0.5)\ntouch(100, 85, 130, 95)\ntouch(240, 100, 235, 120)\nwait(2.5)\n")
        try page(box.path("live.lua"), html: box.path("live.html"))
        try page(box.path("oracle.lua"), html: box.path("oracle.html"), frames: 36...60)
        let out = box.path("shots")
        let r = try play("file://" + box.path("live.html"), [["open"], ["wait_ready"], ["pause"], ["time", 1.2], ["shot", "still"],
                                                           ["time", 0.5], ["poke", 240, 100, -5, 20], ["poke", 100, 85, 30, 10],
                                                           ["time", 1.2], ["shot", "p36"], ["time", 2.0], ["shot", "p60"]], out: out)
        XCTAssertEqual(r["poke"] as? Int, 0, "the second poke hit the first region")
        for k in [36, 60] {
            let shown = try image(out + "/p\(k).png"), oracle = try image(box.path(String(format: "ref/frame_%05d.png", k)))
            XCTAssertGreaterThanOrEqual(psnr(shown, oracle), 40, "frame \(k) with the pokes against the engine's touches")
        }
        XCTAssertLessThan(psnr(try image(out + "/still.png"), try image(out + "/p36.png")), 35, "the pokes move the picture")
    }

    /// The page opened from disk asks the network for nothing: every
    /// request but the page's own file is refused, and it still plays.
    func testTheClipPlaysOffline() throws {
        _ = try BrowserStudioTests.browser()
        try page(example("cat"), html: box.path("cat.html"))
        let url = "file://" + box.path("cat.html")
        let r = try play(url, [["open"], ["wait_ready"], ["sleep", 0.5], ["eval", "regions", "document.querySelector('wobble-view').drawnRegions"],
                               ["eval", "playing", "!document.querySelector('wobble-view').paused"]],
                         options: ["offline": true], out: box.path("shots"))
        XCTAssertEqual(r["requests"] as? [String], [String(url.prefix(80))])
        XCTAssertNil(r["aborted"])
        XCTAssertEqual(r["still"] as? Bool, false)
        XCTAssertEqual(r["playing"] as? Bool, true)
        XCTAssertNotNil(r["regions"] as? Int)
    }

    /// The changed pixels between two frames: their bounding box, nil when none.
    func changed(_ a: RGBAImage, _ b: RGBAImage) -> PixelRect? {
        var box: PixelRect?
        for y in 0..<a.height {
            for x in 0..<a.width where a.pixels[(y * a.width + x) * 4 ..< (y * a.width + x) * 4 + 4] != b.pixels[(y * a.width + x) * 4 ..< (y * a.width + x) * 4 + 4] {
                box = PixelRect(x0: min(box?.x0 ?? x, x), y0: min(box?.y0 ?? y, y), x1: max(box?.x1 ?? x + 1, x + 1), y1: max(box?.y1 ?? y + 1, y + 1))
            }
        }
        return box
    }

    /// A mouse drag on one region pokes that region alone: every pixel
    /// outside its box stays the still picture.
    func testAPointerDragMovesOnlyItsRegion() throws {
        _ = try BrowserStudioTests.browser()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("scene.lua", WebPlayerTests.twoRegions + "wait(3)\n")
        try page(box.path("scene.lua"), html: box.path("scene.html"))
        let out = box.path("shots")
        let r = try play("file://" + box.path("scene.html"), [["open"], ["wait_ready"], ["pause"], ["time", 0.3], ["shot", "before"],
                                                            ["drag", 240, 90, 250, 130], ["time", 0.6], ["shot", "after"]], out: out)
        XCTAssertEqual(r["drag"] as? Int, 1, "the drag poked the second region")
        let moved = try XCTUnwrap(changed(try image(out + "/before.png"), try image(out + "/after.png")), "the drag moved nothing")
        // The second region's box (x 190..290, y 50..150).
        XCTAssertGreaterThanOrEqual(moved.x0, 190)
        XCTAssertLessThanOrEqual(moved.x1, 290)
        XCTAssertGreaterThanOrEqual(moved.y0, 50)
        XCTAssertLessThanOrEqual(moved.y1, 150)
    }

    /// A devicemotion event above 1 g shakes every region (each below the
    /// gate); one below it shakes none.
    func testDeviceMotionShakesTheRegions() throws {
        _ = try BrowserStudioTests.browser()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("scene.lua", WebPlayerTests.twoRegions + "wait(3)\n")
        try page(box.path("scene.lua"), html: box.path("scene.html"))
        let out = box.path("shots")
        let weak = try play("file://" + box.path("scene.html"), [["open"], ["wait_ready"], ["pause"], ["time", 0.3], ["motion", 4.9, 0]], out: out)
        XCTAssertEqual(weak["shake"] as? Int, 0, "half a g shakes nothing")
        let r = try play("file://" + box.path("scene.html"), [["open"], ["wait_ready"], ["pause"], ["time", 0.3], ["shot", "before"],
                                                            ["motion", 19.6, 4], ["time", 0.6], ["shot", "after"]], out: out)
        XCTAssertEqual(r["shake"] as? Int, 2, "2 g shakes both regions")
        let moved = try XCTUnwrap(changed(try image(out + "/before.png"), try image(out + "/after.png")), "the shake moved nothing")
        XCTAssertLessThan(moved.x0, 160, "the first region moved")
        XCTAssertGreaterThan(moved.x1, 190, "the second region moved")
    }

    /// With `prefers-reduced-motion`, the element holds still: it does not
    /// play, a drag pokes nothing, and it shows the still picture.
    func testReducedMotionHoldsStill() throws {
        _ = try BrowserStudioTests.browser()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("scene.lua", WebPlayerTests.twoRegions + "impulse(a, 1, 0)\nwait(3)\n")
        try page(box.path("scene.lua"), html: box.path("scene.html"), frames: 0...0)
        let out = box.path("shots")
        let r = try play("file://" + box.path("scene.html"), [["open"], ["wait_ready"], ["sleep", 0.5], ["drag", 240, 90, 250, 130],
                                                            ["eval", "time", "document.querySelector('wobble-view').currentTime"], ["shot", "shown"]],
                         options: ["reduced_motion": true], out: out)
        XCTAssertEqual(r["paused_when_ready"] as? Bool, true)
        XCTAssertEqual(r["time"] as? Double, 0)
        XCTAssertTrue(r["drag"] is NSNull, "a drag poked a region: \(r["drag"] ?? "")")
        XCTAssertGreaterThanOrEqual(psnr(try image(out + "/shown.png"), try image(box.path("ref/frame_00000.png"))), 40)
    }

    /// Without WebGL2 the element shows the still picture (an <img>).
    func testWithoutWebGL2ThePictureIsShown() throws {
        _ = try BrowserStudioTests.browser()
        try page(example("cat"), html: box.path("cat.html"))
        let r = try play("file://" + box.path("cat.html"), [["open"], ["wait_ready"],
                                                          ["eval", "webgl2", "!!document.createElement('canvas').getContext('webgl2')"],
                                                          ["wait_img"], ["eval", "img", "document.querySelector('wobble-view').shadowRoot.querySelector('img').naturalWidth"]],
                         options: ["no_webgl2": true], out: box.path("shots"))
        XCTAssertEqual(r["webgl2"] as? Bool, false, "chromium still has WebGL2")
        XCTAssertEqual(r["still"] as? Bool, true)
        XCTAssertEqual(r["img"] as? Int, 451)
    }

    /// `--format web -o site/`: the four files of a site, the player
    /// unpacked; served over HTTP the page fetches them and plays the
    /// scene (paused at 1 s, the render's frame 30). A page to stdout and
    /// a folder that is a file are refused with one line.
    func testTheWebFolderPlaysOverHTTP() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("scene.lua", WebPlayerTests.twoRegions + "touch(100, 85, 130, 95)\nwait(1)\ntouch(240, 100, 235, 120)\nwait(2)\n")
        let w = try Tool.run(["scene.lua", "--format", "web", "-o", "site/", "-q"], cwd: box.url)
        XCTAssertEqual(w.status, 0, w.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("site")).sorted(),
                       ["index.html", "picture.webp", "scene.json", "wobble-view.js"])
        XCTAssertEqual(try String(contentsOfFile: box.path("site/wobble-view.js"), encoding: .utf8), WebPage.player)
        let bundle = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.path("site/scene.json")))) as? [String: Any])
        XCTAssertEqual(bundle["format"] as? String, "wobble-run scene")
        XCTAssertEqual(bundle["version"] as? Int, 1)
        XCTAssertEqual(bundle["picture"] as? String, "picture.webp")
        XCTAssertEqual([bundle["width"] as? Int, bundle["height"] as? Int, bundle["frames"] as? Int], [320, 200, 90])
        let models = try XCTUnwrap(bundle["models"] as? [[String: Any]])
        XCTAssertEqual(models.map { $0["motion"] as? String }, ["classic", "spring"])
        XCTAssertEqual(models.map { ($0["kicks"] as? [[Double]])?.map { $0[0] } }, [[0], [1]])
        let f = try Tool.run(["scene.lua", "--frames", "30-30", "-o", box.path("ref") + "/", "-q"], cwd: box.url)
        XCTAssertEqual(f.status, 0, f.stderr)
        let out = box.path("shots")
        let r = try play(box.path("site"), [["open"], ["wait_ready"], ["pause"], ["time", 1.0], ["shot", "t1"]], options: ["serve": true], out: out)
        XCTAssertEqual(r["still"] as? Bool, false)
        let asked = (r["requests"] as? [String] ?? []).compactMap { $0.split(separator: "/").last.map(String.init) }
        XCTAssertEqual(Set(asked), ["index.html", "wobble-view.js", "scene.json", "picture.webp"], "\(r["requests"] ?? "")")
        XCTAssertGreaterThanOrEqual(psnr(try image(out + "/t1.png"), try image(box.path("ref/frame_00030.png"))), 40)

        let stdout = try Tool.run(["scene.lua", "--format", "html", "-o", "-"], cwd: box.url)
        XCTAssertEqual(stdout.status, 2)
        XCTAssertEqual(stdout.stderr, "wobble-run: a web page cannot go to stdout ('-o -'); write x.html, or a folder with --format web\n")
        try box.write("afile", "")
        let file = try Tool.run(["scene.lua", "--format", "web", "-o", "afile"], cwd: box.url)
        XCTAssertEqual(file.status, 1)
        XCTAssertEqual(file.stderr, "wobble-run: output 'afile': not a folder (--format web writes a folder)\n")
    }

    /// `Shift+E` in the browser studio, the "web page" row: the page
    /// downloads `scene.html`, which plays the scene (paused at 0.5 s, the
    /// headless render's frame 15).
    func testShiftEInTheStudioPageDownloadsTheWebPage() throws {
        let (python, chromium) = try BrowserStudioTests.browser()
        try box.writeImage("img.png", Sandbox.pattern(width: 320, height: 200, checker: 16))
        try box.write("scene.lua", BrowserStudioTests.sceneText)
        let studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
        defer { studio.stop() }
        let out = box.path("studio")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let steps: [[Any]] = [["open"], ["wait_ready"], ["key", "Shift+E"], BrowserStudioTests.studio("s.chooserChoices !== null && s.chooserChoices !== undefined"),
                              ["download_click", "#chooser li:has-text('web page')", "page.html"],
                              ["wait", "window.wobble.exported.length > 0"], ["eval", "exported", "window.wobble.exported[0]"]]
        let script = WebPlayerTests.repo.appendingPathComponent("Tests/WobbleServeTests/Browser/drive.py").path
        let r = try Tool.exec(python, [script, studio.url, out, String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)],
                              env: ["WOBBLE_CHROMIUM": chromium])
        let result = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/result.json"))) as? [String: Any],
                                   "drive.py: \(r.stderr)")
        XCTAssertNil(result["error"], "\(result["error"] ?? "")")
        let exported = try XCTUnwrap(result["exported"] as? [String: Any])
        XCTAssertEqual(exported["ok"] as? Bool, true, "\(exported)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("scene.html")), "written beside the scene")
        let f = try Tool.run(["scene.lua", "--frames", "15-15", "-o", box.path("ref") + "/", "-q"], cwd: box.url)
        XCTAssertEqual(f.status, 0, f.stderr)
        let shots = box.path("shots")
        let played = try play("file://" + out + "/page.html", [["open"], ["wait_ready"], ["pause"], ["time", 0.5], ["shot", "t05"]], out: shots)
        XCTAssertEqual(played["still"] as? Bool, false)
        XCTAssertGreaterThanOrEqual(psnr(try image(shots + "/t05.png"), try image(box.path("ref/frame_00015.png"))), 40)
    }

    /// The sizes the web outputs promise: the player ≤ 15 KB gzipped; the
    /// cat's clip.html ≤ 1/20 of its GIF; a 320×240 clip's ≤ 1/3 of its GIF.
    func testTheSizeLimits() throws {
        let player = Array(WebPage.player.utf8)
        let packed = try XCTUnwrap(Gzip.compress(player))
        XCTAssertLessThanOrEqual(packed.count, 15 * 1024, "the player gzipped")
        for (scene, ratio) in [(example("cat"), 20), (box.path("small.lua"), 3)] {
            if scene.hasSuffix("small.lua") {
                let cat = try image(WebPlayerTests.repo.appendingPathComponent("Examples/cat/chelsea.png").path)
                var px: [UInt8] = []
                for y in 30..<270 { px += cat.pixels[(y * cat.width + 65) * 4 ..< (y * cat.width + 385) * 4] }
                try box.writeImage("small.png", RGBAImage(width: 320, height: 240, pixels: px))
                try box.write("small.lua", """
                image("small.png")
                local face = addSketch{x = 60, y = 80, w = 200, h = 140}
                prepare()
                touch(160, 150, 190, 140)
                wait(3)

                """)
            }
            let html = box.path("clip.html"), gif = box.path("clip.gif")
            for o in [html, gif] { XCTAssertEqual(try Tool.run([scene, "-o", o, "-q"], cwd: box.url).status, 0) }
            let h = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: html)[.size] as? Int)
            let g = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: gif)[.size] as? Int)
            XCTAssertLessThanOrEqual(h * ratio, g, "\(scene): clip.html \(h) bytes, the GIF \(g)")
        }
    }
}
