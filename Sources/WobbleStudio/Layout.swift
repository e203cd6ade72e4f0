import WobbleCore
import WobbleStudioCore
import WobbleRender

/// The boxes of image pixels the window uploads and draws again.
extension PixelRect {
    /// The pixels one region can change: its corners' box, a pixel
    /// wider, clipped to the image (the whole image for a region with a
    /// non-finite corner); nil when nothing of it is inside.
    static func of(_ r: RegionFrame, mapping m: OutputMapping) -> PixelRect? {
        let width = m.outputWidth, height = m.outputHeight
        let sx = m.scaleX, sy = m.scaleY
        let b = Rect(minX: r.shape.bbox.minX / sx, minY: r.shape.bbox.minY / sy,
                     maxX: r.shape.bbox.maxX / sx, maxY: r.shape.bbox.maxY / sy)
        guard b.minX.isFinite, b.minY.isFinite, b.maxX.isFinite, b.maxY.isFinite else {
            return PixelRect(width: width, height: height)
        }
        func clampInt(_ v: Double, _ hi: Int) -> Int { Int(min(max(v, 0), Double(hi))) }
        let x0 = clampInt((b.minX - 2).rounded(.down), width), y0 = clampInt((b.minY - 2).rounded(.down), height)
        let x1 = clampInt((b.maxX + 2).rounded(.up), width), y1 = clampInt((b.maxY + 2).rounded(.up), height)
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x0: x0, y0: y0, x1: x1, y1: y1)
    }

    /// The boxes of the pixels the regions can change, one per region
    /// (equal ones once); beyond `limit` boxes, their union.
    static func covering(_ regions: [RegionFrame], width: Int, height: Int, limit: Int = 8) -> [PixelRect] {
        covering(regions, mapping: OutputMapping(sourceWidth: width, sourceHeight: height, outputWidth: width, outputHeight: height),
                 limit: limit)
    }

    /// The same in the output pixels of `mapping` (a frame rendered smaller
    /// than the source).
    static func covering(_ regions: [RegionFrame], mapping: OutputMapping, limit: Int = 8) -> [PixelRect] {
        var boxes: [PixelRect] = []
        for r in regions {
            if let b = of(r, mapping: mapping), !boxes.contains(b) { boxes.append(b) }
        }
        guard boxes.count > limit else { return boxes }
        return [boxes.reduce(boxes[0]) { $0.union($1) }]
    }
}

/// Where things are in the window: the picture area on top left, the
/// inspector's column to its right, the chrome (timeline, status lines)
/// along the bottom. The picture sits in the picture area as its
/// `PictureView` says: fitted (the default: 1:1 when it fits, else scaled
/// down uniformly, never enlarged, centred), or at a zoom and offset the
/// user chose (wheel, pan, `F`), which may leave parts of it outside the
/// area (drawn clipped). Every window-to-image mapping of the studio goes
/// through here (`imagePointUnclamped` and `windowPoint`).
struct Layout {
    static let chromeHeight = 88
    static let minWidth = 480
    static let timelinePad = 8
    /// The longest side a picture is rendered at (the zoom stops there).
    static let maxRenderSide = 4096
    /// The inspector's column, and the least height it needs.
    static let panelWidth = 232
    static let panelMinHeight = 300
    /// A window narrower than the column and this much picture shows the picture alone.
    static let minPictureBesidePanel = 160

    let windowWidth: Int
    let windowHeight: Int
    /// The source image's size.
    let sourceWidth: Int
    let sourceHeight: Int
    /// Where the picture is drawn (window pixels; may reach outside the area).
    let imageRect: (x: Int, y: Int, w: Int, h: Int)
    /// Window pixels per image pixel.
    let scale: Double
    let view: PictureView
    /// The inspector column's width (0: the window is too narrow for it).
    let panelWidth: Int
    /// The chrome's top: the picture area and the inspector are the window above it.
    var chromeY: Int { max(1, windowHeight - Layout.chromeHeight) }
    var pictureArea: (x: Int, y: Int, w: Int, h: Int) { (0, 0, max(1, windowWidth - panelWidth), chromeY) }
    /// The inspector's column, right of the picture area.
    var panelRect: (x: Int, y: Int, w: Int, h: Int) { (windowWidth - panelWidth, 0, panelWidth, panelWidth > 0 ? chromeY : 0) }

    /// The layout inside a window of a given size, the picture placed as
    /// `view` says in the area left of the inspector.
    init(imageWidth iw: Int, imageHeight ih: Int, window: (width: Int, height: Int), view: PictureView = PictureView()) {
        let iw = max(1, iw), ih = max(1, ih)
        let ww = max(1, window.width), wh = max(1, window.height)
        sourceWidth = iw
        sourceHeight = ih
        windowWidth = ww
        windowHeight = wh
        panelWidth = ww >= Layout.panelWidth + Layout.minPictureBesidePanel ? Layout.panelWidth : 0
        let areaW = max(1, ww - panelWidth), areaH = max(1, wh - Layout.chromeHeight)
        if let z = view.zoom, z.isFinite, z > 0 {
            let s = Layout.clampZoom(z, iw, ih, fit: Layout.fitScale(iw, ih, areaW, areaH, enlarging: true))
            let w = max(1, Int((Double(iw) * s).rounded())), h = max(1, Int((Double(ih) * s).rounded()))
            scale = s
            imageRect = (Int(view.x.rounded()), Int(view.y.rounded()), w, h)
            self.view = PictureView(zoom: s, x: view.x, y: view.y)
        } else {
            let s = Layout.fitScale(iw, ih, areaW, areaH, enlarging: false)
            let w = max(1, Int((Double(iw) * s).rounded(.down))), h = max(1, Int((Double(ih) * s).rounded(.down)))
            scale = s
            imageRect = (max(0, (areaW - w) / 2), max(0, (areaH - h) / 2), w, h)
            self.view = PictureView()
        }
    }

