import Foundation

/// Synthetic tracks with known onset and beat times: drums made from
/// noise and sines, a soft pad. Test data (generated at test time, small
/// and the same every run), benchmarks (`wobble-sound-bench`) and the
/// gallery's drum loop (`Scripts/make-drums.sh`): their licence is ours.
public struct SyntheticTrack: Sendable {
    public var samples: [Float]
    public let sampleRate: Int
    /// Every note or hit start, in seconds, in order.
    public var onsets: [Double]
    /// Every beat (quarter note), in seconds; empty for the pad.
    public var beats: [Double]

    public var duration: Double { Double(samples.count) / Double(sampleRate) }
}

/// Builds `SyntheticTrack`s.
public enum DrumSynth {
    public static let sampleRate = 44_100

    /// Kick on beats 1 and 3, snare on 2 and 4, a hat on every eighth note;
    /// `bars` bars of 4/4 at `bpm` starting at `start` seconds. `swing`
    /// (0.5: straight, 2/3: triplet swing) places the off-beat eighths.
    public static func drums(bpm: Double, bars: Int, start: Double = 0.1, swing: Double = 0.5) -> SyntheticTrack {
        drums(tempo: [(bpm, bars * 4)], start: start, swing: swing)
    }

    /// Drums whose tempo changes: each `(bpm, beats)` section in turn
    /// (for example `[(120, 16), (96, 20)]`).
    public static func drums(tempo sections: [(bpm: Double, beats: Int)], start: Double = 0.1,
                             swing: Double = 0.5, tail: Double = 1) -> SyntheticTrack {
        var beats: [Double] = []
        var hits: [(time: Double, kind: Hit)] = []
        var t = start
        var index = 0
        for (bpm, count) in sections {
            let period = 60 / bpm
            for _ in 0..<count {
                beats.append(t)
                hits.append((t, index % 2 == 0 ? .kick : .snare))
                hits.append((t, .hat))
                hits.append((t + swing * period, .hat))
                t += period
                index += 1
            }
        }
        let length = Int(((t + tail) * Double(sampleRate)).rounded())
        var mix = [Double](repeating: 0, count: length)
        var noise = Noise(seed: 0x5EED)
        for (time, kind) in hits { kind.add(into: &mix, at: time, noise: &noise) }
        let onsets = Array(Set(hits.map { Sound.milliseconds($0.time) })).sorted()
        return SyntheticTrack(samples: finish(mix), sampleRate: sampleRate, onsets: onsets, beats: beats)
    }

    /// A syncopated funk groove: the kick on every beat, the snare and an
    /// open hat on the off-beat eighths (the snare on the "and" of 2 and
    /// 4, louder than the kick in every band but the lowest), a closed
    /// hat on every sixteenth and soft ghost snares on the "e" and "a"
    /// of some beats; `bars` bars of 4/4 at `bpm`. Most of the sound's
    /// rise falls between the beats: a tracker that follows the loudest
    /// onsets finds the off-beats. `beats` are the kicks.
    public static func funk(bpm: Double, bars: Int, start: Double = 0.1, tail: Double = 1) -> SyntheticTrack {
        let period = 60 / bpm, sixteenth = period / 4
        var beats: [Double] = []
        var hits: [(time: Double, kind: Hit, gain: Double)] = []
        for b in 0..<(bars * 4) {
            let t = start + Double(b) * period
            beats.append(t)
            hits.append((t, .kick, 1))
            for k in 0..<4 { hits.append((t + Double(k) * sixteenth, .hat, k == 2 ? 1.6 : 0.5)) }
            if b % 2 == 1 { hits.append((t + 2 * sixteenth, .snare, 1.4)) } else { hits.append((t + 2 * sixteenth, .snare, 0.7)) }
            // Ghost notes: soft snares around the beat, varying bar to bar.
            if b % 4 == 1 || b % 4 == 3 { hits.append((t + 3 * sixteenth, .snare, 0.25)) }
            if b % 4 == 2 { hits.append((t + sixteenth, .snare, 0.25)) }
        }
        let end = start + Double(bars * 4) * period
        let length = Int(((end + tail) * Double(sampleRate)).rounded())
        var mix = [Double](repeating: 0, count: length)
        var noise = Noise(seed: 0xF0_4C)
        for (time, kind, gain) in hits { kind.add(into: &mix, at: time, noise: &noise, gain: gain) }
        let onsets = Array(Set(hits.map { Sound.milliseconds($0.time) })).sorted()
        return SyntheticTrack(samples: finish(mix), sampleRate: sampleRate, onsets: onsets, beats: beats)
    }

    /// White noise of `amplitude` (uniform, seeded): no onsets, no pulse.
    public static func noise(seconds: Double, amplitude: Double = 0.3, seed: UInt64 = 0x401_5E) -> SyntheticTrack {
        var n = Noise(seed: seed)
        let count = Int((seconds * Double(sampleRate)).rounded())
        let samples = (0..<count).map { _ in Float(amplitude * n.next()) }
        return SyntheticTrack(samples: samples, sampleRate: sampleRate, onsets: [], beats: [])
    }

