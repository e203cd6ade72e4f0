import WobbleCore
import WobbleRender
import WobbleStudioCore

/// Draws the cutouts over the picture in the window: the outline of every
/// cutout of the clip (its mask at rest) and the stroke being painted,
/// into the handles layer. Strokes are painted with a brush of window
/// pixels; a press that moves less than a click's slop is a click. The
/// magnetic outline being clicked is drawn as its points (squares) joined
/// by lines (its path snaps to the edge when it closes).
final class CutoutPainter {
    /// Brush radius of a stroke, in window pixels.
    static let brush = 6.0
    /// A press with `Shift` that moves less than this (window pixels) is a click.
    static let clickSlop = 3

    /// The outline of each cutout layer shown (by the layer, held while shown).
    private var outlines: [ObjectIdentifier: (layer: CutoutLayer, boundary: [Int])] = [:]

    /// Draws the outlines of `clip`'s cutouts, `stroke` and the magnetic
    /// outline's `outline` points into `layer`.
    func paint(into layer: inout RGBAImage, mapping m: OutputMapping, clip: Clip?, stroke: CutoutStroke?, outline: [Point]? = nil) {
        var shown: [ObjectIdentifier: (layer: CutoutLayer, boundary: [Int])] = [:]
        for l in (clip?.cutouts.values).map(Array.init) ?? [] {
            let id = ObjectIdentifier(l)
            shown[id] = outlines[id] ?? (l, CutoutEditor.outline(l.mask))
        }
        outlines = shown
        let w = layer.width, h = layer.height
        guard w > 0, h > 0 else { return }
        func plot(_ x: Int, _ y: Int, _ c: (UInt8, UInt8, UInt8)) {
            guard x >= 0, y >= 0, x < w, y < h else { return }
            let k = (y * w + x) * 4
            layer.pixels[k] = c.0; layer.pixels[k + 1] = c.1; layer.pixels[k + 2] = c.2; layer.pixels[k + 3] = 255
        }
        for (l, boundary) in shown.values {
            let mw = l.mask.width, mh = l.mask.height
            func out(_ sx: Int, _ sy: Int) -> (Int, Int) { (Int((Double(sx) + 0.5) / m.scaleX), Int((Double(sy) + 0.5) / m.scaleY)) }
            // A dark line just outside the object, for contrast on any picture...
            for i in boundary {
                let sx = i % mw, sy = i / mw
                for (nx, ny) in [(sx - 1, sy), (sx + 1, sy), (sx, sy - 1), (sx, sy + 1)]
                where nx >= 0 && ny >= 0 && nx < mw && ny < mh && l.mask.pixels[ny * mw + nx] <= 127 {
                    let (ox, oy) = out(nx, ny)
                    plot(ox, oy, (20, 20, 20))
                }
            }
            // ...and dashes on its edge: magenta and white, 4 pixels each.
            for i in boundary {
                let (ox, oy) = out(i % mw, i / mw)
                plot(ox, oy, ((ox + oy) / 4) % 2 == 0 ? (255, 40, 200) : (255, 255, 255))
            }
        }
        if let points = outline, !points.isEmpty {
            let scaled = points.map { Point($0.x / m.scaleX, $0.y / m.scaleY) }
            if scaled.count > 1 {
                CutoutStroke(points: scaled, radius: 0.75, object: true).forEachPixel(width: w, height: h) { plot($0 % w, $0 / w, (255, 220, 40)) }
            }
            for (i, p) in scaled.enumerated() {
                let cx = Int(p.x), cy = Int(p.y), r = i == 0 ? 3 : 2
                for y in cy - r ... cy + r { for x in cx - r ... cx + r { plot(x, y, i == 0 ? (255, 255, 255) : (255, 220, 40)) } }
            }
        }
        if let s = stroke {
            let c: (UInt8, UInt8, UInt8) = s.object ? (40, 230, 60) : (255, 60, 40)
            let scaled = CutoutStroke(points: s.points.map { Point($0.x / m.scaleX, $0.y / m.scaleY) }, radius: s.radius / m.scaleX, object: s.object)
            scaled.forEachPixel(width: w, height: h) { plot($0 % w, $0 / w, c) }
        }
    }
}
