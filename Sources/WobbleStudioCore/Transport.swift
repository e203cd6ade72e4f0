import WobbleSystem

/// The transport: the playhead and whether it plays. Playing, the playhead
/// follows the clock and loops over the clip; paused, it stays; stepping
/// and seeking pause and clamp to the clip's frames. Recording a take, it
/// is the scripted clip's end plus the time since recording started (the
/// live clock the take's events are stamped with).
package struct Transport {
    package let clock: TimeSource
    package private(set) var playhead = 0.0
    package private(set) var playing = true
    /// The clock when the playhead was last moved.
    private var lastWall: Double
    /// The clock when the take being recorded started.
    private var recordingSince: Double?
    /// How many times the playhead was put somewhere (a seek): the sound
    /// playing starts again there.
    package private(set) var jumps = 0

    package init(clock: TimeSource) {
        self.clock = clock
        lastWall = clock.now()
    }

    package var isRecording: Bool { recordingSince != nil }

    /// The playhead at the clock's `now`, without moving it (while playing
    /// or recording: which frame is due).
    package func current(at now: Double) -> Double { playhead + (now - lastWall) }

    /// Moves the playhead to the clock's present: by the time passed while
    /// playing (looping at `clipLength`); while recording, to the scripted
    /// clip's end (`scriptedEnd`, as the latest run says) plus the live clock.
    package mutating func advance(clipLength: Double, scriptedEnd: Double) {
        let now = clock.now()
        let dt = now - lastWall
        lastWall = now
        if let since = recordingSince {
            playhead = scriptedEnd + (now - since)
            return
        }
        guard playing, clipLength > 0 else { return }
        playhead += dt
        if playhead >= clipLength - 1e-9 {
            playhead = playhead.truncatingRemainder(dividingBy: clipLength)
            if !(playhead.isFinite && playhead >= 0) { playhead = 0 }
        }
    }

    /// Play/pause (`Space`): playing resumes from where the playhead is.
    package mutating func togglePlaying() {
        playing.toggle()
        lastWall = clock.now()
    }

    /// Pauses (stepping, scrubbing).
    package mutating func pause() { playing = false }

    /// Puts the playhead on frame `k`, clamped to the clip's frames.
    package mutating func seek(frame k: Int, frameCount: Int, fps: Double) {
        guard frameCount > 0, fps > 0 else { return }
        playhead = Double(max(0, min(k, frameCount - 1))) / fps
        jumps += 1
    }

    /// Puts the playhead on clip time `t`, the sound heard now: while the
    /// soundtrack plays, its samples are the clock (picture and sound
    /// cannot drift apart).
    package mutating func follow(_ t: Double) {
        playhead = t
        lastWall = clock.now()
    }

    /// Starts the live clock of a take at the scripted clip's end, playing.
    package mutating func startRecording(from scriptedEnd: Double) {
        recordingSince = clock.now()
        playhead = scriptedEnd
        playing = true
    }

    /// Seconds since recording started (nil when not recording).
    package var recordedSeconds: Double? { recordingSince.map { clock.now() - $0 } }

    /// Stops recording (playing on from there): the seconds recorded.
    package mutating func stopRecording() -> Double? {
        guard let s = recordedSeconds else { return nil }
        recordingSince = nil
        lastWall = clock.now()
        playing = true
        return s
    }
}
