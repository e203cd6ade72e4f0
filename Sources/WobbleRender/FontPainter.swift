import WobbleCore

extension StudioFont {
    /// Blends `text` in this font into `image` with its top-left at
    /// `(x, y)`, clipped to the image; characters outside ASCII 32-126 are
    /// drawn as their ASCII stand-in (dashes `-`, `×` `x`, quotes, arrows
    /// `>`), else `?`. With `maxX`, drawing stops before the first character
    /// that would cross it. `opaque` makes the covered pixels' alpha 255
    /// (text over a transparent frame). Returns the x after the text. The
    /// one text painter of the overlay labels and the studio's chrome.
    @discardableResult
    public static func draw(_ text: some Sequence<Unicode.Scalar>, x: Int, y: Int, into image: inout RGBAImage,
                            color: (UInt8, UInt8, UInt8), maxX: Int? = nil, opaque: Bool = false) -> Int {
        let cw = cellWidth, ch = cellHeight
        let w = image.width, h = image.height
        var cx = x
        for u in text {
            if let maxX, cx + cw > maxX { break }
            var code = u.value
            if code < UInt32(first) || code > UInt32(last) { code = asciiStandIn(code) }
            let base = Int(code - UInt32(first)) * cw * ch
            guard base + cw * ch <= coverage.count else { break }
            for gy in 0..<ch {
                let py = y + gy
                guard py >= 0, py < h else { continue }
                for gx in 0..<cw {
                    let a = Int(coverage[base + gy * cw + gx])
                    let px = cx + gx
                    guard a > 0, px >= 0, px < w else { continue }
                    let i = (py * w + px) * 4
                    image.pixels[i] = UInt8((Int(color.0) * a + Int(image.pixels[i]) * (255 - a)) / 255)
                    image.pixels[i + 1] = UInt8((Int(color.1) * a + Int(image.pixels[i + 1]) * (255 - a)) / 255)
                    image.pixels[i + 2] = UInt8((Int(color.2) * a + Int(image.pixels[i + 2]) * (255 - a)) / 255)
                    if opaque { image.pixels[i + 3] = 255 }
                }
            }
            cx += cw
        }
        return cx
    }

    /// The ASCII character drawn for one the font lacks (one cell for one,
    /// so columns stay where they are), `?` when there is none.
    static func asciiStandIn(_ code: UInt32) -> UInt32 {
        switch code {
        case 0x2010...0x2015, 0x2212: 45          // hyphens, en and em dashes, minus: -
        case 0x00D7: 120                          // ×: x
        case 0x2018, 0x2019, 0x2032: 39           // ‘ ’ ′: '
        case 0x201C, 0x201D, 0x2033: 34           // “ ” ″: "
        case 0x2192, 0x21D2: 62                   // → ⇒: >
        case 0x2190: 60                           // ←: <
        case 0x2022, 0x00B7: 42                   // • ·: *
        case 0x2026: 46                           // …: .
        case 0x00A0, 0x2009, 0x202F: 32           // no-break and thin spaces
        default: 63
        }
    }
}
