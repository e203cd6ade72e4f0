import XCTest
@testable import WobbleScript
import WobbleCore

/// Control layer (sketches) and effect layer (wobble models) bindings.
final class LayerAPITests: XCTestCase {
    func testAddSketchForms() throws {
        let f = SceneFixture()
        let r = try f.runWithScene(withImage + """
            local a = addSketch()
            local b = addSketch{lt = {0, 0}, rt = {x = 50, y = 0}, rb = {50, 40}, lb = {0, 40}, center = {20, 20}}
            local c = addSketch{x = 10, y = 20, w = 30, h = 40, duration = 2, decay = 0.5, threshold = 0.2, strength = 0.1}
            local d = addSketch{}
            """)
        let s = r.scene.sketches
        XCTAssertEqual(s.count, 4)
        XCTAssertEqual(s[0].shape, RegionShape(lt: Point(10, 10), rt: Point(100, 10), rb: Point(100, 100), lb: Point(10, 100),
                                               center: Point(55, 55)))
        XCTAssertEqual(s[1].center, Point(20, 20))
        XCTAssertEqual(s[1].rt, Point(50, 0))
        XCTAssertEqual(s[2].shape, RegionShape(lt: Point(10, 20), rt: Point(40, 20), rb: Point(40, 60), lb: Point(10, 60),
                                               center: Point(25, 40)))
        XCTAssertNil(s[2].assignedCenter)
        XCTAssertEqual(s[2].parameters, WobbleParameters(duration: 2, decay: 0.5, threshold: 0.2, strength: 0.1))
        XCTAssertEqual(s[3].lt, Point(10, 10))
    }

