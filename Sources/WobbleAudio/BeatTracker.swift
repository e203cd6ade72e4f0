/// A beat tracker that follows tempo changes: dynamic programming over an
/// onset envelope (Ellis 2007, "Beat tracking by dynamic programming")
/// with a beat period that varies in time.
///
/// 1. The local tempo: the envelope's autocorrelation in windows of 6 s
///    every 0.5 s, weighted by a log-Gaussian preference around 120 BPM
///    (one octave wide); a Viterbi path through the windows picks one
///    period per window, paying `jumpPenalty · log2(p/p′)²` for a change,
///    so a tempo change is followed and a jump to half or double tempo
///    costs as much as four windows of evidence. Periods are refined by a
///    parabola and interpolated between window centres.
/// 2. The beats: each frame's score is the envelope (plus `kickWeight`
///    times the low band's, so the phase follows the kick) smoothed at the
///    local period's scale plus the best earlier beat between ½ and 2
///    local periods back, less `tightness · log(gap / period)²`; the best
///    chain is traced back from the last strong frame; weak beats at
///    either end are dropped, and so are beats where the tempo window
///    found no periodic pulse (`confidenceFloor`: noise, a soft pad).
enum BeatTracker {
    static let tightness = 100.0
    static let jumpPenalty = 4.0
    static let preferredBPM = 120.0
    static let preferenceOctaves = 1.0

    /// How much the low band's onsets (`low`: the kick) weigh in the
    /// beats' phase, next to the whole spectrum's (1).
    static let kickWeight = 1.5
    /// The least regularity a window's envelope must have for beats there:
    /// its autocorrelation at the chosen period over its energy (our
    /// synthetic drums: 0.37 at a tempo change, 0.7 to 0.84 steady; white
    /// noise: under 0.15).
    static let confidenceFloor = 0.2

    /// The standard deviation of `d` (0 when it is constant).
    static func deviation(_ d: [Double]) -> Double {
        var mean = 0.0
        for v in d { mean += v }
        mean /= Double(max(1, d.count))
        var variance = 0.0
        for v in d { variance += (v - mean) * (v - mean) }
        return (variance / Double(max(1, d.count))).squareRoot()
    }

    /// Beat frames of the detection function `d` (frames at
    /// `framesPerSecond`), whose phase also follows `low`, the onsets of
    /// the lowest band (the same length as `d`).
    static func track(_ d: [Double], low: [Double], framesPerSecond fps: Double) -> [Int] {
        let n = d.count
        guard n >= Int(fps), low.count == n else { return [] }
        let std = deviation(d)
        guard std > 0 else { return [] }
        let o = d.map { $0 / std }
        let (period, confidence) = localPeriods(o, fps: fps)
        // The envelope the beats are placed on: the whole spectrum's rise
        // plus the low band's, each in units of its own deviation, so a
        // kick on the beat outweighs a snare and hats between the beats.
        let lowStd = deviation(low)
        let phase = lowStd > 0 ? (0..<n).map { o[$0] + kickWeight * low[$0] / lowStd } : o

        // Local score: the envelope smoothed by a Gaussian of period/32.
        var local = [Double](repeating: 0, count: n)
        for t in 0..<n {
            let sigma = period[t] / 32
            let reach = Int((4 * sigma).rounded(.up))
            var s = 0.0
            for k in -reach...reach {
                let j = t + k
                guard j >= 0, j < n else { continue }
                let z = Double(k) / sigma
                s += phase[j] * ExactMath.exp(-0.5 * z * z)
            }
            local[t] = s
        }

        // Dynamic programming.
        var cumulative = [Double](repeating: 0, count: n)
        var back = [Int](repeating: -1, count: n)
        for t in 0..<n {
            let p = period[t]
            let lo = t - Int((2 * p).rounded()), hi = t - Int((p / 2).rounded())
            var best = -Double.infinity, bestIndex = -1
            if hi >= 0 {
                for tau in max(0, lo)...hi {
                    let r = ExactMath.log(Double(t - tau) / p)
                    let score = cumulative[tau] - tightness * r * r
                    if score > best { best = score; bestIndex = tau }
                }
            }
            if bestIndex >= 0, best > 0 {
                cumulative[t] = local[t] + best
                back[t] = bestIndex
            } else {
                cumulative[t] = local[t]
            }
        }

        // The last beat: the last local maximum of the cumulative score
        // that reaches half their median.
        var maxima: [Double] = []
        for t in 1..<(n - 1) where cumulative[t] > cumulative[t - 1] && cumulative[t] >= cumulative[t + 1] {
            maxima.append(cumulative[t])
        }
        guard !maxima.isEmpty else { return [] }
        maxima.sort()
        let threshold = 0.5 * maxima[maxima.count / 2]
        var last = -1
        for t in stride(from: n - 2, through: 1, by: -1)
        where cumulative[t] > cumulative[t - 1] && cumulative[t] >= cumulative[t + 1] && cumulative[t] >= threshold {
            last = t
            break
        }
        guard last >= 0 else { return [] }
        var beats: [Int] = []
        var t = last
        while t >= 0 {
            beats.append(t)
            t = back[t]
        }
        beats.reverse()

        // Trim weak beats at the ends (before the music starts, after it stops).
        var energy = 0.0
        for b in beats { energy += local[b] * local[b] }
        let cut = 0.5 * (energy / Double(beats.count)).squareRoot()
        var first = 0, end = beats.count
        while first < end, local[beats[first]] < cut { first += 1 }
        while end > first, local[beats[end - 1]] < cut { end -= 1 }
        // No beats where there is no periodic pulse (noise, a pad).
        return beats[first..<end].filter { confidence[$0] >= confidenceFloor }
    }

