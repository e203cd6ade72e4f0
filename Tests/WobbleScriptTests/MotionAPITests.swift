import XCTest
@testable import WobbleScript
import WobbleCore

/// `addSketch{motion = "spring", ...}`, `overlap()`, `edges()`:
/// parameters, readings, and exact one-line errors.
final class MotionAPITests: XCTestCase {
    let f = SceneFixture()
    let withImage = "image('a.png')\n"

    func testSpringParametersAndDefaults() throws {
        let r = try f.run(withImage + """
            local a = addSketch{motion = "spring"}
            local b = addSketch{x = 0, y = 0, w = 50, h = 50, motion = "spring", duration = 0.8, damping = 0.3,
                                threshold = 0.05, strength = 0.1}
            local c = addSketch{motion = "classic", decay = 0.5}
            assert(a.motion == "spring" and a.damping == 0.1 and a.threshold == 0.02 and a.duration == 1.2)
            assert(c.motion == "classic" and c.threshold == 0.1)
            c.motion = "spring"
            assert(c.threshold == 0.02)
            prepare()
            """)
        let models = r.clip.timeline.snapshot(at: 0).models
        XCTAssertEqual(models.map(\.parameters), [
            .spring,
            WobbleParameters(motion: .spring, duration: 0.8, damping: 0.3, threshold: 0.05, strength: 0.1),
            WobbleParameters(motion: .spring, decay: 0.5, threshold: 0.02),
        ])
    }

    func testSpringReadings() throws {
        // wobbleModels(): amplitude = envelope, direction = swing direction.
        // E(t*) = 1/√(1−Z²); the opposite pair cancels in s but counts in the
        // envelope: rest at t_L + ln(E(t_L)/0.02)/(Z·ω), E(t_L) = 1/√0.99 + 2/c.
        let c = 0.8582765310461202, zw = 0.5235987755982989, tL = 0.2822844000515224
        let peakE = 1 / (0.99).squareRoot()
        let rest = tL + log((peakE + 2 / c) / 0.02) / zw
        _ = try f.run(withImage + """
            local function near(a, b, what) assert(math.abs(a - b) < 1e-9, what .. ": " .. a .. " vs " .. b) end
            addSketch{motion = "spring"}
            local w = prepare()[1]
            assert(w.amplitude == 0 and w.direction.x == 0 and w.direction.y == 0)
            impulse(w, 0, 1)
            wait(\(tL))
            local st = wobbleModels()[1]
            near(st.amplitude, \(peakE), "amplitude")
            near(st.direction.x, 0, "direction.x")
            near(st.direction.y, 1, "direction.y")
            near(st.lastAnimationBeginTime, 0, "lastAnimationBeginTime")
            near(w.amplitude, st.amplitude, "handle")
            impulse(w, 1, 0)
            impulse(w, -1, 0)
            near(wobbleModels()[1].lastAnimationBeginTime, \(tL), "lastAnimationBeginTime after")
            assert(untilStill())
            near(time(), \(rest), "rest time")
            assert(wobbleModels()[1].amplitude == 0)
            """)
    }

