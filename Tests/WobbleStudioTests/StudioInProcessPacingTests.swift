import Foundation
import XCTest
import WobbleCore
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

/// The studio's pacing on a machine slower than the clip, in-process: each
/// present takes manual time, and the studio shows the frame due when it
/// presents (skipping the ones it had no time for), never falling behind
/// the clock.
final class StudioInProcessPacingTests: InProcessStudioCase {
    func testALateFramePresentsTheDueFrameAndTheClockDoesNotDrift() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        // 20 fps, 60 frames (the test plays the first 28), the region
        // moving all the time.
        try box.write("s.lua", """
        image("img.png")
        fps(20)
        addSketch{x = 6, y = 5, w = 28, h = 20, duration = 5}
        prepare()
        impulse(1, 1, 0.3)
        wait(3)
        """)
        let expected = try headlessFrames("s.lua", count: 30)
        for i in 1..<expected.count { XCTAssertNotEqual(expected[i], expected[i - 1], "frame \(i) moves") }
        let clock = ManualClock()
        let t0 = clock.t
        // Each present takes 0.13 s: 2.6 frames of the clip.
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0, .key(.h, shift: false, ctrl: false)),   // handles off: the bare frame
            (t0 + 1.4, .quit),
        ], prepare: { s, _ in s.presentCost = 0.13 })
        XCTAssertEqual(status, 0)
        // Each picture is the frame due when it was presented (the clock's
        // frame, not the one after the last shown), found by its pixels
        // (this motion swings back: frames 24 and 26 look alike).
        let shown = surface.frames.compactMap { f in f.image.map { (at: f.at - t0, image: $0) } }
        let due = shown.map { Int(($0.at * 20 + 1e-6).rounded(.down)) }
        let described = zip(shown, due).map { (($0.at * 1000).rounded() / 1000, $1, expected.firstIndex(of: $0.image) ?? -1) }
        for (s, k) in zip(shown, due) {
            XCTAssertTrue(expected[k] == s.image, "the frame shown at \(s.at) is frame \(k): (time, due, shown) \(described)")
        }
        // Frames the machine had no time for are skipped, not shown late:
        // one picture per present (0.13 s), 2 or 3 frames apart.
        var sequence: [Int] = []
        for k in due where k != sequence.last { sequence.append(k) }
        XCTAssertGreaterThanOrEqual(sequence.count, 10, "\(described)")
        XCTAssertLessThanOrEqual(shown.count, 12, "one picture per present: \(described)")
        XCTAssertTrue(zip(sequence, sequence.dropFirst()).allSatisfy { (2...3).contains($1 - $0) }, "\(sequence)")
        // No drift: the last picture, shown after 1.3 s, is frame 26.
        XCTAssertEqual(shown.last?.at ?? 0, 1.31, accuracy: 0.011, "\(described)")
        XCTAssertEqual(due.last, 26, "\(described)")
    }
}