    /// The window for a picture this size on a screen: the picture at 1:1
    /// when it fits, else scaled down; at least `minWidth` wide.
    init(imageWidth iw: Int, imageHeight ih: Int, screen: (width: Int, height: Int)?) {
        let iw = max(1, iw), ih = max(1, ih)
        var s = 1.0
        if let screen {
            let maxW = Double(max(64, screen.width - 16 - Layout.panelWidth)), maxH = Double(max(64, screen.height - Layout.chromeHeight - 48))
            s = min(1, maxW / Double(iw), maxH / Double(ih))
        }
        let w = max(1, Int((Double(iw) * s).rounded())), h = max(1, Int((Double(ih) * s).rounded()))
        self.init(imageWidth: iw, imageHeight: ih,
                  window: (max(w + Layout.panelWidth, Layout.minWidth), max(h, Layout.panelMinHeight) + Layout.chromeHeight))
    }

    /// The scale that fits the picture into an area (never above 1 unless `enlarging`).
    static func fitScale(_ iw: Int, _ ih: Int, _ aw: Int, _ ah: Int, enlarging: Bool) -> Double {
        let s = min(Double(max(1, aw)) / Double(max(1, iw)), Double(max(1, ah)) / Double(max(1, ih)))
        return enlarging ? s : min(1, s)
    }

    /// A zoom kept between a picture 32 px long (or the fit, if smaller)
    /// and `maxRenderSide` px long.
    static func clampZoom(_ z: Double, _ iw: Int, _ ih: Int, fit: Double) -> Double {
        let side = Double(max(iw, ih))
        let hi = max(Double(maxRenderSide) / side, min(1, fit))
        let lo = min(32 / side, fit, hi)
        return min(max(z, lo), hi)
    }

    // MARK: Zoom and pan

    /// The view zoomed by `factor` around window pixel `(cx, cy)`: the image
    /// point under it stays under it.
    func zoomed(by factor: Double, around cx: Int, _ cy: Int) -> PictureView {
        let z = Layout.clampZoom(scale * factor, sourceWidth, sourceHeight,
                                 fit: Layout.fitScale(sourceWidth, sourceHeight, pictureArea.w, pictureArea.h, enlarging: true))
        let px = (Double(cx - imageRect.x)) / scale, py = (Double(cy - imageRect.y)) / scale
        return kept(PictureView(zoom: z, x: Double(cx) - px * z, y: Double(cy) - py * z))
    }

    /// The view as it is, with its zoom and offset (a fitted one too).
    var placedView: PictureView {
        view.zoom == nil ? PictureView(zoom: scale, x: Double(imageRect.x), y: Double(imageRect.y)) : view
    }

    /// The view moved by `(dx, dy)` window pixels from `start` (a fitted
    /// start: this layout's placement).
    func panned(from start: PictureView, by dx: Int, _ dy: Int) -> PictureView {
        let base = start.zoom == nil ? placedView : start
        return kept(PictureView(zoom: base.zoom, x: base.x + Double(dx), y: base.y + Double(dy)))
    }

    /// The whole picture in the picture area, as large as it fits (enlarged
    /// too), centred.
    var fitted: PictureView {
        let a = pictureArea
        let z = Layout.clampZoom(Layout.fitScale(sourceWidth, sourceHeight, a.w, a.h, enlarging: true), sourceWidth, sourceHeight,
                                 fit: Layout.fitScale(sourceWidth, sourceHeight, a.w, a.h, enlarging: true))
        let w = (Double(sourceWidth) * z).rounded(), h = (Double(sourceHeight) * z).rounded()
        return PictureView(zoom: z, x: ((Double(a.w) - w) / 2).rounded(.down), y: ((Double(a.h) - h) / 2).rounded(.down))
    }

    /// `v` with at least 32 window pixels of the picture left in the area.
    private func kept(_ v: PictureView) -> PictureView {
        guard let z = v.zoom else { return v }
        let a = pictureArea
        let w = Double(sourceWidth) * z, h = Double(sourceHeight) * z
        let m = 32.0
        let x = min(max(v.x, Double(a.x) + min(m, w) - w), Double(a.x + a.w) - min(m, w))
        let y = min(max(v.y, Double(a.y) + min(m, h) - h), Double(a.y + a.h) - min(m, h))
        return PictureView(zoom: z, x: x.rounded(), y: y.rounded())
    }

    /// Whether window pixel `(x, y)` is in the picture area.
    func pictureAreaContains(_ x: Int, _ y: Int) -> Bool {
        let a = pictureArea
        return x >= a.x && x < a.x + a.w && y >= a.y && y < a.y + a.h
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

    /// The image point under window pixel `(x, y)`'s centre, nil outside
    /// the picture (or the picture area).
    func imagePoint(_ x: Int, _ y: Int) -> Point? {
        let r = imageRect
        guard x >= r.x, x < r.x + r.w, y >= r.y, y < r.y + r.h, pictureAreaContains(x, y) else { return nil }
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

/// How the picture sits in its area: fitted (`zoom` nil: scaled down to
/// fit, never enlarged, centred), or at a zoom (window pixels per image
/// pixel) with its top-left at `(x, y)` in window pixels.
struct PictureView: Equatable {
    var zoom: Double?
    var x = 0.0
    var y = 0.0
}