    func testAddSketchErrors() {
        let f = SceneFixture()
        let valid = "lt, rt, rb, lb, center, x, y, w, h, motion, duration, strength, decay, damping, threshold, pin, cutout"
        let cases: [(String, String)] = [
            ("addSketch(5)", "bad argument #1 to 'addSketch' (table expected, got number)"),
            ("addSketch{widht = 3}", "addSketch: unknown key 'widht' (valid: \(valid))"),
            ("addSketch{{1, 2}}", "addSketch: unknown key [1] (valid: \(valid))"),
            ("addSketch{x = 1, y = 2, w = 3}", "addSketch: a rectangle needs x, y, w and h (missing h)"),
            ("addSketch{lt = {0, 0}, rt = {1, 0}, lb = {0, 1}}", "addSketch: corners need lt, rt, rb and lb (missing rb)"),
            ("addSketch{lt = {0, 0}, x = 1}", "addSketch: give either corners (lt, rt, rb, lb) or a rectangle (x, y, w, h), not both"),
            ("addSketch{x = 0/0, y = 0, w = 1, h = 1}", "addSketch: x must be a finite number, got nan"),
            ("addSketch{x = 0, y = 0, w = 1/0, h = 1}", "addSketch: w must be a finite number, got inf"),
            ("addSketch{x = 0, y = 0, w = '1', h = 1}", "addSketch: w must be a finite number, got string"),
            ("addSketch{x = 0, y = 0, w = -1, h = 1}", "addSketch: w and h must be >= 0"),
            ("addSketch{x = 1e308, y = 0, w = 1e308, h = 1}", "addSketch: x is 1e+308, outside ±1000000 (image pixels)"),
            // Coordinates are limited (Limits.maxCoordinate), and so are the corners a rectangle makes.
            ("addSketch{x = -1e19, y = -1e19, w = 2e19, h = 2e19}", "addSketch: x is -1e+19, outside ±1000000 (image pixels)"),
            ("addSketch{x = 0, y = 0, w = 1000000.5, h = 1}", "addSketch: x + w is 1000000.5, outside ±1000000 (image pixels)"),
            ("addSketch{x = 600000, y = 0, w = 600000, h = 1}", "addSketch: x + w is 1200000.0, outside ±1000000 (image pixels)"),
            ("addSketch{x = 0, y = math.mininteger, w = 1, h = 1}", "addSketch: y is -9.223372036854776e+18, outside ±1000000 (image pixels)"),
            ("addSketch{lt = {1e7, 0}, rt = {1, 0}, rb = {1, 1}, lb = {0, 1}}", "addSketch: lt[1] is 10000000.0, outside ±1000000 (image pixels)"),
            ("addSketch{center = {x = 1, y = -math.huge}}", "addSketch: center.y must be a finite number, got -inf"),
            ("addSketch{center = {x = 1, y = -1e300}}", "addSketch: center.y is -1e+300, outside ±1000000 (image pixels)"),
            ("local s = addSketch() s.rb = {2e6, 1}", "sketch: rb[1] is 2000000.0, outside ±1000000 (image pixels)"),
            ("addSketch{center = 'c'}", "addSketch: center must be a point {x, y} or {x = .., y = ..}, got string"),
            ("addSketch{center = {}}", "addSketch: center must be a point {x, y} or {x = .., y = ..}, got an empty table"),
            ("addSketch{center = {1}}", "addSketch: center[2] must be a finite number, got nil"),
            ("addSketch{center = {x = 1, y = -1/0}}", "addSketch: center.y must be a finite number, got -inf"),
            ("addSketch{center = {x = 1, y = 2, z = 3}}", "addSketch: center has unknown key 'z' (a point {x, y} or {x = .., y = ..})"),
            ("addSketch{center = {1, 2, x = 1}}", "addSketch: center mixes {x, y} and {x = .., y = ..}"),
            ("addSketch{center = {x = 1, y = {}}}", "addSketch: center.y must be a finite number, got table"),
            ("addSketch{duration = 0}", "addSketch: duration must be a number in (0, 3600]"),
            ("addSketch{decay = 1.5}", "addSketch: decay must be a number in [0, 1]"),
            ("addSketch{threshold = 0/0}", "addSketch: threshold must be a number in [0, 1000]"),
            ("addSketch{strength = 'x'}", "addSketch: strength must be a number, got string"),
        ]
        for (src, expected) in cases {
            XCTAssertEqual(f.message(src), "scene.lua:1: " + expected, src)
        }
        // At the limit, -0 and subnormals are coordinates like any other.
        for src in ["addSketch{x = 0, y = -1000000, w = 1, h = 1}", "addSketch{x = -1000000, y = 0, w = 2000000, h = 1}",
                    "local s = addSketch() s.center = {x = -0.0, y = 5e-324}", "addSketch{lt = {1e6, -1e6}, rt = {1, 0}, rb = {1, 1}, lb = {0, 1}}"] {
            XCTAssertNoThrow(try f.run(withImage + src), src)
        }
    }

    func testTooManySketches() {
        let f = SceneFixture()
        XCTAssertEqual(f.message("for i = 1, 10001 do addSketch() end"),
                       "scene.lua:1: addSketch: too many sketches (the control layer holds at most 10000)")
    }

