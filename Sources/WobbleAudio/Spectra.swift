import Dispatch
import WobbleSystem

/// The onset detection functions of a sound, one value per analysis frame:
/// frames of 2048 samples (46 ms, Hann window) every 10 ms, centred on their time
/// (frame `t` at `t · hop / sampleRate` s). Computed in one pass; only the
/// previous frame's spectrum is kept, so memory follows the frame count.
final class Spectra: @unchecked Sendable {
    static let frameSize = 2048
    let hop: Int
    let sampleRate: Int
    var framesPerSecond: Double { Double(sampleRate) / Double(hop) }
    private var functions: [OnsetOptions.Method: [Double]] = [:]
    private var low: [Double] = []
    /// Slices computed side by side (tests compare 1 with 2 and 3).
    var threads = 2
    private let samples: CheckedArray<Float>

    init(samples: CheckedArray<Float>, sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
        hop = max(1, Int((Double(sampleRate) / 100).rounded()))
    }

    /// Frame `t`'s time in seconds.
    func time(ofFrame t: Int) -> Double { Double(t * hop) / Double(sampleRate) }

    /// The detection function of `method`, normalised so its largest value is 1.
    func detection(_ method: OnsetOptions.Method) -> [Double] {
        if functions.isEmpty { compute() }
        return functions[method] ?? []
    }

    /// The spectral flux of the lowest bins only (up to `lowTop`: 21.5 to
    /// 129 Hz at 44.1 kHz, where a kick drum is and little else is),
    /// normalised so its largest value is 1: the beat tracker's phase.
    func lowFlux() -> [Double] {
        if functions.isEmpty { compute() }
        return low
    }

    /// The highest bin of `lowFlux` (bins are 21.5 Hz apart at 44.1 kHz).
    static let lowTop = 6

    /// Frames whose history a slice recomputes before its first frame:
    /// the maximum filter's memory (and the previous frame's energy).
    static let memory = 3

    private func compute() {
        let count = samples.isEmpty ? 0 : samples.count / hop + 1
        // Two slices of frames on two threads: each frame's values depend
        // only on the samples, and a slice first recomputes the frames its
        // first one looks back at, so the result is the same bits as one
        // pass (no sum crosses a slice).
        let parts = count >= 400 ? threads : 1
        let bounds = (0...parts).map { count * $0 / parts }
        let results = Slots(parts)
        let work = { @Sendable (p: Int) in
            results.values[p] = self.slice(bounds[p]..<bounds[p + 1])
        }
        Parallel.run(parts, work)
        var flux: [Double] = [], energy: [Double] = [], hfc: [Double] = [], low: [Double] = []
        for r in results.values { flux += r.flux; energy += r.energy; hfc += r.hfc; low += r.low }
        func normalised(_ v: [Double]) -> [Double] {
            let top = v.max() ?? 0
            return top > 0 ? v.map { $0 / top } : v
        }
        functions = [.flux: normalised(flux), .energy: normalised(energy), .hfc: normalised(hfc)]
        self.low = normalised(low)
    }

    /// One result per slice; each thread writes its own slot only.
    private final class Slots: @unchecked Sendable {
        typealias Value = (flux: [Double], energy: [Double], hfc: [Double], low: [Double])
        let values: UnsafeMutableBufferPointer<Value>
        init(_ n: Int) {
            values = .allocate(capacity: n)
            values.initialize(repeating: ([], [], [], []))
        }
        deinit {
            values.deinitialize()
            values.deallocate()
        }
    }

