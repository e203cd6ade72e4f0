/// What an input file says about its colours, read from its bytes before
/// the decoder sees them (`ColourProfile` converts by it).
///
/// JPEG: an ICC profile in `APP2` `ICC_PROFILE` segments (a profile over
/// 64 KB is split over several, numbered), and Adobe's `APP14` marker,
/// whose presence says that CMYK values are stored inverted. PNG, in the
/// order the PNG specification ranks them: `iCCP` (a zlib-compressed ICC
/// profile), `sRGB`, then `gAMA` and `cHRM`. Nothing: the pixels are
/// taken as sRGB, as browsers take them.
enum ColourTag: Equatable {
    /// No colour information: taken as sRGB.
    case none
    /// Said to be sRGB (PNG `sRGB`, or `gAMA`/`cHRM` that match sRGB's).
    case sRGB
    /// An ICC profile.
    case icc([UInt8])
    /// PNG `gAMA` (the file's encoding exponent, e.g. 0.45455; nil: none)
    /// and `cHRM` (nil: none).
    case chunks(gamma: Double?, chromaticities: Chromaticities?)
    /// A profile is there but cannot be used; why, as a warning says it.
    case broken(String)

    /// True when converting needs a profile (ICC or built from chunks).
    var hasProfile: Bool {
        switch self {
        case .icc, .chunks: return true
        default: return false
        }
    }

    /// The `gAMA` values libpng accepts (gamma × 100000).
    static let gammaRange: ClosedRange<UInt32> = 16...625_000_000

    /// The largest ICC profile we read (32 MiB; real ones are a few KB to a few MB).
    static let maxProfileSize = 32 << 20

    // MARK: - JPEG

