/// Checked numbers at the boundary: the one place where numbers
/// a user sized (command-line values, script coordinates, file names,
/// derived output sizes) become integers or pixel counts. Nothing here
/// traps: a conversion that does not fit is `nil` or clamped, and a value
/// outside a limit is an error whose message the caller prefixes with the
/// option or function that took it.
///
/// Callers: `OutputMapping.pixelBounds` (both renderers), the Lua API's
/// point readers (`addSketch`, sketch fields), the CLI's `--width`/`--height`
/// size (render, `--check` and `--assemble`), PNG file-name patterns,
/// `--assemble` frame indices and GIF frame delays.
public enum Limits {
    /// The largest image side, in pixels, read or written (source images,
    /// `--width`/`--height` and the sizes derived from them).
    public static let maxImageSide = 16384
    /// The most pixels an image may have (256 Mi: 1 GiB of RGBA).
    public static let maxImagePixels = 1 << 28
    /// Scene coordinates (image pixels) must lie within ±this: about 60
    /// times the largest image side, far enough for any region partly off
    /// the image, small enough that GLES floats still resolve a pixel.
    public static let maxCoordinate = 1_000_000.0
    /// The widest zero-padded frame number a file-name pattern may ask for
    /// (`%010d`): every frame index fits in 10 digits.
    public static let maxPatternWidth = 10
    /// Frame rates (`--fps`, `fps(n)`) lie in `minFPS...maxFPS`: at most a
    /// frame every 100 s (GIF delays and ffmpeg's `N/1000` rates can say
    /// it), at most 1000 a second.
    public static let minFPS = 0.01
    public static let maxFPS = 1000.0
    /// The largest frame (timeline) index: `--max-frames` and frame-file
    /// names stay below it, so index arithmetic never overflows.
    public static let maxFrameIndex = Int(Int32.max)
}

extension Int {
    /// `value` rounded by `rule`, or nil when it is NaN, infinite or outside
    /// `Int`'s range (where `Int(_:)` would trap).
    @inlinable
    public init?(checked value: Double, rounding rule: FloatingPointRoundingRule = .towardZero) {
        let r = value.rounded(rule)
        // 2^63 is exactly representable; Int.max (2^63 - 1) is not.
        guard r.isFinite, r >= -9_223_372_036_854_775_808.0, r < 9_223_372_036_854_775_808.0 else { return nil }
        self.init(r)
    }

    /// `value` rounded by `rule` and clamped to `range`; NaN gives the lower
    /// bound. For pixel bounds, where a value far outside only means "past
    /// the edge".
    @inlinable
    public init(clamping value: Double, to range: ClosedRange<Int>, rounding rule: FloatingPointRoundingRule) {
        let r = value.rounded(rule)
        if !(r > Double(range.lowerBound)) { self = range.lowerBound; return }
        if r >= Double(range.upperBound) { self = range.upperBound; return }
        self.init(r)
    }

    /// A non-negative decimal integer of ASCII digits only (no sign, no
    /// spaces), or nil when it is empty, has another character or does
    /// not fit in `Int`. For numbers read from names (`frame_00012.png`,
    /// `%04d`), where `Int(_:)` would also accept `+12`.
    public init?<S: StringProtocol>(digits: S) {
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var n = 0
        for c in digits.utf8 {
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(Int(c - 0x30))
            if o1 || o2 { return nil }
            n = s
        }
        self = n
    }
}

extension Double {
    /// A decimal number as people write one: an optional sign, digits with
    /// an optional point (`12`, `-0.5`, `.5`, `3.`), an optional exponent
    /// (`1e3`, `2.5E-2`); ASCII only, no spaces. Nil for anything else —
    /// hexadecimal (`0x10`, `0x1p4`), `inf`, `nan`, a NUL byte — that
    /// `Double(_:)` would also take (it reads C's `strtod` grammar).
    public init?<S: StringProtocol>(decimal text: S) {
        let u = Array(text.utf8)
        var i = 0
        func digits() -> Int {
            let start = i
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 { i += 1 }
            return i - start
        }
        if i < u.count, u[i] == 0x2B || u[i] == 0x2D { i += 1 }
        var mantissa = digits()
        if i < u.count, u[i] == 0x2E {
            i += 1
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if i < u.count, u[i] == 0x65 || u[i] == 0x45 {
            i += 1
            if i < u.count, u[i] == 0x2B || u[i] == 0x2D { i += 1 }
            guard digits() > 0 else { return nil }
        }
        guard i == u.count, let d = Double(String(decoding: u, as: UTF8.self)) else { return nil }
        self = d
    }
}

/// A value outside a limit; `message` reads after the name of what took it
/// (`addSketch: lt.x ...`, `--width ...`).
public struct LimitError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum CheckedNumbers {
    /// Nil when `v` is a usable scene coordinate (finite, within
    /// ±`Limits.maxCoordinate`), else why not (`"is 1e+19, outside
    /// ±1000000 (image pixels)"`).
    public static func coordinateProblem(_ v: Double) -> String? {
        if v.isNaN { return "is nan" }
        if v.isInfinite { return "is \(v > 0 ? "inf" : "-inf")" }
        if abs(v) > Limits.maxCoordinate {
            return "is \(v), outside ±\(Int(Limits.maxCoordinate)) (image pixels)"
        }
        return nil
    }

    /// Checks an image size against `Limits` (sides 1...maxImageSide, at
    /// most maxImagePixels in all); nil when it fits, else why not.
    public static func imageSizeProblem(width: Int, height: Int) -> String? {
        guard width > 0, height > 0 else { return "\(width)×\(height) has no pixels" }
        guard width <= Limits.maxImageSide, height <= Limits.maxImageSide else {
            return "\(width)×\(height) is larger than the limit of \(Limits.maxImageSide) pixels per side"
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= Limits.maxImagePixels else {
            return "\(width)×\(height) is larger than the limit of \(Limits.maxImagePixels) pixels"
        }
        return nil
    }

    /// The output size for a `sourceWidth`×`sourceHeight` image with an
    /// optional requested width and height: both given, exactly them; one
    /// given, the other keeps the aspect ratio (rounded, at least 1); none,
    /// the source size. The result is checked against `Limits` before
    /// anyone allocates a frame of it.
    ///
    /// - Throws: `LimitError` naming the derived size and what asked for it.
    public static func outputSize(sourceWidth sw: Int, sourceHeight sh: Int,
                                  width: Int?, height: Int?) throws -> (width: Int, height: Int) {
        guard sw > 0, sh > 0 else { throw LimitError("the image has no pixels (\(sw)×\(sh))") }
        func derived(_ given: Int, _ num: Int, _ den: Int) -> Int? {
            // Exact in Double for every size below 2^26; clamp before Int.
            let v = (Double(given) * Double(num) / Double(den)).rounded()
            return Int(checked: max(1, v))
        }
        let w: Int?, h: Int?, asked: String
        switch (width, height) {
        case let (w0?, h0?): (w, h, asked) = (w0, h0, "--width \(w0) --height \(h0)")
        case let (w0?, nil): (w, h, asked) = (w0, derived(w0, sh, sw), "--width \(w0) on a \(sw)×\(sh) image")
        case let (nil, h0?): (w, h, asked) = (derived(h0, sw, sh), h0, "--height \(h0) on a \(sw)×\(sh) image")
        case (nil, nil): return (sw, sh)
        }
        guard let w, let h else { throw LimitError("output size (\(asked)) is too large") }
        if let problem = imageSizeProblem(width: w, height: h) {
            throw LimitError("output size \(problem) (\(asked))")
        }
        return (w, h)
    }
}
