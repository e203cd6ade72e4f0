import Foundation

/// The frame rate a PNG frame records: a `tEXt` chunk with the keyword
/// `wobble-run fps` and the rate as text (`25`, `29.97`), placed right
/// after `IHDR`. Written by `PNGSequenceSink`, read by `--assemble`.
public enum PNGFrameRate {
    /// The chunk's keyword.
    public static let keyword = "wobble-run fps"

    /// `png` (a complete PNG stream from `ImageIO.encodePNG`) with the
    /// chunk inserted after `IHDR`; unchanged when it is not such a stream.
    public static func insert(_ fps: Double, into png: [UInt8]) -> [UInt8] {
        // 8 signature bytes, then IHDR: length 13, "IHDR", 13 bytes, CRC.
        guard png.count >= 33, png[12..<16].elementsEqual("IHDR".utf8), fps.isFinite, fps > 0 else { return png }
        var text = fps == fps.rounded() && fps < 1e9 ? String(Int(fps)) : String(fps)
        if text.count > 40 { text = String(text.prefix(40)) }
        let data = Array("tEXt".utf8) + Array(keyword.utf8) + [0] + Array(text.utf8)
        var chunk = bigEndian(UInt32(data.count - 4))
        chunk += data
        chunk += bigEndian(crc32(data))
        var out = png
        out.insert(contentsOf: chunk, at: 33)
        return out
    }

    /// The rate a PNG stream records, or nil (none, not a PNG, or not a
    /// positive finite number). Reads the chunks before the first `IDAT`.
    public static func read(bytes b: [UInt8]) -> Double? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard b.count >= 8, Array(b[0..<8]) == signature else { return nil }
        var i = 8
        while i + 8 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            let start = i + 8
            guard length >= 0, length <= b.count - start else { return nil }
            if type == "IDAT" || type == "IEND" { return nil }
            if type == "tEXt" {
                let data = b[start..<(start + length)]
                if let zero = data.firstIndex(of: 0),
                   String(decoding: data[data.startIndex..<zero], as: UTF8.self) == keyword {
                    let value = String(decoding: data[(zero + 1)...], as: UTF8.self)
                    if let fps = Double(value), fps.isFinite, fps > 0 { return fps }
                    return nil
                }
            }
            i = start + length + 4
        }
        return nil
    }

    private static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    /// CRC-32 (ISO 3309, as PNG chunks use it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }
}
