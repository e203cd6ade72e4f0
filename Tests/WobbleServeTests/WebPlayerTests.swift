import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleRender
import WobbleTestSupport

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
}
