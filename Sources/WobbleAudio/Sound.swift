import WobbleSystem

/// A decoded sound and what is measured on it: onsets, beats, tempo and
/// level (Lua's `sound(path)` handle). Mono samples at `sampleRate`
/// (44 100 Hz as `sound()` decodes them). Every figure is computed on one
/// thread in a fixed order from `ExactMath` and IEEE operations, so the
/// same samples give the same numbers on every machine; times are
/// rounded to the millisecond.
public final class Sound: @unchecked Sendable {
    /// The samples, mono, nominally in [−1, 1] (memory allocated through
    /// a checked path: a long sound is one error, not a trap).
    public let samples: CheckedArray<Float>
    public let sampleRate: Int
    /// Seconds.
    public var duration: Double { Double(samples.count) / Double(sampleRate) }

    /// Samples per block of `squareSums`.
    static let block = 4096
    /// The running sum of squares at every block's start (index k: the
    /// first k · block samples): `level` adds the rest of a block in the
    /// same order, so its sums are the same bits as a sum over every
    /// sample, for 1/2048 of the memory of one sum per sample.
    private lazy var squareSums: [Double] = {
        var sums: [Double] = []
        sums.reserveCapacity(samples.count / Sound.block + 1)
        var s = 0.0
        samples.withUnsafeBufferPointer { x in
            for i in 0..<x.count {
                if i % Sound.block == 0 { sums.append(s) }
                s += Double(x[i]) * Double(x[i])
            }
        }
        if samples.count % Sound.block == 0 { sums.append(s) }
        return sums
    }()
    private lazy var spectra = Spectra(samples: samples, sampleRate: sampleRate)
    private var onsetCache: [OnsetOptions: [Double]] = [:]
    private var beatCache: (beats: [Double], tempo: Double)?

    public init(samples: CheckedArray<Float>, sampleRate: Int) {
        precondition(sampleRate > 0)
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// An upper bound on the memory the analysis of `sampleCount` samples
    /// takes at once (onsets, beats, tempo: some 240 bytes per 10 ms
    /// frame, 0.55 bytes a sample; doubled for a margin), so a caller can
    /// make sure of it before (`CheckedMemory.ensureRoom`).
    public static func analysisBytes(sampleCount: Int) -> Int { max(0, sampleCount) }

    /// A sound of samples the program made (a copy, checked).
    public convenience init(samples: [Float], sampleRate: Int) throws {
        self.init(samples: try CheckedArray.copy(of: samples), sampleRate: sampleRate)
    }

    /// The sum of the squares of the first `i` samples, summed in order.
    private func squareSum(_ i: Int) -> Double {
        let k = i / Sound.block
        var s = squareSums[k]
        samples.withUnsafeBufferPointer { x in
            for j in (k * Sound.block)..<i { s += Double(x[j]) * Double(x[j]) }
        }
        return s
    }

    /// RMS of the samples in `[t0, t1)` seconds (silence outside the
    /// sound), clamped to [0, 1]; 0 for an empty interval.
    public func level(from t0: Double, to t1: Double) -> Double {
        let n = samples.count
        let a = Sound.sampleIndex(t0, sampleRate), b = Sound.sampleIndex(t1, sampleRate)
        guard b > a else { return 0 }
        let lo = min(max(a, 0), n), hi = min(max(b, 0), n)
        let sum = max(0, squareSum(hi) - squareSum(lo))
        return min(1, (sum / Double(b - a)).squareRoot())
    }

    /// Onset times in seconds (ms), in order.
    public func onsets(_ options: OnsetOptions = OnsetOptions()) -> [Double] {
        if let known = onsetCache[options] { return known }
        let times = OnsetPicker.pick(spectra.detection(options.method), framesPerSecond: spectra.framesPerSecond,
                                     threshold: options.threshold ?? options.method.defaultThreshold,
                                     minGap: options.minGap).map { Sound.milliseconds(spectra.time(ofFrame: $0)) }
        onsetCache[options] = times
        return times
    }

    /// Beat times in seconds (ms), following tempo changes.
    public func beats() -> [Double] { beatAnalysis().beats }

    /// Beats per minute: the median beat period (0.01 BPM); 0 when fewer
    /// than two beats were found.
    public func tempo() -> Double { beatAnalysis().tempo }

    private func beatAnalysis() -> (beats: [Double], tempo: Double) {
        if let known = beatCache { return known }
        let frames = BeatTracker.track(spectra.detection(.flux), low: spectra.lowFlux(), framesPerSecond: spectra.framesPerSecond)
        let beats = frames.map { Sound.milliseconds(spectra.time(ofFrame: $0)) }
        var tempo = 0.0
        if beats.count >= 2 {
            let gaps = zip(beats.dropFirst(), beats).map { $0 - $1 }.sorted()
            let m = gaps.count % 2 == 1 ? gaps[gaps.count / 2] : (gaps[gaps.count / 2 - 1] + gaps[gaps.count / 2]) / 2
            tempo = m > 0 ? (6000 / m).rounded() / 100 : 0
        }
        beatCache = (beats, tempo)
        return (beats, tempo)
    }

    /// Seconds rounded to whole milliseconds.
    public static func milliseconds(_ t: Double) -> Double { (t * 1000).rounded() / 1000 }

    static func sampleIndex(_ t: Double, _ rate: Int) -> Int {
        let x = (t * Double(rate)).rounded()
        if x >= Double(Int.max / 2) { return Int.max / 2 }
        if x <= Double(Int.min / 2) { return Int.min / 2 }
        return Int(x)
    }
}

/// How `Sound.onsets` finds onsets (Lua: `s:onsets{method =, threshold =, minGap =}`).
public struct OnsetOptions: Hashable, Sendable {
    /// The detection function.
    public enum Method: String, CaseIterable, Sendable {
        /// Spectral flux: the rise of every frequency bin's (compressed)
        /// magnitude; the general choice.
        case flux
        /// The rise of the frame's energy: loud hits only.
        case energy
        /// High-frequency content: hats, clicks, consonants.
        case hfc

        var defaultThreshold: Double {
            switch self {
            case .flux: 0.08
            case .energy: 0.1
            case .hfc: 0.1
            }
        }
    }

    public var method: Method
    /// How far above the local median (a fraction of the loudest rise in
    /// the sound) a peak must reach; nil: the method's default.
    public var threshold: Double?
    /// The shortest time between two onsets, in seconds.
    public var minGap: Double

    public init(method: Method = .flux, threshold: Double? = nil, minGap: Double = 0.03) {
        self.method = method
        self.threshold = threshold
        self.minGap = minGap
    }
}