    func testSketchHandleFieldsAndMethods() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + """
            local s = addSketch{x = 0, y = 0, w = 100, h = 50}
            assert(s.lt.x == 0 and s.lt.y == 0 and s.rb.x == 100 and s.rb.y == 50)
            assert(s.center.x == 50 and s.center.y == 25)
            s.rb = {200, 50}                -- center follows the corners until assigned
            assert(s.center.x == 75, s.center.x)
            s.rt = {x = 200, y = 0}
            assert(s.center.x == 100)
            s.center = {x = 90, y = 20}
            s.lb = {0, 60}
            assert(s.center.x == 90 and s.center.y == 20)
            s.center = nil                  -- back to the mean of the corners
            assert(s.center.x == 100 and s.center.y == 27.5)
            local t = s:topLineCenter() assert(t.x == 100 and t.y == 0)
            local l = s:leftLineCenter() assert(l.x == 0 and l.y == 30)
            local b = s:bottomLineCenter() assert(b.x == 100 and b.y == 55)
            local rr = s:rightLineCenter() assert(rr.x == 200 and rr.y == 25)
            assert(s:contains(s.center.x, s.center.y))
            assert(s:contains(100, 5))
            assert(not s:contains(300, 5))
            assert(not s:contains(-1, -1))
            assert(s.duration == 1.2 and s.decay == 0.7 and s.threshold == 0.1 and s.strength == 0.08)
            s.duration = 2
            assert(s.duration == 2)
            assert(tostring(s) == 'sketch #1', tostring(s))
            assert(getmetatable(s) == 'sketch')
            local list = sketchModels()
            assert(#list == 1 and rawequal(list[1], s) and list[1] == s)
            local u = addSketch()
            assert(u ~= s and #sketchModels() == 2 and sketchModels()[2] == u)
            clear()
            assert(#sketchModels() == 0)
            assert(s.lt.x == 0)          -- a cleared sketch's handle still reads
            """)
        XCTAssertTrue(r.clip.timeline.snapshot(at: r.clip.duration).sketches.isEmpty)
    }

    func testSketchHandleErrors() {
        let f = SceneFixture()
        let pre = "local s = addSketch()\n"
        let cases: [(String, String)] = [
            ("s.lt = 5", "sketch: lt must be a point {x, y} or {x = .., y = ..}, got number"),
            ("s.lt = {1, 0/0}", "sketch: lt[2] must be a finite number, got nan"),
            ("s.widht = 1", "sketch: no field 'widht' (fields: lt, rt, rb, lb, center, motion, duration, strength, decay, damping, threshold, pin)"),
            ("s[1] = 1", "sketch: no field [1] (fields: lt, rt, rb, lb, center, motion, duration, strength, decay, damping, threshold, pin)"),
            ("s.decay = 2", "sketch: decay must be a number in [0, 1]"),
            ("s.decay = 'x'", "sketch: decay must be a number, got string"),
            ("local x = s.centre", "sketch: no field 'centre' (fields: lt, rt, rb, lb, center, motion, duration, strength, decay, damping, threshold, pin;"
                + " methods: topLineCenter, leftLineCenter, bottomLineCenter, rightLineCenter, contains)"),
            ("s:contains('a', 1)", "bad argument #1 to 'contains' (number expected, got string)"),
            ("s:contains(1, 0/0)", "bad argument #2 to 'contains' (finite number expected, got nan)"),
            ("s:contains(1)", "bad argument #2 to 'contains' (number expected, got no value)"),
            ("s.contains(5, 1, 2)", "calling 'contains' on bad self (sketch expected, got number)"),
            ("s.topLineCenter()", "calling 'topLineCenter' on bad self (sketch expected, got no value)"),
            ("prepare() s.topLineCenter(wobbleModels)", "calling 'topLineCenter' on bad self (sketch expected, got function)"),
        ]
        for (src, expected) in cases {
            XCTAssertEqual(f.message(pre + src), "scene.lua:2: " + expected, src)
        }
        XCTAssertEqual(f.message(pre + "prepare()[1].amplitude = 3"), "scene.lua:2: wobble: wobble handles are read-only (field 'amplitude')")
        XCTAssertEqual(f.message(pre + "local x = prepare()[1].speed"),
                       "scene.lua:2: wobble: no field 'speed' (fields: lt, rt, rb, lb, center, direction, amplitude, lastAnimationBeginTime, live)")
    }

    func testPrepareAndWobbleModels() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local a = addSketch{x = 0, y = 0, w = 100, h = 100}
            local b = addSketch()
            wait(0.5)
            local ws = prepare()
            assert(#ws == 2 and #sketchModels() == 0)
            assert(tostring(ws[1]) == 'wobble #3', tostring(ws[1]))
            local m = wobbleModels()
            assert(#m == 2)
            assert(m[1].amplitude == 0 and m[1].direction.x == 0 and m[1].direction.y == 0)
            assert(m[1].lastAnimationBeginTime == 0.5)
            assert(m[1].lt.x == 0 and m[1].rb.y == 100 and m[1].center.x == 50)
            assert(m[2].lt.x == 10)
            impulse(ws[1], 3, 4)
            m = wobbleModels()
            assert(m[1].amplitude == 1 and math.abs(m[1].direction.x - 0.6) < 1e-12 and math.abs(m[1].direction.y - 0.8) < 1e-12)
            assert(m[2].amplitude == 0)
            wait(1.2)                                    -- one cycle: 0.7
            m = wobbleModels()
            assert(math.abs(m[1].amplitude - 0.7) < 1e-12, m[1].amplitude)
            assert(math.abs(m[1].lastAnimationBeginTime - 1.7) < 1e-9)
            assert(ws[1].amplitude == m[1].amplitude and ws[1].live and ws[1].center.x == 50)
            impulse(a, 0, -1, 0.5)                       -- the sketch handle still targets its model
            assert(ws[1].amplitude == 0.5 and ws[1].direction.y == -1)
            impulse(2, 1, 0)                             -- an index
            assert(ws[2].amplitude == 1)
            impulse(nil, -1, 0, 2)                       -- every model
            assert(ws[1].amplitude == 2 and ws[2].amplitude == 2 and ws[1].direction.x == -1)
            wait(1.2 * 3)                                -- 2 → 1.4 → 0.98 → 0.686
            assert(math.abs(ws[1].amplitude - 0.686) < 1e-12)
            local t0 = time()
            assert(untilStill())
            assert(ws[1].amplitude == 0)
            -- 0.686 → 0.4802 → 0.33614 → 0.235298 → 0.1647086 → 0.11529602 → 0.0807 < 0.1: five more cycles
            assert(math.abs(time() - (t0 + 6 * 1.2)) < 1e-9, time() - t0)
            assert(math.abs(ws[1].lastAnimationBeginTime - time()) < 1e-9)
            assert(untilStill())                          -- already still
            """)
    }

    func testWobbleModelsAfterOneCycleAndDecayToZero() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            addSketch() prepare()
            impulse(1, 1, 0)
            wait(1.2)
            assert(math.abs(wobbleModels()[1].amplitude - 0.7) < 1e-12)
            wait(1.2) assert(math.abs(wobbleModels()[1].amplitude - 0.49) < 1e-12)
            wait(1.2) assert(math.abs(wobbleModels()[1].amplitude - 0.343) < 1e-12)
            wait(1.2 * 4)   -- 0.2401, 0.16807, 0.117649, 0.0823543 < 0.1 -> 0 at the 7th boundary
            local m = wobbleModels()[1]
            assert(m.amplitude == 0)
            assert(math.abs(m.lastAnimationBeginTime - 1.2 * 7) < 1e-9, m.lastAnimationBeginTime)
            wait(5)         -- it stays at the start of the cycle in which it reached 0
            assert(math.abs(wobbleModels()[1].lastAnimationBeginTime - 1.2 * 7) < 1e-9)
            """)
    }

    func testImpulseErrors() {
        let f = SceneFixture()
        let pre = withImage + "local s = addSketch() local ws = prepare()\n"
        let cases: [(String, String)] = [
            ("impulse(1, 0, 0)", "impulse: direction must be non-zero"),
            ("impulse(1, 0/0, 1)", "impulse: direction must be finite"),
            ("impulse(1, 1/0, 1)", "impulse: direction must be finite"),
            ("impulse(1, 1, 0, -1)", "impulse: amplitude must be a number in [0, 1000]"),
            ("impulse(1, 1, 0, 0/0)", "impulse: amplitude must be a number in [0, 1000]"),
            ("impulse(1, 1, 0, 'big')", "bad argument #4 to 'impulse' (number expected, got string)"),
            ("impulse(1, '1', 0)", "bad argument #2 to 'impulse' (number expected, got string)"),
            ("impulse(1, 1)", "bad argument #3 to 'impulse' (number expected, got no value)"),
            ("impulse(2, 1, 0)", "impulse: no live wobble model #2 (there is 1)"),
            ("impulse(0, 1, 0)", "impulse: no live wobble model #0 (there is 1)"),
            ("impulse(1.5, 1, 0)", "bad argument #1 to 'impulse' (number has no integer representation)"),
            ("impulse('x', 1, 0)", "bad argument #1 to 'impulse' (wobble, sketch, index or nil expected, got string)"),
            ("impulse({}, 1, 0)", "bad argument #1 to 'impulse' (wobble, sketch, index or nil expected, got table)"),
            ("impulse(addSketch(), 1, 0)", "impulse: sketch #3 has not been prepared (call prepare() first)"),
            ("reset() impulse(ws[1], 1, 0)", "impulse: wobble model is no longer live (after reset() or another prepare())"),
            ("reset() impulse(s, 1, 0)", "impulse: wobble model is no longer live (after reset() or another prepare())"),
            ("addSketch() prepare() impulse(ws[1], 1, 0)", "impulse: wobble model is no longer live (after reset() or another prepare())"),
        ]
        for (src, expected) in cases {
            XCTAssertEqual(f.message(pre + src), "scene.lua:3: " + expected, src)
        }
        XCTAssertNoThrow(try f.run(pre + "reset() impulse(nil, 1, 0) assert(#wobbleModels() == 0 and not ws[1].live)"))
        XCTAssertNoThrow(try f.run(pre + "assert(tostring(ws[1]) == 'wobble #2') reset() assert(tostring(ws[1]) == 'wobble #2 (not live)')"))
    }

    func testPrepareAgainReplacesAndEmptyPrepareLeavesNone() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            addSketch() addSketch()
            local a = prepare()
            assert(#wobbleModels() == 2)
            local b = prepare()
            assert(#b == 0 and #wobbleModels() == 0 and not a[1].live)
            """)
    }

    func testTouch() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            addSketch{x = 0, y = 0, w = 100, h = 100}
            addSketch{x = 200, y = 0, w = 100, h = 100}
            local ws = prepare()
            assert(touch(500, 500, 510, 500) == nil)            -- miss
            assert(touch(250, 50, 250, 50) == nil)              -- zero-length drag
            assert(ws[2].amplitude == 0)
            local hit = touch(250, 50, 250, 60)
            assert(hit == ws[2] and rawequal(hit, ws[2]))
            assert(ws[2].amplitude == 1 and ws[2].direction.y == 1 and ws[1].amplitude == 0)
            """)
        XCTAssertEqual(f.message("touch(1, 2, 3)"), "scene.lua:1: bad argument #4 to 'touch' (number expected, got no value)")
        XCTAssertEqual(f.message("touch(1, 2, 3, 0/0)"), "scene.lua:1: touch: coordinates must be finite numbers")
    }

    func testTouchHitsTheInnermostRegion() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local body = addSketch{x = 0, y = 0, w = 200, h = 200}
            local head = addSketch{x = 50, y = 50, w = 60, h = 60}
            local ws = prepare()
            assert(touch(80, 80, 80, 90) == ws[2])              -- inside the head: the head
            assert(ws[2].amplitude == 1 and ws[1].amplitude == 0)
            assert(touch(100, 160, 110, 160) == ws[1])          -- the body outside the head
            """)
    }

    func testShakeRequiresEnableMotion() throws {
        let f = SceneFixture()
        XCTAssertEqual(f.message(withImage + "shake(2, 0)"), "scene.lua:2: shake: motion is off: call enableMotion() first")
        XCTAssertEqual(f.message(withImage + "enableMotion() shake(2)"), "scene.lua:2: bad argument #2 to 'shake' (number expected, got no value)")
        XCTAssertEqual(f.message(withImage + "enableMotion() shake(1/0, 0)"), "scene.lua:2: shake: acceleration must be finite")
        XCTAssertEqual(f.message(withImage + "enableMotion() reset() shake(2, 0)"), "scene.lua:2: shake: motion is off: call enableMotion() first")
        try f.run(withImage + """
            addSketch() local ws = prepare()
            enableMotion()
            shake(0.5, 0.5)                 -- |a| <= 1: nothing
            assert(ws[1].amplitude == 0)
            shake(0, 2)                     -- device y up: image direction (0, -1)
            assert(ws[1].amplitude == 1 and ws[1].direction.y == -1)
            shake(2, 0)                     -- amplitude 1 >= 0.3: ignored
            assert(ws[1].direction.y == -1)
            """)
    }

    func testMotionTraceAppliedAtItsTimes() throws {
        let f = SceneFixture()
        f.write("traces/t.csv", "t,ax,ay\n0.5, 2, 0\n\n0.25,0.1,0.1\n")
        let r = try f.run(withImage + """
            addSketch() local ws = prepare()
            wait(1)
            enableMotion('traces/t.csv')
            wait(0.5)
            -- the sample due at 1.5 is applied before wait(0.5) returns
            assert(ws[1].amplitude == 1 and ws[1].direction.x == 1, ws[1].amplitude)
            assert(ws[1].lastAnimationBeginTime == 1.5)
            wait(0.1)
            """)
        // Frame 45 (t = 1.5) sees the impulse, frame 44 does not.
        XCTAssertEqual(r.clip.frame(44).regions.count, 0)
        let snap = r.clip.timeline.snapshot(at: 1.5)
        XCTAssertEqual(snap.models.first?.impulse?.start, 1.5)
        XCTAssertNil(r.clip.timeline.snapshot(at: 1.5 - 1e-6).models.first?.impulse)
    }

    func testMotionTraceErrors() {
        let f = SceneFixture()
        f.write("bad.csv", "t,ax,ay\n0.1,1,1\n0.2,x,1\n")
        XCTAssertEqual(f.message(withImage + "enableMotion('bad.csv')"),
                       "scene.lua:2: enableMotion: bad.csv:3:5: column ax: expected a finite number")
        XCTAssertEqual(f.message(withImage + "enableMotion('none.csv')"),
                       "scene.lua:2: enableMotion: cannot read trace 'none.csv': No such file or directory")
        XCTAssertEqual(f.message(withImage + "enableMotion(5)"),
                       "scene.lua:2: bad argument #1 to 'enableMotion' (string expected, got number)")
    }

    func testResetDropsEverything() throws {
        let f = SceneFixture()
        f.write("t.csv", "1,2,0\n")
        let r = try f.runWithScene(withImage + """
            addSketch() prepare() impulse(1, 1, 0) addSketch()
            enableMotion('t.csv')
            reset()
            assert(#wobbleModels() == 0 and #sketchModels() == 0)
            addSketch() prepare()
            wait(2)                        -- the pending trace sample was dropped
            assert(wobbleModels()[1].amplitude == 0)
            """)
        XCTAssertFalse(r.scene.motionEnabled)
    }

    func testOverlayIsRecorded() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + "addSketch() wait(0.1) overlay(true) wait(0.1) overlay(false) wait(0.1)")
        XCTAssertFalse(r.clip.frame(0).overlayOn)
        XCTAssertTrue(r.clip.frame(3).overlayOn)
        XCTAssertEqual(r.clip.frame(3).overlay.count, 1)
        XCTAssertFalse(r.clip.frame(6).overlayOn)
        XCTAssertEqual(f.message("overlay()"), "scene.lua:1: bad argument #1 to 'overlay' (boolean expected, got no value)")
        XCTAssertEqual(f.message("overlay(1)"), "scene.lua:1: bad argument #1 to 'overlay' (boolean expected, got number)")
    }
}
