/// The onset detection functions of a sound, one value per analysis frame:
/// frames of 2048 samples (46 ms, Hann window) every 10 ms, centred on their time
/// (frame `t` at `t · hop / sampleRate` s). Computed in one pass; only the
/// previous frame's spectrum is kept, so memory follows the frame count.
final class Spectra {
    static let frameSize = 2048
    let hop: Int
    let sampleRate: Int
    var framesPerSecond: Double { Double(sampleRate) / Double(hop) }
    private var functions: [OnsetOptions.Method: [Double]] = [:]
    private let samples: [Float]

    init(samples: [Float], sampleRate: Int) {
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

    private func compute() {
        let n = Spectra.frameSize, bins = n / 2 + 1
        let count = samples.isEmpty ? 0 : samples.count / hop + 1
        var fft = RealFFT(size: n)
        let (c, _) = ExactMath.unitCircle(n, count: n)
        let window = c.map { 0.5 - 0.5 * $0 }
        var frame = [Double](repeating: 0, count: n)
        var mags = [Double](repeating: 0, count: bins)
        // The compressed spectra of the last `memory` frames (a ring), and
        // their maximum over those frames and neighbouring bins.
        let memory = 3
        var history = [[Double]](repeating: [Double](repeating: 0, count: bins), count: memory)
        var reference = [Double](repeating: 0, count: bins)
        var flux = [Double](repeating: 0, count: count)
        var energy = [Double](repeating: 0, count: count)
        var hfc = [Double](repeating: 0, count: count)
        var lastEnergy = 0.0, lastHFC = 0.0
        samples.withUnsafeBufferPointer { x in
            for t in 0..<count {
                let start = t * hop - n / 2
                for i in 0..<n {
                    let j = start + i
                    frame[i] = j >= 0 && j < x.count ? Double(x[j]) * window[i] : 0
                }
                frame.withUnsafeBufferPointer { f in
                    mags.withUnsafeMutableBufferPointer { m in fft.magnitudes(f, into: m) }
                }
                // The reference a bin must rise above: its largest value (and
                // its neighbours') in the last `memory` frames (SuperFlux's
                // maximum filter, in time as well): a partial that beats or
                // wavers returns to a level it had and adds nothing; a new
                // note or a hit exceeds them all.
                for k in 0..<bins {
                    var r = 0.0
                    for f in 0..<memory {
                        let row = history[f]
                        r = max(r, row[k], k > 0 ? row[k - 1] : 0, k + 1 < bins ? row[k + 1] : 0)
                    }
                    reference[k] = r
                }
                let slot = t % memory
                var rise = 0.0, e = 0.0, h = 0.0
                for k in 1..<bins {
                    let m = mags[k]
                    // Compressed magnitude: √(|X| + 1) − 1 grows as √|X| for
                    // loud bins and linearly for faint ones, so the leakage
                    // that flickers in faint bins from frame to frame adds
                    // next to nothing (full scale is |X| ≈ 512).
                    let v = (m + 1).squareRoot() - 1
                    let d = v - reference[k]
                    if d > 0 { rise += d }
                    history[slot][k] = v
                    let p = m * m
                    e += p
                    h += Double(k) * p
                }
                flux[t] = t == 0 ? 0 : rise
                let ce = e.squareRoot().squareRoot(), ch = h.squareRoot().squareRoot()
                energy[t] = max(0, ce - lastEnergy)
                hfc[t] = max(0, ch - lastHFC)
                lastEnergy = ce
                lastHFC = ch
            }
        }
        func normalised(_ v: [Double]) -> [Double] {
            let top = v.max() ?? 0
            return top > 0 ? v.map { $0 / top } : v
        }
        functions = [.flux: normalised(flux), .energy: normalised(energy), .hfc: normalised(hfc)]
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
