import XCTest
import WobbleCore
import WobbleMedia
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

/// A game controller's accelerometer, in-process: gravity is followed and
/// removed (a steady tilt never shakes), a jolt above 1 g is a shake in
/// the device's direction (x right, y up), at most one every 0.15 s, and
/// a take records each at its millisecond.
final class StudioInProcessControllerTests: InProcessStudioCase {
    func testAJoltIsAShakeGravityIsNotAndShakesAreSpacedOut() throws {
        let sceneText = try writeShakeScene()
        let clock = ManualClock()
        let t0 = clock.t
        var script: [(at: Double, input: StudioInput)] = [(t0 + 0.1, .key(.r, shift: false, ctrl: false))]
        // Held still, tilted: gravity alone (0, -1 g), then tilted further
        // (0.6, -0.8): the change is below 1 g, never a shake.
        for k in 0..<5 { script.append((t0 + 0.12 + 0.01 * Double(k), .accel(x: 0, y: -1, z: 0))) }
        for k in 0..<5 { script.append((t0 + 0.18 + 0.01 * Double(k), .accel(x: 0.6, y: -0.8, z: 0))) }
        // A jolt to the right at 0.3 s: gravity as followed (a tenth of the
        // way to each reading) is then about (0.48, -0.91); the shake is
        // what is left, about (2.08, 0.11).
        script.append((t0 + 0.3, .accel(x: 2.56, y: -0.8, z: 0)))
        // Another jolt 0.1 s later is too soon; one 0.2 s later counts.
        script.append((t0 + 0.4, .accel(x: 2.56, y: -0.8, z: 0)))
        script.append((t0 + 0.5, .accel(x: -2, y: 2, z: 0)))
        script += [(t0 + 0.9, .key(.r, shift: false, ctrl: false)), (t0 + 1.0, .quit)]
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: script)
        XCTAssertEqual(status, 0)
        XCTAssertTrue(app.message.hasSuffix("s-take-1.lua (2 events)"), app.message)
        // The high-pass filter, step by step, as the studio runs it.
        var g = (0.0, -1.0)
        for (x, y) in Array(repeating: (0.0, -1.0), count: 5) + Array(repeating: (0.6, -0.8), count: 5) + [(2.56, -0.8)] {
            g = (g.0 * 0.9 + x * 0.1, g.1 * 0.9 + y * 0.1)
        }
        let first = (2.56 - g.0, -0.8 - g.1)
        g = (g.0 * 0.9 + 2.56 * 0.1, g.1 * 0.9 - 0.8 * 0.1)
        g = (g.0 * 0.9 - 2 * 0.1, g.1 * 0.9 + 2 * 0.1)
        let second = (-2 - g.0, 2 - g.1)
        func n(_ v: Double) -> String { NumberText.plain((v * 1000).rounded() / 1000) }
        XCTAssertEqual(try read("s-take-1.lua"), sceneText + """

        -- Take recorded with `wobble-run edit s.lua`: what was performed
        -- after the scripted clip, to the millisecond.
        enableMotion()
        wait(0.2)
        shake(\(n(first.0)), \(n(first.1)))
        wait(0.2)
        shake(\(n(second.0)), \(n(second.1)))
        untilStill()

        """)
    }
}