    /// The profile of a JPEG and whether it carries Adobe's APP14 marker.
    ///
    /// The markers before the first scan are walked with every length
    /// checked; `ICC_PROFILE` segments are joined in their sequence order.
    /// A sequence with a part missing, repeated or out of range is broken.
    static func jpeg(_ data: UnsafeRawBufferPointer) -> (tag: ColourTag, adobe: Bool) {
        var parts: [Int: ArraySlice<UInt8>] = [:]
        var declared: Set<Int> = []
        var adobe = false
        var repeated: Set<Int> = []
        var i = 2
        walk: while i + 4 <= data.count {
            guard data[i] == 0xFF else { break }
            let marker = data[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { break walk }
            let length = Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length >= 2, i + 2 + length <= data.count else { break }
            let body = data[(i + 4)..<(i + 2 + length)]
            if marker == 0xE2, body.count >= 14, body.prefix(12).elementsEqual(Array("ICC_PROFILE".utf8) + [0]) {
                let sequence = Int(body[body.startIndex + 12]), count = Int(body[body.startIndex + 13])
                declared.insert(count)
                if parts[sequence] != nil { repeated.insert(sequence) }
                parts[sequence] = ArraySlice(body.dropFirst(14))
            }
            if marker == 0xEE, body.count >= 12, body.prefix(5).elementsEqual(Array("Adobe".utf8)) {
                adobe = true
            }
            i += 2 + length
        }
        guard !parts.isEmpty else { return (.none, adobe) }
        func list(_ s: some Sequence<Int>) -> String { s.sorted().map(String.init).joined(separator: ", ") }
        // Damaged (the parts contradict each other) before incomplete (a
        // part is missing): a repeated part, parts that disagree on the
        // count, or a part numbered outside 1...count.
        if !repeated.isEmpty {
            let which = repeated.count == 1 ? "part \(list(repeated)) appears" : "parts \(list(repeated)) appear"
            return (.broken("its ICC profile is damaged (APP2 \(which) more than once)"), adobe)
        }
        guard declared.count == 1, let count = declared.first, count >= 1 else {
            return (.broken("its ICC profile is damaged (its APP2 parts disagree on their count: \(list(declared)))"), adobe)
        }
        let outside = parts.keys.filter { !(1...count).contains($0) }
        guard outside.isEmpty else {
            return (.broken("its ICC profile is damaged (APP2 part\(outside.count == 1 ? "" : "s") \(list(outside)) of \(count))"), adobe)
        }
        guard parts.count == count else {
            return (.broken("its ICC profile is incomplete (APP2 parts \(list(parts.keys)) of \(count))"), adobe)
        }
        var profile: [UInt8] = []
        for k in 1...count {
            profile += parts[k]!
            if profile.count > maxProfileSize { return (.broken("its ICC profile is larger than \(maxProfileSize >> 20) MiB"), adobe) }
        }
        return (.icc(profile), adobe)
    }

    // MARK: - PNG

    /// The colour chunks of a PNG (before its first `IDAT`), and whether
    /// there were any: the decoder is then given the file without them
    /// (`withoutColourChunks`), so that libpng hands out the stored values
    /// and only `ColourProfile` converts.
    static func png(_ data: UnsafeRawBufferPointer) -> (tag: ColourTag, present: Bool) {
        var iccp: ArraySlice<UInt8>?, srgb = false, gamma: Double?, chrm: Chromaticities?
        var badGamma: String?
        var present = false
        forEachChunk(data) { type, body in
            switch type {
            case "iCCP": iccp = iccp ?? ArraySlice(body); present = true
            case "sRGB": srgb = true; present = true
            case "gAMA":
                present = true
                // libpng's valid range (png_colorspace_set_gamma): 16 to
                // 625000000, i.e. an exponent of 0.00016 to 6250; outside
                // it (0, 0xFFFFFFFF) the chunk is damaged, not a gamma.
                if body.count == 4, (gammaRange).contains(be32(body, 0)) {
                    gamma = Double(be32(body, 0)) / 100_000
                } else if body.count == 4 {
                    badGamma = "its gAMA value \(be32(body, 0)) is outside the range a PNG allows (\(gammaRange.lowerBound) to \(gammaRange.upperBound))"
                } else {
                    badGamma = "its gAMA chunk is damaged (\(body.count) bytes, not 4)"
                }
            case "cHRM":
                present = true
                if body.count == 32 {
                    let v = (0..<8).map { Double(be32(body, $0 * 4)) / 100_000 }
                    chrm = Chromaticities(white: (v[0], v[1]), red: (v[2], v[3]), green: (v[4], v[5]), blue: (v[6], v[7]))
                }
            default: break
            }
        }
        if let iccp {
            // Name (1-79 bytes), NUL, compression method 0, zlib data.
            guard let nul = iccp.prefix(80).firstIndex(of: 0), nul > iccp.startIndex,
                  nul + 1 < iccp.endIndex, iccp[nul + 1] == 0 else {
                return (.broken("its ICC profile (iCCP) is damaged"), present)
            }
            switch Inflate.zlib(iccp[(nul + 2)...], limit: maxProfileSize) {
            case .bytes(let profile): return (.icc(profile), present)
            case .damaged: return (.broken("its ICC profile (iCCP) is damaged"), present)
            case .tooLarge: return (.broken("its ICC profile (iCCP) is larger than \(maxProfileSize >> 20) MiB"), present)
            }
        }
        if srgb { return (.sRGB, present) }
        if let badGamma { return (.broken(badGamma), present) }
        if gamma == nil && chrm == nil { return (.none, present) }
        // Within libpng's own threshold of sRGB's gamma (5 %), with sRGB's
        // primaries or none: sRGB, as the pixels always were here.
        let sRGBGamma = gamma.map { abs($0 / 0.45455 - 1) < 0.05 } ?? true
        let sRGBPrimaries = chrm.map { $0.isClose(to: .sRGB) } ?? true
        if sRGBGamma && sRGBPrimaries { return (.sRGB, present) }
        if let c = chrm, !c.isPlausible { return (.broken("its cHRM chromaticities are impossible"), present) }
        return (.chunks(gamma: gamma, chromaticities: chrm), present)
    }

    /// The PNG without its `iCCP`, `sRGB`, `gAMA` and `cHRM` chunks (each
    /// chunk carries its own CRC, so the rest stays valid).
    static func withoutColourChunks(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(data.count)
        out += data.prefix(8)
        var at = 8
        while at + 12 <= data.count {
            let length = Int(be32(data[...], at))
            let end = at + 12 + length
            guard end <= data.count else { break }
            let type = String(decoding: data[(at + 4)..<(at + 8)], as: UTF8.self)
            if !["iCCP", "sRGB", "gAMA", "cHRM"].contains(type) { out += data[at..<end] }
            at = end
        }
        out += data[min(at, data.count)...]
        return out
    }

    /// Calls `body` with each chunk's type and data before the first `IDAT`.
    private static func forEachChunk(_ data: UnsafeRawBufferPointer, _ body: (String, Slice<UnsafeRawBufferPointer>) -> Void) {
        var at = 8
        while at + 12 <= data.count {
            let length = Int(be32(data[...], at))
            guard at + 12 + length <= data.count else { return }
            let type = String(decoding: data[(at + 4)..<(at + 8)], as: UTF8.self)
            if type == "IDAT" || type == "IEND" { return }
            body(type, data[(at + 8)..<(at + 8 + length)])
            at += 12 + length
        }
    }

    private static func be32<C: Collection>(_ bytes: C, _ offset: Int) -> UInt32 where C.Element == UInt8, C.Index == Int {
        let s = bytes.startIndex + offset
        return UInt32(bytes[s]) << 24 | UInt32(bytes[s + 1]) << 16 | UInt32(bytes[s + 2]) << 8 | UInt32(bytes[s + 3])
    }
}

/// A white point and three primaries, as CIE xy (PNG `cHRM`).
struct Chromaticities: Equatable {
    var white: (x: Double, y: Double)
    var red: (x: Double, y: Double)
    var green: (x: Double, y: Double)
    var blue: (x: Double, y: Double)

    /// sRGB's (ITU-R BT.709 primaries, D65 white).
    static let sRGB = Chromaticities(white: (0.3127, 0.3290), red: (0.64, 0.33), green: (0.30, 0.60), blue: (0.15, 0.06))

    private var values: [Double] { [white.x, white.y, red.x, red.y, green.x, green.y, blue.x, blue.y] }

    static func == (a: Chromaticities, b: Chromaticities) -> Bool { a.values == b.values }

    /// Every coordinate within 0.001 of `other`'s.
    func isClose(to other: Chromaticities) -> Bool {
        zip(values, other.values).allSatisfy { abs($0 - $1) < 0.001 }
    }

    /// Every point inside the xy unit triangle, y above 0, and the primaries not on one line.
    var isPlausible: Bool {
        let points = [white, red, green, blue]
        guard points.allSatisfy({ $0.x >= 0 && $0.y > 0 && $0.x + $0.y <= 1 }) else { return false }
        let area = (green.x - red.x) * (blue.y - red.y) - (blue.x - red.x) * (green.y - red.y)
        return abs(area) > 1e-4
    }
}
