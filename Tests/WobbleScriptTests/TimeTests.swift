import XCTest
@testable import WobbleScript
import WobbleCore

/// wait, time, untilStill and the frames they give.
final class TimeTests: XCTestCase {
    func testThreeWaitsAt30FPSGiveNineFrames() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + "wait(0.1) wait(0.1) wait(0.1) assert(math.abs(time() - 0.3) < 1e-12)")
        XCTAssertEqual(r.clip.frameCount, 9)
        XCTAssertEqual(r.clip.fps, 30)
    }

    func testAScriptThatNeverWaitsGivesOneFrame() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + "assert(time() == 0)")
        XCTAssertEqual(r.clip.frameCount, 1)
        XCTAssertEqual(r.clip.duration, 0)
    }

    func testWaitErrors() {
        let f = SceneFixture()
        XCTAssertEqual(f.message(withImage + "wait(-1)"), "scene.lua:2: wait: seconds must be a finite number >= 0")
        XCTAssertEqual(f.message(withImage + "wait(0/0)"), "scene.lua:2: wait: seconds must be a finite number >= 0")
        XCTAssertEqual(f.message(withImage + "wait('1')"), "scene.lua:2: bad argument #1 to 'wait' (number expected, got string)")
        XCTAssertEqual(f.message("addSketch() wait(1)"),
                       "scene.lua:1: wait: no image: call image(path) before the first frame, or pass --image")
    }

    func testUntilStill() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            assert(untilStill() == true and time() == 0)
            addSketch() prepare() impulse(1, 1, 0)
            assert(untilStill(1) == false and time() == 1)
            assert(untilStill() == true)
            -- 1 → 0.7 → 0.49 → 0.343 → 0.2401 → 0.16807 → 0.117649 → 0: seven cycles
            assert(math.abs(time() - 7 * 1.2) < 1e-9, time())
            addSketch{decay = 1} prepare() impulse(1, 1, 0)
            assert(untilStill(2) == false)
            """)
        XCTAssertEqual(f.message(withImage + "addSketch{decay = 1} prepare() impulse(1, 1, 0) untilStill()"),
                       "scene.lua:2: untilStill: a model never comes to rest (decay = 1 or threshold = 0): give maxSeconds")
        XCTAssertEqual(f.message(withImage + "untilStill(-1)"), "scene.lua:2: untilStill: maxSeconds must be a finite number >= 0")
        XCTAssertEqual(f.message(withImage + "untilStill('x')"),
                       "scene.lua:2: bad argument #1 to 'untilStill' (number expected, got string)")
    }
}
