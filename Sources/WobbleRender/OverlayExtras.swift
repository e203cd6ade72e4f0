import WobbleCore

/// The colours of one kind of shape in the overlay (RGB).
public struct OverlayStyle: Sendable, Equatable {
    public var edge: (UInt8, UInt8, UInt8)
    public var boundary: (UInt8, UInt8, UInt8)
    public var corner: (UInt8, UInt8, UInt8)
    public var center: (UInt8, UInt8, UInt8)

    public init(edge: (UInt8, UInt8, UInt8), boundary: (UInt8, UInt8, UInt8), corner: (UInt8, UInt8, UInt8), center: (UInt8, UInt8, UInt8)) {
        self.edge = edge
        self.boundary = boundary
        self.corner = corner
        self.center = center
    }

    public static func == (a: OverlayStyle, b: OverlayStyle) -> Bool {
        a.edge == b.edge && a.boundary == b.boundary && a.corner == b.corner && a.center == b.center
    }

    /// Sketches of the control layer (the original's sketch view).
    public static let sketch = OverlayStyle(edge: OverlayPainter.edgeColor, boundary: OverlayPainter.boundaryColor,
                                            corner: OverlayPainter.cornerColor, center: OverlayPainter.centerColor)
    /// Live wobble models (`--overlay` after `prepare()`): orange boundary.
    public static let live = OverlayStyle(edge: (60, 60, 60), boundary: (255, 140, 0), corner: (255, 230, 0), center: (0, 200, 0))
    /// Sketches the studio cannot edit (computed by the script): grey.
    public static let locked = OverlayStyle(edge: (90, 90, 90), boundary: (160, 160, 170), corner: (200, 200, 200), center: (140, 140, 140))
}

extension OverlayPainter {
    /// Grid lines every `gridStep` source pixels, coordinates every `labelStep`.
    public static let gridStep = 50
    public static let labelStep = 100

    /// The live models (style `.live`), each labelled `#index line N` beside its center.
    public static func drawModels(_ models: [OverlayModel], into image: inout RGBAImage, mapping: OutputMapping) {
        guard !models.isEmpty else { return }
        draw(models.map(\.shape), into: &image, mapping: mapping, style: .live)
        let sx = mapping.scaleX, sy = mapping.scaleY
        guard sx.isFinite, sy.isFinite, sx > 0, sy > 0 else { return }
        for m in models {
            let c = m.shape.center
            guard c.isFinite else { continue }
            let x = c.x / sx + 6, y = c.y / sy - Double(StudioFont.cellHeight) / 2
            guard abs(x) < 1e6, abs(y) < 1e6 else { continue }
            label(m.label, x: Int(x.rounded()), y: Int(y.rounded()), into: &image, color: (255, 200, 80))
        }
    }

    /// A light pixel grid: a line every `gridStep` source pixels (brighter
    /// every `labelStep`), with the coordinate written at the top and left.
    public static func drawGrid(into image: inout RGBAImage, mapping: OutputMapping) {
        let w = image.width, h = image.height
        let sx = mapping.scaleX, sy = mapping.scaleY
        guard w > 0, h > 0, sx.isFinite, sy.isFinite, sx > 0, sy > 0 else { return }
        func blend(_ x: Int, _ y: Int, _ a: Int) {
            let i = (y * w + x) * 4
            for c in 0..<3 { image.pixels[i + c] = UInt8((255 * a + Int(image.pixels[i + c]) * (255 - a)) / 255) }
            image.pixels[i + 3] = UInt8(max(Int(image.pixels[i + 3]), a))
        }
        let sw = mapping.sourceWidth, sh = mapping.sourceHeight
        var v = gridStep
        while v < sw {
            let x = Int((Double(v) / sx).rounded(.down))
            if x >= 0, x < w { for y in 0..<h { blend(x, y, v % labelStep == 0 ? 90 : 50) } }
            v += gridStep
        }
        v = gridStep
        while v < sh {
            let y = Int((Double(v) / sy).rounded(.down))
            if y >= 0, y < h { for x in 0..<w { blend(x, y, v % labelStep == 0 ? 90 : 50) } }
            v += gridStep
        }
        v = labelStep
        while v < sw {
            label(String(v), x: Int((Double(v) / sx).rounded(.down)) + 2, y: 1, into: &image, color: (255, 255, 255))
            v += labelStep
        }
        v = labelStep
        while v < sh {
            label(String(v), x: 1, y: Int((Double(v) / sy).rounded(.down)) + 2, into: &image, color: (255, 255, 255))
            v += labelStep
        }
    }

    /// `text` in the studio's font with its top-left at `(x, y)` (output
    /// pixels) on a dark, half-transparent box; clipped to the image.
    public static func label(_ text: String, x: Int, y: Int, into image: inout RGBAImage, color: (UInt8, UInt8, UInt8)) {
        let cw = StudioFont.cellWidth, ch = StudioFont.cellHeight
        let w = image.width, h = image.height
        let chars = Array(text.unicodeScalars.prefix(64))
        let boxW = chars.count * cw + 2
        guard x < w, y < h, x + boxW > 0, y + ch > 0 else { return }
        for py in max(0, y)..<min(h, y + ch) {
            for px in max(0, x - 1)..<min(w, x - 1 + boxW) {
                let i = (py * w + px) * 4
                for c in 0..<3 { image.pixels[i + c] = UInt8(Int(image.pixels[i + c]) * 100 / 255) }
                image.pixels[i + 3] = max(image.pixels[i + 3], 160)
            }
        }
        StudioFont.draw(chars, x: x, y: y, into: &image, color: color, opaque: true)
    }
}
