/// The magnitude spectrum of real frames of `size` samples (a power of
/// two): a radix-2 complex FFT of `size / 2` points over the even and odd
/// samples packed as one complex signal, then split into the real
/// signal's spectrum. One thread, a fixed order of operations, twiddles
/// from `ExactMath`: the same bits everywhere.
struct RealFFT {
    let size: Int
    private let half: Int
    /// cos and sin of 2πk/size, k < size/2 (the split step; the half-size
    /// transform uses every other one).
    private let cosTable: [Double]
    private let sinTable: [Double]
    private let bitReverse: [Int]
    private var re: [Double]
    private var im: [Double]

    init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0)
        self.size = size
        half = size / 2
        (cosTable, sinTable) = ExactMath.unitCircle(size, count: size / 2)
        let bits = half.trailingZeroBitCount
        bitReverse = (0..<half).map { i in
            var r = 0, v = i
            for _ in 0..<bits { r = r << 1 | (v & 1); v >>= 1 }
            return r
        }
        re = [Double](repeating: 0, count: half)
        im = [Double](repeating: 0, count: half)
    }

    /// Writes `|X[k]|` for `k` in `0...size/2` of the real frame `x`
    /// (`size` samples) into `magnitudes`.
    mutating func magnitudes(_ x: UnsafeBufferPointer<Double>, into magnitudes: UnsafeMutableBufferPointer<Double>) {
        let half = self.half
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                cosTable.withUnsafeBufferPointer { ct in
                    sinTable.withUnsafeBufferPointer { st in
                        bitReverse.withUnsafeBufferPointer { br in
                            for i in 0..<half {
                                let j = br[i]
                                re[j] = x[2 * i]
                                im[j] = x[2 * i + 1]
                            }
                            // Butterflies: span 1, 2, 4 …; twiddle e^{-2πik/(2·span)}
                            // = table entry k · (size / (2·span)).
                            var span = 1
                            while span < half {
                                let step = half / span   // index stride into the size-table
                                var start = 0
                                while start < half {
                                    for k in 0..<span {
                                        let wr = ct[k * step], wi = -st[k * step]
                                        let a = start + k, b = a + span
                                        let tr = re[b] * wr - im[b] * wi
                                        let ti = re[b] * wi + im[b] * wr
                                        re[b] = re[a] - tr
                                        im[b] = im[a] - ti
                                        re[a] += tr
                                        im[a] += ti
                                    }
                                    start += 2 * span
                                }
                                span *= 2
                            }
                            // Split: X[k] = E + W·O, E = (Z[k] + conj Z[M−k]) / 2,
                            // O = (Z[k] − conj Z[M−k]) / 2i, W = e^{−2πik/size}.
                            magnitudes[0] = abs(re[0] + im[0])
                            magnitudes[half] = abs(re[0] - im[0])
                            for k in 1..<half {
                                let a = re[k], b = im[k], c = re[half - k], d = im[half - k]
                                let er = (a + c) * 0.5, ei = (b - d) * 0.5
                                let or = (b + d) * 0.5, oi = (c - a) * 0.5
                                let wr = ct[k], wi = -st[k]
                                let xr = er + wr * or - wi * oi
                                let xi = ei + wr * oi + wi * or
                                magnitudes[k] = (xr * xr + xi * xi).squareRoot()
                            }
                        }
                    }
                }
            }
        }
    }
}
