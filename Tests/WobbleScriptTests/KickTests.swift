import XCTest
@testable import WobbleScript
import WobbleCore

/// The kicks a run records for the studio's timeline: kind, time and the
/// line of the call (in the scene or in a module, by its name).
final class KickTests: XCTestCase {
    func testEveryKickIsRecordedWithItsTimeKindAndLine() throws {
        let f = SceneFixture()
        f.write("lib/pokes.lua", "return function()\n  impulse(nil, 0, 1)\nend\n")
        f.write("t.csv", "0,0,1.5\n0.25,1.5,0\n")
        let r = try f.run(withImage + """
        addSketch{x = 10, y = 10, w = 50, h = 50}
        prepare()
        impulse(nil, 1, 0)
        wait(0.5)
        touch(20, 20, 30, 20)
        enableMotion("t.csv")
        shake(1.5, 0)
        wait(0.5)
        require("lib.pokes")()
        """)
        XCTAssertEqual(r.kicks, [
            ScriptKick(time: 0, kind: "impulse", line: 4),
            ScriptKick(time: 0.5, kind: "touch", line: 6),
            ScriptKick(time: 0.5, kind: "trace sample", line: 7),
            ScriptKick(time: 0.75, kind: "trace sample", line: 7),
            ScriptKick(time: 0.5, kind: "shake", line: 8),
            ScriptKick(time: 1, kind: "impulse", line: 2, file: "pokes.lua"),
        ])
    }
}
