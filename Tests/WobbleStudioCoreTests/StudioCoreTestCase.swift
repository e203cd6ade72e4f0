import XCTest
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// What the studio core's tests share: a sandbox for the scene, a manual
/// clock, and `settle` (a run of the scene is awaited, never slept for).
class StudioCoreTestCase: XCTestCase {
    var box: Sandbox!
    let clock = ManualClock()

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    /// Lets the runs the commands asked for finish and swaps them in.
    func settle(_ core: StudioCore) {
        for _ in 0..<3 {
            XCTAssertTrue(core.session.waitForRun(upTo: 60), "a run of the scene did not end")
            clock.t += 0.01
            core.tick()
        }
    }
}