    func testBadParametersGiveExactErrors() {
        let cases = [
            ("addSketch{motion = 'jelly'}", "addSketch: motion must be \"classic\" or \"spring\" (got \"jelly\")"),
            ("addSketch{motion = 3}", "addSketch: motion must be \"classic\" or \"spring\" (got number)"),
            ("addSketch{motion = 'spring', damping = 1}", "addSketch: damping must be a number in [0, 1)"),
            ("addSketch{motion = 'spring', damping = -0.1}", "addSketch: damping must be a number in [0, 1)"),
            ("addSketch{motion = 'spring', duration = 0}", "addSketch: duration must be a number in (0, 3600]"),
            ("addSketch{motion = 'spring', threshold = -1}", "addSketch: threshold must be a number in [0, 1000]"),
            ("addSketch{motion = 'spring', decay = 0.5}",
             "addSketch: decay applies to motion = \"classic\" only (this sketch's motion is \"spring\")"),
            ("addSketch{damping = 0.5}",
             "addSketch: damping applies to motion = \"spring\" only (this sketch's motion is \"classic\")"),
            ("addSketch().motion = 'jelly'", "sketch: motion must be \"classic\" or \"spring\" (got \"jelly\")"),
            ("addSketch{motion = 'spring'}.damping = 1", "sketch: damping must be a number in [0, 1)"),
            ("overlap('last')", "overlap: mode must be \"sum\" or \"first\" (got \"last\")"),
            ("overlap()", "overlap: mode must be \"sum\" or \"first\" (got no value)"),
            ("edges('wrap')", "edges: mode must be \"mirror\" or \"clamp\" (got \"wrap\")"),
            ("edges(true)", "edges: mode must be \"mirror\" or \"clamp\" (got boolean)"),
        ]
        for (src, expected) in cases {
            XCTAssertEqual(f.message(withImage + src), "scene.lua:2: " + expected, src)
        }
        XCTAssertEqual(f.message(withImage + "overlap('first')\nwait(0.1)\nedges('clamp')"),
                       "scene.lua:4: edges: the edge mode applies to the whole clip: set it before the first frame")
        XCTAssertEqual(f.message(withImage + "wait(1/30)\noverlap('sum')"),
                       "scene.lua:3: overlap: the overlap mode applies to the whole clip: set it before the first frame")
    }

    func testOverlapAndEdgesReachTheFrames() throws {
        let d = try f.run(withImage + "wait(0.1)")
        XCTAssertEqual(d.clip.frame(0).overlap, .sum)
        XCTAssertEqual(d.clip.frame(0).edges, .mirror)
        let r = try f.run(withImage + "overlap('first')\nedges('clamp')\noverlap('sum')\noverlap('first')\nwait(0.1)")
        XCTAssertEqual(r.clip.frame(2).overlap, .first)
        XCTAssertEqual(r.clip.frame(2).edges, .clamp)
    }

    func testPinsInBothModelsAndTheirErrors() throws {
        let r = try f.run(withImage + """
            local a = addSketch{x = 10, y = 10, w = 40, h = 80, pin = "bottom"}
            local b = addSketch{x = 60, y = 10, w = 40, h = 80, motion = "spring", pin = "left"}
            local c = addSketch{x = 110, y = 10, w = 40, h = 80}
            assert(a.pin == "bottom" and b.pin == "left" and c.pin == nil)
            c.pin = "top"
            assert(c.pin == "top")
            c.pin = nil
            assert(c.pin == nil)
            prepare()
            impulse(nil, 1, 0)
            wait(0.2)
            """)
        XCTAssertEqual(r.clip.timeline.snapshot(at: 0).models.map(\.parameters.pin), [.bottom, .left, nil])
        XCTAssertEqual(r.clip.frame(3).regions.map(\.pin), [.bottom, .left, nil])
        XCTAssertEqual(f.message(withImage + "addSketch{x = 0, y = 0, w = 10, h = 10, pin = \"middle\"}"),
                       "scene.lua:2: addSketch: pin must be \"bottom\", \"top\", \"left\" or \"right\" (got \"middle\")")
        XCTAssertEqual(f.message(withImage + "addSketch{x = 0, y = 0, w = 10, h = 10, pin = 1}"),
                       "scene.lua:2: addSketch: pin must be \"bottom\", \"top\", \"left\" or \"right\" (got number)")
        XCTAssertEqual(f.message(withImage + "addSketch{lt = {0, 0}, rt = {40, 0}, rb = {20, 50}, lb = {20, 50}, pin = \"bottom\"}"),
                       "scene.lua:2: addSketch: pin = \"bottom\" needs a bottom side, but lb and rb are the same point")
        XCTAssertEqual(f.message(withImage + "local s = addSketch{lt = {0, 0}, rt = {0, 0}, rb = {20, 50}, lb = {0, 50}}\ns.pin = \"top\""),
                       "scene.lua:3: sketch: pin = \"top\" needs a top side, but lt and rt are the same point")
    }
}