    /// A soft pad: chords of three detuned notes with an 80 ms attack,
    /// changing at uneven times; the onsets are the chord starts.
    public static func pad(chords: Int = 16, start: Double = 0.2) -> SyntheticTrack {
        let roots: [Double] = [220, 246.94, 196, 261.63, 174.61, 233.08, 207.65, 293.66]
        let gaps: [Double] = [0.9, 1.1, 0.7, 1.3, 0.8, 1.0, 1.2, 0.75]
        var onsets: [Double] = []
        var t = start
        for i in 0..<chords {
            onsets.append(Sound.milliseconds(t))
            t += gaps[i % gaps.count]
        }
        let length = Int(((t + 1.5) * Double(sampleRate)).rounded())
        var mix = [Double](repeating: 0, count: length)
        let sr = Double(sampleRate)
        for (i, on) in onsets.enumerated() {
            let off = i + 1 < onsets.count ? onsets[i + 1] : on + 1
            let root = roots[i % roots.count]
            for ratio in [1.0, 1.25, 1.5] {
                let f = root * ratio
                let first = Int((on * sr).rounded()), last = min(length, Int(((off + 0.3) * sr).rounded()))
                for j in first..<last {
                    let u = Double(j - first) / sr
                    let attack = min(1, u / 0.08)
                    let release = Double(j) / sr > off ? max(0, 1 - (Double(j) / sr - off) / 0.3) : 1
                    let env = attack * attack * (3 - 2 * attack) * release
                    var v = 0.0
                    for (h, a) in [(1.0, 1.0), (2.0, 0.4), (3.0, 0.2)] {
                        v += a * sin(2 * Double.pi * f * h * u)
                    }
                    mix[j] += 0.08 * env * v
                }
            }
        }
        return SyntheticTrack(samples: finish(mix), sampleRate: sampleRate, onsets: onsets, beats: [])
    }

    /// Clicks (single-sample impulses of `amplitude`) at `times`, in `duration` s of silence.
    public static func clicks(at times: [Double], duration: Double, amplitude: Float = 0.9) -> SyntheticTrack {
        var s = [Float](repeating: 0, count: Int((duration * Double(sampleRate)).rounded()))
        for t in times {
            let i = Int((t * Double(sampleRate)).rounded())
            if i >= 0, i < s.count { s[i] = amplitude }
        }
        return SyntheticTrack(samples: s, sampleRate: sampleRate, onsets: times, beats: [])
    }

    enum Hit {
        case kick, snare, hat

        func add(into mix: inout [Double], at time: Double, noise: inout Noise, gain: Double = 1) {
            let sr = Double(DrumSynth.sampleRate)
            let first = Int((time * sr).rounded())
            let length: Double = self == .kick ? 0.35 : self == .snare ? 0.25 : 0.08
            /// Fades the last 20 ms out: a hit never ends in a step (a click).
            func fade(_ u: Double) -> Double { min(1, (length - u) / 0.02) }
            switch self {
            case .kick:
                var phase = 0.0
                for i in 0..<Int(0.35 * sr) where first + i < mix.count {
                    let u = Double(i) / sr
                    let f = 50 + 90 * exp(-u / 0.03)
                    phase += 2 * Double.pi * f / sr
                    mix[first + i] += gain * fade(u) * 0.9 * exp(-u / 0.12) * sin(phase)
                }
            case .snare:
                for i in 0..<Int(0.25 * sr) where first + i < mix.count {
                    let u = Double(i) / sr
                    mix[first + i] += gain * fade(u) * (0.45 * exp(-u / 0.06) * noise.next() + 0.3 * exp(-u / 0.05) * sin(2 * Double.pi * 185 * u))
                }
            case .hat:
                var last = 0.0
                for i in 0..<Int(0.08 * sr) where first + i < mix.count {
                    let u = Double(i) / sr
                    let n = noise.next()
                    mix[first + i] += gain * fade(u) * 0.25 * exp(-u / 0.015) * (n - last)
                    last = n
                }
            }
        }
    }

    static func finish(_ mix: [Double]) -> [Float] {
        mix.map { Float(max(-1, min(1, $0 * 0.7))) }
    }

    /// SplitMix64 noise in [−1, 1).
    struct Noise {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 52) - 1
        }
    }
}

/// WAV files: 16-bit PCM, mono.
public enum WAVFile {
    /// The bytes of a 16-bit mono PCM WAV of `samples` (clamped to [−1, 1]).
    public static func encode(_ samples: [Float], sampleRate: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(44 + samples.count * 2)
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        let data = UInt32(samples.count * 2)
        out += Array("RIFF".utf8); u32(36 + data); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * 2)); u16(2); u16(16)
        out += Array("data".utf8); u32(data)
        for s in samples {
            let v = Int16(max(-32767, min(32767, (Double(s) * 32767).rounded())))
            u16(UInt16(bitPattern: v))
        }
        return out
    }
}
