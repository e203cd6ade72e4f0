import XCTest
@testable import WobbleScript
import WobbleCore

/// `loop()` switched on and off in a scene's text (the studio's `L`).
final class LoopSourceTests: XCTestCase {
    func switched(_ s: String, on: Bool, waits: [StillWait] = [], period: LoopSource.PeriodWait? = nil) throws -> String {
        String(decoding: try LoopSource.switched(Array(s.utf8), on: on, waits: waits, period: period, name: "s.lua"), as: UTF8.self)
    }

    func testOnWritesItsLineBeforeTheFirstStepAndTurnsUntilStillIntoItsWait() throws {
        let text = "image(\"a.png\")\nlocal r = addSketch()\n  prepare()\ntouch(1, 2, 3, 4)\nuntilStill()  -- rest\n"
        let out = try switched(text, on: true, waits: [StillWait(line: 5, file: nil, start: 0, end: 2.3456789)])
        XCTAssertEqual(out, "image(\"a.png\")\nlocal r = addSketch()\n  loop()\n  prepare()\ntouch(1, 2, 3, 4)\nwait(2.346)  -- rest\n")
        // A module's untilStill is not the scene's to change; a scene that loops already is left alone.
        XCTAssertEqual(try switched("prepare()\nwait(1)\n", on: true, waits: [StillWait(line: 2, file: "m.lua", start: 0, end: 1)]),
                       "loop()\nprepare()\nwait(1)\n")
        XCTAssertEqual(try switched("loop()\nprepare()\n", on: true), "loop()\nprepare()\n")
        // No step at all: at the end.
        XCTAssertEqual(try switched("image(\"a.png\")", on: true), "image(\"a.png\")\nloop()\n")
    }

    /// A loop switched on with the period the animator watched: the last
    /// `untilStill()` waits up to it, or a wait follows the script; whole
    /// milliseconds rounded down (never a frame more); nothing when the
    /// script reaches the period itself; a last `return` is refused.
    func testThePeriodWaitEndsTheScriptAtTheClipWatched() throws {
        let still = StillWait(line: 3, file: nil, start: 0.5, end: 2)
        let w = try XCTUnwrap(LoopSource.periodWait(period: 22.0 / 3, scriptEnd: 2, waits: [still]))
        XCTAssertEqual(w, LoopSource.PeriodWait(from: 0.5, seconds: 6.833, replacing: still))
        XCTAssertEqual(Scene.frameCount(end: w.end, fps: 30), 220, "7.333 s: 220 frames at 30 fps, as 22/3 s")
        XCTAssertEqual(try switched("prepare()\nwait(0.5)\nuntilStill()\n", on: true, waits: [still], period: w),
                       "loop()\nprepare()\nwait(0.5)\nwait(6.833)\n")
        // The script ended with a wait (or a module's untilStill): a wait after it.
        let after = try XCTUnwrap(LoopSource.periodWait(period: 9.2, scriptEnd: 0.5, waits: []))
        XCTAssertEqual(after, LoopSource.PeriodWait(from: 0.5, seconds: 8.7, replacing: nil))
        XCTAssertEqual(try switched("prepare()\nwait(0.5)", on: true, period: after), "loop()\nprepare()\nwait(0.5)\nwait(8.7)\n")
        XCTAssertEqual(try switched("image(\"a.png\")\n", on: true, period: after), "image(\"a.png\")\nloop()\nwait(8.7)\n")
        XCTAssertNil(LoopSource.periodWait(period: 2, scriptEnd: 2, waits: [still]))
        XCTAssertNil(LoopSource.periodWait(period: 1.5, scriptEnd: 2, waits: []))
        XCTAssertThrowsError(try switched("prepare()\nwait(0.5)\nreturn\n", on: true, period: after)) { e in
            XCTAssertEqual("\(e)", "s.lua:3: the scene returns before the loop's end (9.2 s): put wait(8.7) before it in a text editor")
        }
    }

    func testAnUntilStillInsideAStatementIsRefused() {
        XCTAssertThrowsError(try switched("prepare()\nif untilStill() then print(1) end\n", on: true,
                                          waits: [StillWait(line: 2, file: nil, start: 0, end: 1)])) { e in
            XCTAssertEqual("\(e)", "s.lua:2: untilStill() never returns in a loop and is part of a longer statement: replace it with wait(seconds) in a text editor")
        }
    }

    func testOffTakesOutItsOwnLinesAndRefusesOneInsideAStatement() throws {
        XCTAssertEqual(try switched("image(\"a.png\")\n  loop() -- forever\nprepare()\nwait(1)\n", on: false),
                       "image(\"a.png\")\nprepare()\nwait(1)\n")
        XCTAssertThrowsError(try switched("if true then loop() end\nprepare()\n", on: false)) { e in
            XCTAssertEqual("\(e)", "s.lua:1: loop() is part of a longer statement: take it out in a text editor")
        }
        XCTAssertEqual(LoopSource.loopLines(Array("a()\nloop()\nx.loop()\n".utf8)), [2])
        XCTAssertFalse(LoopSource.callsLoop(Array("x.loop()\n-- loop()\n".utf8)))
    }
}
