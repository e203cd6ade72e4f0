import WobbleSystem
import WobbleAudio
import WobbleScript

/// The scene's soundtrack as a live session has it: what `soundtrack()`
/// chose, its samples, and its beats and onsets on the clip's time (the
/// studio plays the samples with the playhead and draws the times as
/// ticks). Computed with the run, off the window thread.
public struct SceneSound: Sendable, Equatable {
    /// The file, where it starts on the clip (`offset`) and its length.
    public var track: Soundtrack
    /// Mono samples at `sampleRate` (the sound's time 0 at clip time `track.offset`).
    public var samples: CheckedArray<Float>
    public var sampleRate: Int
    /// Beat times on the clip (the sound's `:beats()` moved by the offset),
    /// those from 0 on.
    public var beats: [Double]
    /// Onset times on the clip (`:onsets()` with its defaults), from 0 on.
    public var onsets: [Double]

    public init(track: Soundtrack, samples: CheckedArray<Float>, sampleRate: Int, beats: [Double], onsets: [Double]) {
        self.track = track
        self.samples = samples
        self.sampleRate = sampleRate
        self.beats = beats
        self.onsets = onsets
    }

    /// The soundtrack of a run's result (nil when the scene calls no `soundtrack()`).
    init?(_ result: ScriptResult) {
        guard let track = result.soundtrack, let sound = result.soundtrackSound else { return nil }
        func onClip(_ times: [Double]) -> [Double] {
            times.map { Sound.milliseconds($0 + track.offset) }.filter { $0 >= 0 }
        }
        self.init(track: track, samples: sound.samples, sampleRate: sound.sampleRate,
                  beats: onClip(sound.beats()), onsets: onClip(sound.onsets()))
    }
}
