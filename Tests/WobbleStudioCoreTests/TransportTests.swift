import XCTest
@testable import WobbleStudioCore
import WobbleSystem

/// The studio's transport in-process, on a manual clock (no window, no
/// sleeping): play, pause, step, seek, loop, and a take's live clock.
final class TransportTests: XCTestCase {
    let clock = ManualClock()

    func testPlayingFollowsTheClockAndLoopsOverTheClip() {
        var tr = Transport(clock: clock)
        XCTAssertTrue(tr.playing)
        clock.t += 0.4
        XCTAssertEqual(tr.current(at: clock.now()), 0.4, accuracy: 1e-12, "what is due, without moving")
        XCTAssertEqual(tr.playhead, 0)
        tr.advance(clipLength: 1, scriptedEnd: 1)
        XCTAssertEqual(tr.playhead, 0.4, accuracy: 1e-12)
        clock.t += 0.7
        tr.advance(clipLength: 1, scriptedEnd: 1)
        XCTAssertEqual(tr.playhead, 0.1, accuracy: 1e-9, "looped at the clip's end")
        // No clip: the playhead stays.
        clock.t += 0.3
        tr.advance(clipLength: 0, scriptedEnd: 0)
        XCTAssertEqual(tr.playhead, 0.1, accuracy: 1e-9)
    }

    func testPausedTheClockPassesAndThePlayheadStaysThenResumesWithoutAJump() {
        var tr = Transport(clock: clock)
        clock.t += 0.25
        tr.advance(clipLength: 2, scriptedEnd: 2)
        tr.togglePlaying()
        XCTAssertFalse(tr.playing)
        clock.t += 5
        tr.advance(clipLength: 2, scriptedEnd: 2)
        XCTAssertEqual(tr.playhead, 0.25, accuracy: 1e-12)
        tr.togglePlaying()
        clock.t += 0.5
        tr.advance(clipLength: 2, scriptedEnd: 2)
        XCTAssertEqual(tr.playhead, 0.75, accuracy: 1e-12, "the paused time is not played")
    }

    func testSeekAndStepClampToTheClipsFrames() {
        var tr = Transport(clock: clock)
        tr.pause()
        tr.seek(frame: 12, frameCount: 30, fps: 30)
        XCTAssertEqual(tr.playhead, 0.4, accuracy: 1e-12)
        tr.seek(frame: -1, frameCount: 30, fps: 30)
        XCTAssertEqual(tr.playhead, 0)
        tr.seek(frame: 99, frameCount: 30, fps: 30)
        XCTAssertEqual(tr.playhead, 29.0 / 30, accuracy: 1e-12)
        clock.t += 1
        tr.advance(clipLength: 1, scriptedEnd: 1)
        XCTAssertEqual(tr.playhead, 29.0 / 30, accuracy: 1e-12, "stepping pauses")
        // No clip to seek in: nothing moves.
        tr.seek(frame: 3, frameCount: 0, fps: 30)
        XCTAssertEqual(tr.playhead, 29.0 / 30, accuracy: 1e-12)
    }

    func testATakesLiveClockStartsAtTheScriptedEnd() {
        var tr = Transport(clock: clock)
        tr.pause()
        XCTAssertNil(tr.recordedSeconds)
        tr.startRecording(from: 2)
        XCTAssertTrue(tr.isRecording)
        XCTAssertTrue(tr.playing)
        XCTAssertEqual(tr.playhead, 2)
        clock.t += 1.5
        XCTAssertEqual(tr.recordedSeconds ?? -1, 1.5, accuracy: 1e-12)
        tr.advance(clipLength: 2, scriptedEnd: 2)
        XCTAssertEqual(tr.playhead, 3.5, accuracy: 1e-12, "past the clip's end: no loop while recording")
        clock.t += 0.25
        XCTAssertEqual(tr.stopRecording() ?? -1, 1.75, accuracy: 1e-12)
        XCTAssertFalse(tr.isRecording)
        XCTAssertNil(tr.stopRecording())
        XCTAssertTrue(tr.playing)
    }
}
