// Functions whose results are the same bits on every machine: built only
// from IEEE 754 operations that are correctly rounded (+, −, ×, ÷, sqrt),
// in a fixed order. The system's libm (`cos`, `log`, `exp`) may differ in
// the last bit between libraries and CPUs, and one bit can move a peak by
// a frame; the analysis calls these instead.

/// Elementary functions with results that do not depend on the machine.
enum ExactMath {
    static let ln2 = 0.693147180559945309417232121458176568

    /// The natural logarithm of `x` (> 0): `x = m·2^e` with `m` in
    /// [1/√2, √2), then `ln m = 2·atanh((m−1)/(m+1))` by its series.
    static func log(_ x: Double) -> Double {
        guard x > 0, x.isFinite else { return x == 0 ? -.infinity : .nan }
        var e = Int(x.exponent)
        var m = x.significand  // [1, 2)
        if m > 1.4142135623730951 { m *= 0.5; e += 1 }
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        // |s| ≤ 0.1716: 11 terms reach double precision.
        var sum = 1.0 / 21
        var k = 19.0
        while k >= 1 { sum = sum * s2 + 1 / k; k -= 2 }
        return 2 * s * sum + Double(e) * ln2
    }

    /// `e^x`: `x = n·ln 2 + r`, |r| ≤ ln 2 / 2, a Taylor polynomial, then
    /// scaled by 2^n exactly.
    static func exp(_ x: Double) -> Double {
        if x.isNaN { return x }
        if x < -745 { return 0 }
        if x > 709 { return .infinity }
        let n = (x / ln2).rounded()
        // ln 2 in two parts (fdlibm's): n · ln2Hi is exact.
        let r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10
        var sum = 1.0
        var k = 17.0
        while k >= 1 { sum = 1 + sum * r / k; k -= 1 }
        return Double(sign: .plus, exponent: Int(n), significand: 1) * sum
    }

    /// `cos(2πk/n)` and `sin(2πk/n)` for `k` in `0..<count`, `n` a power of
    /// two: the angles 2π/2^m by half-angle steps (square roots), then each
    /// `k` as a product over its binary digits.
    static func unitCircle(_ n: Int, count: Int) -> (cos: [Double], sin: [Double]) {
        precondition(n >= 1 && n & (n - 1) == 0)
        let bits = n.trailingZeroBitCount
        // base[m] = angle 2π/2^m.
        var baseCos = [1.0], baseSin = [0.0]
        if bits >= 1 { baseCos.append(-1); baseSin.append(0) }
        if bits >= 2 { baseCos.append(0); baseSin.append(1) }
        if bits >= 3 {
            for _ in 3...bits {
                let c = baseCos.last!, s = baseSin.last!
                let half = (1 + c) / 2
                let ch = half.squareRoot()
                baseCos.append(ch)
                baseSin.append(s / (2 * ch))
            }
        }
        var cs = [Double](repeating: 1, count: count), ss = [Double](repeating: 0, count: count)
        for k in 0..<count {
            var c = 1.0, s = 0.0
            var kk = k % n
            var bit = 0
            while kk != 0 {
                if kk & 1 == 1 {
                    // angle 2π·2^bit/n = 2π/2^(bits − bit)
                    let bc = baseCos[bits - bit], bs = baseSin[bits - bit]
                    let nc = c * bc - s * bs
                    s = c * bs + s * bc
                    c = nc
                }
                kk >>= 1
                bit += 1
            }
            cs[k] = c
            ss[k] = s
        }
        return (cs, ss)
    }
}
