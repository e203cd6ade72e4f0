import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// The core's one clock loop: `tick()` turns it at its clock's now (it
/// keeps when it next looks at the scene's inputs), and
/// `secondsToNextTurn(presented:)` tells a surface how long it may wait for
/// input, as the window's loop used to work out itself. On a manual clock:
/// no time is slept for.
final class StudioClockTests: StudioCoreTestCase {
    func makeCore() throws -> StudioCore {
        try box.writeImage("img.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("s.lua", """
        image("img.png")
        fps(30)
        addSketch{x = 10, y = 10, w = 40, h = 40}
        prepare()
        wait(0.5)

        """)
        return startedCore()
    }

    /// Paused, the next turn is the inputs' next look; playing, the next
    /// frame's time when the frame due is on screen, at once when it is not
    /// (or when something is to be drawn, or the wait is under 2 ms).
    func testTheCoreSaysWhenItsNextTurnIsDue() throws {
        let core = try makeCore()
        let poll = core.watch.pollInterval
        // A turn at which the inputs are looked at: the next look is `poll` away.
        core.perform(.pause)
        clock.t += 1
        core.tick()
        core.dirty = false
        XCTAssertFalse(core.playing)
        XCTAssertEqual(core.secondsToNextTurn(presented: core.currentIndex), poll, accuracy: 1e-9, "paused: the inputs' next look")
        core.dirty = true
        XCTAssertEqual(core.secondsToNextTurn(presented: core.currentIndex), 0, "something is to be drawn")

        // Playing from frame 3 (0.1 s) with frame 3 on screen: frame 4 is due at 4/30 s.
        core.perform(.seek(frame: 3))
        core.perform(.togglePlay)
        core.dirty = false
        XCTAssertTrue(core.playing)
        XCTAssertEqual(core.secondsToNextTurn(presented: 3), min(poll, 4.0 / 30 - 0.1), accuracy: 1e-9)
        XCTAssertEqual(core.secondsToNextTurn(presented: 2), 0, "frame 3 is due and not on screen: at once")
        clock.t += 0.02
        let left = min(max(0, poll - 0.02), 4.0 / 30 - 0.12)
        XCTAssertEqual(core.secondsToNextTurn(presented: 3), left < 0.002 ? 0 : left, accuracy: 1e-9)
        clock.t += 0.015
        XCTAssertEqual(core.secondsToNextTurn(presented: 3), 0, "frame 4 is due (0.135 s): at once")
        core.tick()
        XCTAssertEqual(core.currentIndex, 4, "the turn moved the playhead on by the clock")
    }
}
