import Foundation

/// Peak signal-to-noise ratio of two pictures of one size, in dB: the one
/// measure every comparison of frames uses (the web page's check of its own
/// frames, the tests' "close to the headless render"). Infinity where the
/// pixels compared are equal (or none is picked); 0 where the sizes differ.
public enum PSNR {
    /// Which values are compared.
    public enum Channels: Sendable {
        /// All four bytes of every pixel.
        case rgba
        /// Red, green and blue as stored (alpha not compared).
        case rgb
        /// Red, green and blue times alpha (what a transparent pixel hides
        /// does not count).
        case premultipliedRGB
    }

    /// The PSNR of `a` against `b` over the pixels `pick` keeps (pixel
    /// index `y × width + x`; all where nil).
    public static func of(_ a: RGBAImage, _ b: RGBAImage, channels: Channels = .rgb,
                          where pick: ((Int) -> Bool)? = nil) -> Double {
        guard a.width == b.width, a.height == b.height, a.pixels.count == b.pixels.count else { return 0 }
        var sum = 0.0, n = 0
        a.pixels.withUnsafeBufferPointer { p in
            b.pixels.withUnsafeBufferPointer { q in
                for k in 0 ..< a.width * a.height where pick?(k) ?? true {
                    let i = k * 4
                    switch channels {
                    case .rgba:
                        for c in 0..<4 { let d = Double(p[i + c]) - Double(q[i + c]); sum += d * d }
                        n += 4
                    case .rgb:
                        for c in 0..<3 { let d = Double(p[i + c]) - Double(q[i + c]); sum += d * d }
                        n += 3
                    case .premultipliedRGB:
                        let pa = Int(p[i + 3]), qa = Int(q[i + 3])
                        for c in 0..<3 {
                            let d = Double(Int(p[i + c]) * pa - Int(q[i + c]) * qa) / 255
                            sum += d * d
                        }
                        n += 3
                    }
                }
            }
        }
        guard n > 0, sum > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (sum / Double(n)))
    }
}
