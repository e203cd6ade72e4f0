import XCTest
@testable import WobbleScript

/// `loop()` switched on and off in a scene's text (the studio's `L`).
final class LoopSourceTests: XCTestCase {
    func switched(_ s: String, on: Bool, waits: [StillWait] = []) throws -> String {
        String(decoding: try LoopSource.switched(Array(s.utf8), on: on, waits: waits, name: "s.lua"), as: UTF8.self)
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
