import WobbleSystem

/// The soundtrack as the audio device plays it: the scene's samples laid
/// on the clip's time, looping over the clip. Immutable, so the device's
/// thread reads it while the window thread makes the next one.
package final class AudioTrack: Sendable {
    /// Mono samples; `samples[0]` plays at clip sample `start`.
    package let samples: CheckedArray<Float>
    /// Samples per second.
    package let rate: Int
    /// The clip sample of the sound's first sample (`soundtrack(s, offset)`:
    /// `offset × rate`, negative when the sound's start is cut).
    package let start: Int
    /// The clip's length in samples: playing wraps to 0 there, as the
    /// preview loops (at least 1).
    package let length: Int

    package init(samples: CheckedArray<Float>, rate: Int, offset: Double, clipLength: Double) {
        self.samples = samples
        self.rate = max(1, rate)
        start = AudioTrack.samples(offset, rate: self.rate)
        length = max(1, AudioTrack.samples(clipLength, rate: self.rate))
    }

    /// Seconds as whole samples (clamped to a range that cannot overflow).
    package static func samples(_ seconds: Double, rate: Int) -> Int {
        let x = (seconds * Double(rate)).rounded()
        guard x.isFinite else { return 0 }
        return Int(max(-1e15, min(1e15, x)))
    }

    /// Fills `out` with the clip's sound from clip sample `position` on
    /// (wrapping at the clip's end; silence where the sound is not, or
    /// everywhere when `muted`); returns the clip sample after the last.
    package func fill(_ out: UnsafeMutableBufferPointer<Float>, from position: Int, muted: Bool) -> Int {
        var p = position >= length || position < 0 ? 0 : position
        for i in 0..<out.count {
            let j = p - start
            out[i] = !muted && j >= 0 && j < samples.count ? samples[j] : 0
            p += 1
            if p >= length { p = 0 }
        }
        return p
    }
}

/// The audio device as the studio sees it: it plays a track from a clip
/// sample on and says which sample is heard now (the clock the preview
/// follows). SDL audio in the window (`SDLAudioSink`); a fake in tests that
/// takes samples as a manual clock passes.
package protocol AudioSink: AnyObject {
    /// Plays `track` from clip sample `position` (whatever played stops).
    func play(_ track: AudioTrack, from position: Int)
    /// Stops playing (the device takes no more samples).
    func stop()
    /// The clip sample heard at clock time `now`, in [0, track length)
    /// (fractional); nil while stopped.
    func heard(at now: Double) -> Double?
    /// Silence instead of the track; the samples are still taken (the
    /// clock goes on).
    var muted: Bool { get set }
    /// What the device is (`-v`).
    var name: String { get }
}

/// Where a device that takes its samples in blocks is between two takes:
/// the samples taken so far, the clock time of the last take, and the
/// delay from a sample being taken to its being heard. Samples taken at `t`
/// are heard from `t + latency` on, one per 1/rate s; between takes the
/// position moves on with the clock, never past what was taken, never back.
package struct AudioClock {
    /// Samples per second.
    package let rate: Double
    /// Samples between being taken and heard (the device's own buffer).
    package let latency: Int
    /// Samples taken before the last take.
    private var before = 0
    /// Samples taken, the last take's included.
    package private(set) var taken = 0
    /// Clock time of the last take (nil: none yet).
    private var lastTake: Double?
    /// The last position answered (positions never go back).
    private var lastHeard = 0.0

    package init(rate: Double, latency: Int) {
        self.rate = rate
        self.latency = max(0, latency)
    }

    /// The device took `n` samples at clock time `t`.
    package mutating func took(_ n: Int, at t: Double) {
        before = taken
        taken += max(0, n)
        lastTake = t
    }

    /// Samples heard since playing started, at clock time `now`.
    package mutating func heard(at now: Double) -> Double {
        guard let t = lastTake else { return 0 }
        let since = min(max(0, (now - t) * rate), Double(taken - before))
        let h = max(lastHeard, Double(before) + since - Double(latency), 0)
        lastHeard = h
        return h
    }
}

/// Why the studio plays without sound: no audio driver, SDL's `dummy` one
/// (nothing is heard), or a device that would not open.
package struct AudioUnavailable: Error, CustomStringConvertible {
    package var description: String
    package init(description: String) { self.description = description }
}
