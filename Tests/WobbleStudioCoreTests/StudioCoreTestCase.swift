import XCTest
import WobbleEngine
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

    /// A studio core on the scene `s.lua` in the box (CPU backend, no
    /// audio device; `configure` may change more), started and settled.
    func startedCore(configure: (inout SessionOptions) -> Void = { _ in }) -> StudioCore {
        var options = SessionOptions(scenePath: box.path("s.lua"))
        options.backend = .cpu
        configure(&options)
        let core = StudioCore(session: options, verbose: false, clock: clock,
                              audio: { throw AudioUnavailable(description: "no audio device in the tests") })
        core.start()
        settle(core)
        return core
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
