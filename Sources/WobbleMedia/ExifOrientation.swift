import WobbleCore

/// The EXIF Orientation tag of a JPEG, applied so that the image reads as
/// every viewer shows it.
///
/// Phones store a photo as the sensor saw it and say in the tag how to turn
/// it: a portrait photo is often a landscape JPEG with Orientation 6
/// ("rotate 90° clockwise to view"). Region coordinates are written against
/// what the artist sees, so the decoder applies the tag: `size()`, the
/// frames and `--image` overrides all see the upright picture.
///
/// Only the first APP1 `Exif` segment's IFD0 is read, with every offset
/// checked against the segment's bounds; anything malformed or missing reads
/// as orientation 1 (as viewers do).
enum ExifOrientation {
    /// The orientation (1...8) the JPEG's EXIF block declares, or 1.
    static func of(jpeg data: UnsafeRawBufferPointer) -> Int {
        guard let segment = exifSegment(data) else { return 1 }
        return orientation(tiff: segment) ?? 1
    }

    /// The TIFF bytes of the first APP1 segment starting with `Exif\0\0`.
    private static func exifSegment(_ data: UnsafeRawBufferPointer) -> Slice<UnsafeRawBufferPointer>? {
        guard data.count >= 4, data[0] == 0xFF, data[1] == 0xD8 else { return nil }
        var i = 2
        while i + 4 <= data.count {
            guard data[i] == 0xFF else { return nil }
            let marker = data[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            // Markers without a length; SOS or EOI: the headers are over.
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length >= 2, i + 2 + length <= data.count else { return nil }
            let body = data[(i + 4)..<(i + 2 + length)]
            if marker == 0xE1, body.count >= 6, body.prefix(6).elementsEqual([0x45, 0x78, 0x69, 0x66, 0, 0]) {
                return body.dropFirst(6)
            }
            i += 2 + length
        }
        return nil
    }

    /// Orientation from IFD0 of a TIFF structure (either byte order).
    private static func orientation(tiff: Slice<UnsafeRawBufferPointer>) -> Int? {
        let bytes = Array(tiff)
        guard bytes.count >= 8 else { return nil }
        let little: Bool
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            guard tag == 0x0112 else { continue }
            // SHORT (type 3), one value, stored in the entry's first two bytes.
            guard u16(at + 2) == 3, u32(at + 4) == 1, let value = u16(at + 8), (1...8).contains(value) else { return nil }
            return value
        }
        return nil
    }

    /// `image` turned as `orientation` (1...8) says: for 5...8 the width
    /// and height swap.
    static func apply(_ orientation: Int, to image: RGBAImage) -> RGBAImage {
        guard (2...8).contains(orientation) else { return image }
        let w = image.width, h = image.height
        let swaps = orientation >= 5
        let outW = swaps ? h : w, outH = swaps ? w : h
        var out = [UInt8](repeating: 0, count: outW * outH * 4)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // The source pixel shown at (x, y).
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (w - 1 - x, y)
                        case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case 4: (sx, sy) = (x, h - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, h - 1 - x)
                        case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                        default: (sx, sy) = (w - 1 - y, x)  // 8
                        }
                        let s = (sy * w + sx) * 4, d = (y * outW + x) * 4
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]; dst[d + 3] = src[s + 3]
                    }
                }
            }
        }
        return RGBAImage(width: outW, height: outH, pixels: out)
    }
}