    /// The detection functions of `frames`.
    private func slice(_ frames: Range<Int>) -> Slots.Value {
        let n = Spectra.frameSize, bins = n / 2 + 1, hop = self.hop, memory = Spectra.memory
        var fft = RealFFT(size: n)
        let (c, _) = ExactMath.unitCircle(n, count: n)
        let window = c.map { 0.5 - 0.5 * $0 }
        var frame = [Double](repeating: 0, count: n)
        var mags = [Double](repeating: 0, count: bins)
        // The compressed spectra of the last `memory` frames (a ring of
        // rows, with a zero bin either side), and the reference.
        let stride = bins + 2
        var history = [Double](repeating: 0, count: memory * stride)
        var reference = [Double](repeating: 0, count: bins)
        var flux = [Double](repeating: 0, count: frames.count)
        var energy = [Double](repeating: 0, count: frames.count)
        var hfc = [Double](repeating: 0, count: frames.count)
        var low = [Double](repeating: 0, count: frames.count)
        let lowTop = min(Spectra.lowTop, bins - 1)
        var lastEnergy = 0.0, lastHFC = 0.0
        let warmUp = max(0, frames.lowerBound - memory)
        samples.withUnsafeBufferPointer { x in
          window.withUnsafeBufferPointer { w in
            frame.withUnsafeMutableBufferPointer { f in
              mags.withUnsafeMutableBufferPointer { m in
                history.withUnsafeMutableBufferPointer { hist in
                  reference.withUnsafeMutableBufferPointer { ref in
                    for t in warmUp..<frames.upperBound {
                        let start = t * hop - n / 2
                        if start >= 0 && start + n <= x.count {
                            for i in 0..<n { f[i] = Double(x[start + i]) * w[i] }
                        } else {
                            for i in 0..<n {
                                let j = start + i
                                f[i] = j >= 0 && j < x.count ? Double(x[j]) * w[i] : 0
                            }
                        }
                        fft.magnitudes(UnsafeBufferPointer(f), into: m)
                        // The reference a bin must rise above: its largest
                        // value (and its neighbours') in the last `memory`
                        // frames (SuperFlux's maximum filter, in time as
                        // well): a partial that beats or wavers returns to a
                        // level it had and adds nothing; a new note or a hit
                        // exceeds them all.
                        for k in 0..<bins {
                            var r = 0.0
                            for row in 0..<memory {
                                let b = row * stride + k   // bin k is at k + 1
                                r = max(r, hist[b], hist[b + 1], hist[b + 2])
                            }
                            ref[k] = r
                        }
                        let slot = (t % memory) * stride + 1
                        var rise = 0.0, e = 0.0, h = 0.0, lowRise = 0.0
                        for k in 1..<bins {
                            let mk = m[k]
                            // Compressed magnitude: √(|X| + 1) − 1 grows as √|X|
                            // for loud bins and linearly for faint ones, so the
                            // leakage that flickers in faint bins from frame to
                            // frame adds next to nothing (full scale |X| ≈ 512).
                            let v = (mk + 1).squareRoot() - 1
                            let d = v - ref[k]
                            if d > 0 {
                                rise += d
                                if k <= lowTop { lowRise += d }
                            }
                            hist[slot + k] = v
                            let p = mk * mk
                            e += p
                            h += Double(k) * p
                        }
                        let ce = e.squareRoot().squareRoot(), ch = h.squareRoot().squareRoot()
                        if t >= frames.lowerBound {
                            let o = t - frames.lowerBound
                            flux[o] = t == 0 ? 0 : rise
                            low[o] = t == 0 ? 0 : lowRise
                            energy[o] = max(0, ce - lastEnergy)
                            hfc[o] = max(0, ch - lastHFC)
                        }
                        lastEnergy = ce
                        lastHFC = ch
                    }
                  }
                }
              }
            }
          }
        }
        return (flux, energy, hfc, low)
    }
}

/// Peak picking with an adaptive threshold: a frame is an onset when it
/// is the largest within ±30 ms, rises `threshold` above the median of
/// the ±100 ms around it and above the mean there, and comes `minGap`
/// after the previous onset. Its time is where its rise began.
enum OnsetPicker {
    static func pick(_ d: [Double], framesPerSecond: Double, threshold: Double, minGap: Double) -> [Int] {
        let n = d.count
        let peakRadius = max(1, Int((0.03 * framesPerSecond).rounded()))
        let medianRadius = max(2, Int((0.1 * framesPerSecond).rounded()))
        let gap = minGap * framesPerSecond
        var out: [Int] = []
        var window: [Double] = []
        window.reserveCapacity(2 * medianRadius + 1)
        for t in 0..<n {
            let v = d[t]
            guard v > 0 else { continue }
            var isPeak = true
            for j in max(0, t - peakRadius)...min(n - 1, t + peakRadius) where j != t {
                if d[j] > v || (d[j] == v && j < t) { isPeak = false; break }
            }
            guard isPeak else { continue }
            window.removeAll(keepingCapacity: true)
            var sum = 0.0
            for j in max(0, t - medianRadius)...min(n - 1, t + medianRadius) {
                window.append(d[j])
                sum += d[j]
            }
            window.sort()
            let median = window[window.count / 2]
            let mean = sum / Double(window.count)
            guard v >= median + threshold, v >= mean else { continue }
            // A slow attack rises over several frames and peaks halfway:
            // its onset is where the rise began (back while the frame
            // before still holds a quarter of the peak).
            var start = t
            while start > 0, d[start - 1] >= 0.25 * v, d[start - 1] < d[start], t - start < medianRadius { start -= 1 }
            if let last = out.last, Double(start - last) < gap { continue }
            out.append(start)
        }
        return out
    }
}
