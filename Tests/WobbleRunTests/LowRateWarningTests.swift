import Foundation
import XCTest
import WobbleTestSupport

/// The "nothing moves" warning says the true cause: at `--fps 0.5` a clip
/// of 1.5 s has one frame, at 0 s, and an impulse at 1 s comes after it
/// (the warning blamed the impulse's amplitude).
final class LowRateWarningTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
    }

    override func tearDown() { box = nil }

    func warnings(_ scene: String, _ extra: [String]) throws -> [String] {
        try box.write("w.lua", scene)
        let r = try Tool.run(["w.lua", "--check"] + extra, cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stderr.split(separator: "\n").filter { $0.hasPrefix("wobble-run: warning: nothing moves") }.map(String.init)
    }

    func testAnImpulseAfterTheLastFrameIsNamedAsTheCause() throws {
        let late = """
            image("img.png")
            local r = addSketch{x = 8, y = 6, w = 24, h = 18}
            prepare()
            wait(1)
            impulse(r, 1, 0)
            wait(0.5)
            """
        XCTAssertEqual(try warnings(late, ["--fps", "0.5"]), [
            "wobble-run: warning: nothing moves in the clip's 1 frame (the first impulse, touch or shake comes at 1 s, after the last frame: the only frame is at 0 s at 0.5 fps; wait() longer after it, or raise the frame rate)",
        ])
        // Four frames at 2 fps (0, 0.5, 1, 1.5 s), the impulse at 1.6 s.
        let later = late.replacingOccurrences(of: "wait(1)\n", with: "wait(1.6)\n").replacingOccurrences(of: "wait(0.5)", with: "wait(0.3)")
        XCTAssertEqual(try warnings(later, ["--fps", "2"]), [
            "wobble-run: warning: nothing moves in the clip's 4 frames (the first impulse, touch or shake comes at 1.6 s, after the last frame: the last frame, 3, is at 1.5 s at 2 fps; wait() longer after it, or raise the frame rate)",
        ])
        // At the usual rate the impulse is seen: no warning.
        XCTAssertEqual(try warnings(late, []), [])
        // An amplitude of 0 is still named as such.
        let zero = late.replacingOccurrences(of: "impulse(r, 1, 0)", with: "impulse(r, 1, 0, 0)")
        XCTAssertEqual(try warnings(zero, []), [
            "wobble-run: warning: nothing moves in the clip's 45 frames (an impulse, touch or shake reached a region, but its amplitude or strength is 0)",
        ])
    }
}
