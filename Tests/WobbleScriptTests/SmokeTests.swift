import XCTest
@testable import WobbleScript
import WobbleCore

final class SmokeTests: XCTestCase {
    func testSmoke() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + "local s = addSketch() prepare() impulse(1, 1, 0) wait(0.1) wait(0.1) wait(0.1) print(time(), s)")
        XCTAssertEqual(r.clip.frameCount, 9)
        XCTAssertEqual(f.message(withImage + "impulse(1, 0, 0)"), "scene.lua:2: impulse: no live wobble model #1 (there are 0)")
        XCTAssertEqual(f.message(withImage + "prepare()\nimpulse(nil, 0, 0)"), "scene.lua:3: impulse: direction must be non-zero")
        XCTAssertEqual(f.message("impulse(nil, 'a', 0)"), "scene.lua:1: bad argument #2 to 'impulse' (number expected, got string)")
    }
}
