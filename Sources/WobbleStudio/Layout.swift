import WobbleCore
import WobbleRender

/// A box of image pixels.
struct PixelBox: Equatable {
    var x: Int, y: Int, w: Int, h: Int

    /// The pixels one region can change: its corners' box, a pixel
    /// wider, clipped to the image (the whole image for a region with a
    /// non-finite corner); nil when nothing of it is inside.
    static func of(_ r: RegionFrame, mapping m: OutputMapping) -> PixelBox? {
        let width = m.outputWidth, height = m.outputHeight
        let sx = m.scaleX, sy = m.scaleY
        let b = Rect(minX: r.shape.bbox.minX / sx, minY: r.shape.bbox.minY / sy,
                     maxX: r.shape.bbox.maxX / sx, maxY: r.shape.bbox.maxY / sy)
        guard b.minX.isFinite, b.minY.isFinite, b.maxX.isFinite, b.maxY.isFinite else {
            return PixelBox(x: 0, y: 0, w: width, h: height)
        }
        func clampInt(_ v: Double, _ hi: Int) -> Int { Int(min(max(v, 0), Double(hi))) }
        let x0 = clampInt((b.minX - 2).rounded(.down), width), y0 = clampInt((b.minY - 2).rounded(.down), height)
        let x1 = clampInt((b.maxX + 2).rounded(.up), width), y1 = clampInt((b.maxY + 2).rounded(.up), height)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelBox(x: x0, y: y0, w: x1 - x0, h: y1 - y0)
    }

    /// The boxes of the pixels the regions can change, one per region
    /// (equal ones once); beyond `limit` boxes, their union.
    static func covering(_ regions: [RegionFrame], width: Int, height: Int, limit: Int = 8) -> [PixelBox] {
        covering(regions, mapping: OutputMapping(sourceWidth: width, sourceHeight: height, outputWidth: width, outputHeight: height),
                 limit: limit)
    }

    /// The same in the output pixels of `mapping` (a frame rendered smaller
    /// than the source).
    static func covering(_ regions: [RegionFrame], mapping: OutputMapping, limit: Int = 8) -> [PixelBox] {
        var boxes: [PixelBox] = []
        for r in regions {
            if let b = of(r, mapping: mapping), !boxes.contains(b) { boxes.append(b) }
        }
        guard boxes.count > limit, let first = boxes.first else { return boxes }
        var u = first
        for b in boxes.dropFirst() {
            let x1 = max(u.x + u.w, b.x + b.w), y1 = max(u.y + u.h, b.y + b.h)
            u.x = min(u.x, b.x); u.y = min(u.y, b.y)
            u.w = x1 - u.x; u.h = y1 - u.y
        }
        return [u]
    }
}

/// Where things are in the window: the image area on top left (1:1 when
/// it fits on the screen, else scaled down uniformly; centred in its column
/// when the window is wider), the inspector's column to its right, the
/// chrome (timeline, two status lines) below both. Window pixels to image
/// points and back go through `imagePointUnclamped` and `windowPoint` only.
struct Layout {
    static let chromeHeight = 56
    static let minWidth = 480
    static let timelinePad = 8
    /// The inspector's column, and the least height it needs.
    static let panelWidth = 232
    static let panelMinHeight = 300
    /// A window narrower than the column and this much picture shows the picture alone.
    static let minPictureBesidePanel = 160

    let windowWidth: Int
    let windowHeight: Int
    let imageRect: (x: Int, y: Int, w: Int, h: Int)
    let scale: Double
    /// Below the picture and the inspector.
    let chromeY: Int
    /// The inspector column's width (0: the window is too narrow for it).
    let panelWidth: Int
    /// The inspector's column.
    var panelRect: (x: Int, y: Int, w: Int, h: Int) { (windowWidth - panelWidth, 0, panelWidth, panelWidth > 0 ? chromeY : 0) }

    /// The layout inside a window of a given size: the picture fitted
    /// into it left of the inspector, above the chrome (scaled down, never
    /// up), centred in its column.
    init(imageWidth iw: Int, imageHeight ih: Int, window: (width: Int, height: Int)) {
        let iw = max(1, iw), ih = max(1, ih)
        let ww = max(1, window.width), wh = max(1, window.height)
        panelWidth = ww >= Layout.panelWidth + Layout.minPictureBesidePanel ? Layout.panelWidth : 0
        let areaW = max(1, ww - panelWidth), areaH = max(1, wh - Layout.chromeHeight)
        let s = min(1, Double(areaW) / Double(iw), Double(areaH) / Double(ih))
        let w = max(1, Int((Double(iw) * s).rounded(.down))), h = max(1, Int((Double(ih) * s).rounded(.down)))
        scale = s
        windowWidth = ww
        windowHeight = wh
        imageRect = (max(0, (areaW - w) / 2), 0, w, h)
        chromeY = panelWidth > 0 ? max(h, min(areaH, Layout.panelMinHeight)) : h
    }

    init(imageWidth iw: Int, imageHeight ih: Int, screen: (width: Int, height: Int)?) {
        let iw = max(1, iw), ih = max(1, ih)
        var s = 1.0
        if let screen {
            let maxW = Double(max(64, screen.width - 16 - Layout.panelWidth)), maxH = Double(max(64, screen.height - Layout.chromeHeight - 48))
            s = min(1, maxW / Double(iw), maxH / Double(ih))
        }
        let w = max(1, Int((Double(iw) * s).rounded())), h = max(1, Int((Double(ih) * s).rounded()))
        scale = s
        panelWidth = Layout.panelWidth
        windowWidth = max(w + Layout.panelWidth, Layout.minWidth)
        chromeY = max(h, Layout.panelMinHeight)
        windowHeight = chromeY + Layout.chromeHeight
        imageRect = ((windowWidth - Layout.panelWidth - w) / 2, 0, w, h)
    }

    func timelineContains(_ x: Int, _ y: Int) -> Bool {
        y >= chromeY && y < chromeY + 20
    }

    func panelContains(_ x: Int, _ y: Int) -> Bool {
        let r = panelRect
        return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h
    }

    func timelineFraction(_ x: Int) -> Double {
        let w = max(1, windowWidth - 2 * Layout.timelinePad)
        return min(max(Double(x - Layout.timelinePad) / Double(w), 0), 1)
    }

    /// The image point under window pixel `(x, y)`'s centre, nil outside the image area.
    func imagePoint(_ x: Int, _ y: Int) -> Point? {
        let r = imageRect
        guard x >= r.x, x < r.x + r.w, y >= r.y, y < r.y + r.h else { return nil }
        return imagePointUnclamped(x, y)
    }

    func imagePointUnclamped(_ x: Int, _ y: Int) -> Point {
        Point((Double(x - imageRect.x) + 0.5) / scale, (Double(y - imageRect.y) + 0.5) / scale)
    }

    /// Where image point `p` is in the window (the inverse of `imagePointUnclamped`).
    func windowPoint(_ p: Point) -> Point {
        Point(p.x * scale + Double(imageRect.x) - 0.5, p.y * scale + Double(imageRect.y) - 0.5)
    }
}
