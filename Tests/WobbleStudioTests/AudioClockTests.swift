import XCTest
import WobbleSystem
@testable import WobbleStudio
@testable import WobbleStudioCore

/// The audio clock between a device's takes, and the track a device plays
/// (the clip's sound, offset, looping, muted).
final class AudioClockTests: XCTestCase {
    func testTheSampleHeardMovesWithTheClockWithinWhatWasTakenAndNeverBack() {
        var c = AudioClock(rate: 1000, latency: 100)
        XCTAssertEqual(c.heard(at: 5), 0, "nothing taken yet")
        c.took(100, at: 10)
        XCTAssertEqual(c.heard(at: 10.05), 0, "the first block is not heard before the latency")
        c.took(100, at: 10.1)
        XCTAssertEqual(c.heard(at: 10.1), 0)
        XCTAssertEqual(c.heard(at: 10.15), 50, accuracy: 1e-9)
        XCTAssertEqual(c.heard(at: 11), 100, accuracy: 1e-9, "a late take: no further than what was taken")
        c.took(100, at: 11.01)
        XCTAssertEqual(c.heard(at: 11.01), 100, accuracy: 1e-9)
        XCTAssertEqual(c.heard(at: 11.04), 130, accuracy: 1e-9)
        // An early take: the position does not go back.
        c.took(100, at: 11.05)
        XCTAssertEqual(c.heard(at: 11.05), 200, accuracy: 1e-9)
        c.took(100, at: 11.06)
        XCTAssertEqual(c.heard(at: 11.06), 300, accuracy: 1e-9)
        XCTAssertEqual(c.heard(at: 11.055), 300, accuracy: 1e-9, "never back")
    }

    func testATrackPlaysTheSoundAtItsOffsetLoopingOverTheClip() throws {
        // 10 samples a second; the sound at 0.2 s of a 0.6 s clip.
        let t = AudioTrack(samples: try CheckedArray.copy(of: [1, 2, 3]), rate: 10, offset: 0.2, clipLength: 0.6)
        XCTAssertEqual(t.start, 2)
        XCTAssertEqual(t.length, 6)
        var out = [Float](repeating: 9, count: 8)
        let next = out.withUnsafeMutableBufferPointer { t.fill($0, from: 0, muted: false) }
        XCTAssertEqual(out, [0, 0, 1, 2, 3, 0, 0, 0])
        XCTAssertEqual(next, 2)
        let from3 = out.withUnsafeMutableBufferPointer { t.fill($0, from: 3, muted: false) }
        XCTAssertEqual(out, [2, 3, 0, 0, 0, 1, 2, 3], "clip samples 3, 4, 5, then 0, 1, 2, 3, 4")
        XCTAssertEqual(from3, 5)
        _ = out.withUnsafeMutableBufferPointer { t.fill($0, from: 2, muted: true) }
        XCTAssertEqual(out, [Float](repeating: 0, count: 8), "muted: silence")
        // A negative offset cuts the sound's start; a position outside the clip starts it over.
        let cut = AudioTrack(samples: try CheckedArray.copy(of: [1, 2, 3]), rate: 10, offset: -0.1, clipLength: 0.4)
        var four = [Float](repeating: 9, count: 4)
        _ = four.withUnsafeMutableBufferPointer { cut.fill($0, from: 99, muted: false) }
        XCTAssertEqual(four, [2, 3, 0, 0])
    }

    func testTheSyncSummarySaysThePictureAgainstTheSoundAndTheClockDrift() {
        var s = SyncStats()
        XCTAssertNil(s.summary)
        s.started(playhead: 0, at: 100)
        s.presented(frameTime: 0.0, heard: 0.01, clipLength: 2, at: 100.01)
        s.presented(frameTime: 0.9, heard: 0.92, clipLength: 2, at: 100.9)
        // Across the loop: frame 1.9 s while the sound is at 0.01 s: 110 ms behind, not 1.89 s ahead.
        s.presented(frameTime: 1.9, heard: 0.01, clipLength: 2, at: 102.0)
        XCTAssertEqual(s.offsets.map { ($0 * 10).rounded() / 10 }, [-10, -20, -110])
        XCTAssertEqual(s.clockDrift, 10, accuracy: 1e-6, "2.01 s of sound in 2.0 s of the clock")
        XCTAssertEqual(s.summary, "studio: sound: 3 frames presented with the sound, picture minus sound median -20.0 ms, worst -110.0 ms; the sound's clock +10.0 ms from the wall clock over 2.0 s")
    }
}