    /// The beat period (in frames) at every frame, and how periodic the
    /// envelope is there (see `confidenceFloor`).
    static func localPeriods(_ o: [Double], fps: Double) -> (period: [Double], confidence: [Double]) {
        let n = o.count
        let width = min(n, Int(6 * fps)), step = max(1, Int(0.5 * fps))
        var starts = Array(stride(from: 0, through: n - width, by: step))
        if let lastStart = starts.last, lastStart + width < n { starts.append(n - width) }
        let minLag = max(2, Int((fps * 60 / 240).rounded()))
        let maxLag = min(width - 2, Int((fps * 60 / 40).rounded()))
        guard maxLag > minLag else {
            return ([Double](repeating: fps * 60 / preferredBPM, count: n), [Double](repeating: 0, count: n))
        }
        let lags = Array(minLag...maxLag)
        let logLag = lags.map { ExactMath.log(Double($0)) / ExactMath.ln2 }
        let logPreferred = ExactMath.log(fps * 60 / preferredBPM) / ExactMath.ln2
        let prior = logLag.map { l -> Double in
            let z = (l - logPreferred) / preferenceOctaves
            return ExactMath.exp(-0.5 * z * z)
        }
        // Weighted autocorrelation per window, normalised to its largest value.
        var evidence: [[Double]] = []
        var regularity: [[Double]] = []
        var x = [Double](repeating: 0, count: width)
        for s in starts {
            var m = 0.0
            for i in 0..<width { m += o[s + i] }
            m /= Double(width)
            for i in 0..<width { x[i] = o[s + i] - m }
            var w = [Double](repeating: 0, count: lags.count)
            var energy = 0.0
            for i in 0..<width { energy += x[i] * x[i] }
            var ratio = [Double](repeating: 0, count: lags.count)
            var top = 0.0
            for (li, lag) in lags.enumerated() {
                var r = 0.0
                for i in 0..<(width - lag) { r += x[i] * x[i + lag] }
                let v = max(0, r) * prior[li]
                w[li] = v
                ratio[li] = energy > 0 ? max(0, r) / energy : 0
                top = max(top, v)
            }
            evidence.append(top > 0 ? w.map { $0 / top } : w)
            regularity.append(ratio)
        }
        // Viterbi through the windows.
        let L = lags.count
        var penalty = [Double](repeating: 0, count: L * L)
        for i in 0..<L {
            for j in 0..<L {
                let dl = logLag[i] - logLag[j]
                penalty[i * L + j] = jumpPenalty * dl * dl
            }
        }
        var score = evidence[0]
        var from = [[Int]](repeating: [Int](repeating: 0, count: L), count: starts.count)
        for w in 1..<starts.count {
            var next = [Double](repeating: 0, count: L)
            for i in 0..<L {
                var best = -Double.infinity, arg = 0
                for j in 0..<L {
                    let v = score[j] - penalty[i * L + j]
                    if v > best { best = v; arg = j }
                }
                next[i] = best + evidence[w][i]
                from[w][i] = arg
            }
            score = next
        }
        var state = 0
        for i in 1..<L where score[i] > score[state] { state = i }
        var chosen = [Int](repeating: 0, count: starts.count)
        for w in stride(from: starts.count - 1, through: 0, by: -1) {
            chosen[w] = state
            state = from[w][state]
        }
        // Refine each window's period with a parabola through its neighbours.
        let refined: [Double] = chosen.enumerated().map { w, i in
            let e = evidence[w]
            guard i > 0, i < L - 1 else { return Double(lags[i]) }
            let a = e[i - 1], b = e[i], c = e[i + 1]
            let denominator = a - 2 * b + c
            guard denominator < 0 else { return Double(lags[i]) }
            let shift = 0.5 * (a - c) / denominator
            return Double(lags[i]) + min(0.5, max(-0.5, shift))
        }
        let confidence = chosen.enumerated().map { w, i in regularity[w][i] }
        // Interpolate between window centres.
        let centres = starts.map { Double($0) + Double(width) / 2 }
        func interpolated(_ v: [Double]) -> [Double] {
            var out = [Double](repeating: v[0], count: n)
            var w = 0
            for t in 0..<n {
                let x = Double(t)
                while w + 1 < centres.count && centres[w + 1] <= x { w += 1 }
                if x <= centres[0] {
                    out[t] = v[0]
                } else if w + 1 >= centres.count {
                    out[t] = v[centres.count - 1]
                } else {
                    let f = (x - centres[w]) / (centres[w + 1] - centres[w])
                    out[t] = v[w] + (v[w + 1] - v[w]) * f
                }
            }
            return out
        }
        return (interpolated(refined), interpolated(confidence))
    }
}
