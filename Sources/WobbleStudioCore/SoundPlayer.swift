import WobbleEngine

/// The scene's soundtrack in the studio: played with the playhead while
/// the clip plays (silent while paused, stepping, scrubbing or recording a
/// take), looping with the clip, muted with `M`; the clip sample heard is
/// the clock the preview follows, so picture and sound cannot drift apart.
/// Without an audio device the studio plays silently on the wall clock and
/// says so once.
package final class SoundPlayer {
    /// The device, opened when a scene first has a soundtrack.
    private let open: () throws -> any AudioSink
    private var sink: (any AudioSink)?
    /// Why there is no device (nil: not tried yet, or there is one).
    package private(set) var unavailable: String?
    /// The scene's soundtrack and the clip length the track was made for.
    private var source: (sound: SceneSound, clipLength: Double)?
    package private(set) var track: AudioTrack?
    /// The device is playing the track.
    package private(set) var isPlaying = false
    package private(set) var muted = false
    /// Says a line in the window's status (an error when the flag is set).
    package var status: (String, Bool) -> Void = { _, _ in }
    /// How the picture kept with the sound (`-v`).
    package private(set) var sync = SyncStats()

    package init(open: @escaping () throws -> any AudioSink) {
        self.open = open
    }

    /// What plays: the device's name, or why nothing is heard.
    package var deviceName: String? { sink?.name }

    /// Takes the session's soundtrack after a run (`sound` nil: none) for a
    /// clip `clipLength` long. A changed sound or clip makes a new track;
    /// while playing it goes on from `playhead` (a reload keeps the time).
    package func update(sound: SceneSound?, clipLength: Double, playhead: Double, now: Double) {
        guard let sound, clipLength > 0 else {
            if isPlaying { stop() }
            source = nil
            track = nil
            return
        }
        if let s = source, s.clipLength == clipLength, s.sound == sound { return }
        source = (sound, clipLength)
        track = AudioTrack(samples: sound.samples, rate: sound.sampleRate, offset: sound.track.offset, clipLength: clipLength)
        if sink == nil && unavailable == nil {
            do {
                sink = try open()
                sink?.muted = muted
            } catch {
                unavailable = "\(error)"
                status("\(error): the soundtrack '\(sound.track.shown)' is not heard; the preview keeps the wall clock", false)
            }
        }
        if isPlaying { start(at: playhead, now: now) }
    }

    /// Plays from clip time `playhead` (nothing without a track or device).
    package func start(at playhead: Double, now: Double) {
        guard let sink, let track else { return }
        let p = AudioTrack.samples(playhead, rate: track.rate)
        sink.play(track, from: min(max(0, p), track.length - 1))
        isPlaying = true
        sync.started(playhead: playhead, at: now)
    }

    package func stop() {
        guard isPlaying else { return }
        sink?.stop()
        isPlaying = false
        sync.stopped()
    }

    /// `M`: mutes or unmutes (the clock goes on either way); the new state.
    package func toggleMute() -> Bool {
        muted.toggle()
        sink?.muted = muted
        return muted
    }

    /// The clip time heard now while the track plays (the preview's clock);
    /// nil when nothing plays.
    package func clipTime(at now: Double) -> Double? {
        guard isPlaying, let track, let heard = sink?.heard(at: now) else { return nil }
        return heard / Double(track.rate)
    }

    /// Frame `k` (time `frameTime`) was presented at `now` while playing:
    /// how far it is from the sound heard then.
    package func presented(frameTime: Double, clipLength: Double, at now: Double) {
        guard let heard = clipTime(at: now) else { return }
        sync.presented(frameTime: frameTime, heard: heard, clipLength: clipLength, at: now)
    }

    /// Closes the device.
    package func close() {
        stop()
        sink = nil
    }
}

/// How the picture kept with the sound while it played: the offset of each
/// frame presented from the sound heard then (the frame shown is the one
/// at or before the sound, so it is within one frame behind it), and how
/// the sound's clock ran against the wall clock (which a preview on the
/// wall clock would drift by).
package struct SyncStats {
    /// Picture minus sound, milliseconds, per frame presented.
    package private(set) var offsets: [Double] = []
    /// The sound's clock minus the wall clock since playing started, ms.
    package private(set) var clockDrift = 0.0
    /// Seconds of wall clock the drift was measured over.
    package private(set) var measuredSeconds = 0.0
    /// Where and when playing started, and the sound's time unwrapped
    /// since (a loop adds the clip's length).
    private var origin: (playhead: Double, at: Double)?
    private var lastHeard = 0.0
    private var loops = 0.0

    package mutating func started(playhead: Double, at now: Double) {
        origin = (playhead, now)
        lastHeard = playhead
        loops = 0
    }

    package mutating func stopped() { origin = nil }

    package mutating func presented(frameTime: Double, heard: Double, clipLength: Double, at now: Double) {
        var d = frameTime - heard
        // Across the loop point: the frame and the sound on either side.
        if d > clipLength / 2 { d -= clipLength } else if d < -clipLength / 2 { d += clipLength }
        offsets.append(d * 1000)
        guard let o = origin else { return }
        // (The sound heard never goes back while it plays, but at the loop.)
        if heard < lastHeard - 1e-6 { loops += clipLength }
        lastHeard = heard
        let soundSeconds = heard + loops - o.playhead
        let wall = now - o.at
        // (The start waits for the device's first samples: measure after it.)
        if wall > 0.5 {
            clockDrift = (soundSeconds - wall) * 1000
            measuredSeconds = wall
        }
    }

    /// `-v`'s line, nil before any frame was presented with sound.
    package var summary: String? {
        guard !offsets.isEmpty else { return nil }
        let s = offsets.sorted()
        let median = s[s.count / 2]
        let worst = s.max { abs($0) < abs($1) } ?? 0
        var line = "studio: sound: \(s.count) frames presented with the sound, picture minus sound median \(fmt1(median)) ms, worst \(fmt1(worst)) ms"
        if measuredSeconds > 0 {
            line += "; the sound's clock \(clockDrift >= 0 ? "+" : "")\(fmt1(clockDrift)) ms from the wall clock over \(fmt1(measuredSeconds)) s"
        }
        return line
    }
}
