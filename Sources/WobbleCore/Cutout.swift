/// Where a cutout's mask comes from (`addSketch{cutout = "auto" | "PATH"}`).
public enum CutoutSource: Sendable, Hashable, Codable {
    /// Found by GrabCut, initialised from the region (`"auto"`).
    case auto
    /// A mask image, resolved like `image()`: the full path, and the path as
    /// the scene wrote it (for messages).
    case file(path: String, written: String)
    /// A mask made in memory: the studio's cutout before `Ctrl+S` writes it
    /// beside the scene.
    case memory(MaskImage)
}

/// A stroke painted over the picture to correct a cutout (the studio's
/// `Shift`+drag marks object, `Alt`+drag background): its points in image
/// pixels and the brush's radius.
public struct CutoutStroke: Sendable, Hashable, Codable {
    public var points: [Point]
    public var radius: Double
    /// true: the pixels under it are object for sure; false: background.
    public var object: Bool

    public init(points: [Point], radius: Double, object: Bool) {
        self.points = points
        self.radius = radius
        self.object = object
    }

    /// `strokes` painted into two masks of `width × height` (255 under a
    /// stroke): the object's and the background's, nil when no stroke is of
    /// that kind. A later stroke wins where it crosses an earlier one.
    public static func seeds(_ strokes: [CutoutStroke], width: Int, height: Int) -> (object: GreyMask?, background: GreyMask?) {
        var object: GreyMask?, background: GreyMask?
        for s in strokes {
            if s.object { object = object ?? GreyMask(width: width, height: height) } else { background = background ?? GreyMask(width: width, height: height) }
            s.forEachPixel(width: width, height: height) { k in
                object?.pixels[k] = s.object ? 255 : 0
                background?.pixels[k] = s.object ? 0 : 255
            }
        }
        return (object, background)
    }

    /// Sets every pixel of `m` whose centre lies within `radius` of the
    /// stroke's polyline to 255.
    public func paint(into m: inout GreyMask) {
        forEachPixel(width: m.width, height: m.height) { m.pixels[$0] = 255 }
    }

    /// Calls `body` with the index (`y · width + x`) of every pixel of a
    /// `width × height` picture whose centre lies within `radius` of the
    /// stroke's polyline (a pixel under two segments twice).
    public func forEachPixel(width: Int, height: Int, _ body: (Int) -> Void) {
        guard let first = points.first, radius > 0, radius.isFinite else { return }
        let segments = points.count == 1 ? [(first, first)] : zip(points, points.dropFirst()).map { ($0, $1) }
        let r2 = radius * radius
        let limit = -(1 << 40) ... (1 << 40)
        for (a, b) in segments where a.isFinite && b.isFinite {
            let x0 = max(0, Int(clamping: min(a.x, b.x) - radius, to: limit, rounding: .down))
            let x1 = min(width - 1, Int(clamping: max(a.x, b.x) + radius, to: limit, rounding: .up))
            let y0 = max(0, Int(clamping: min(a.y, b.y) - radius, to: limit, rounding: .down))
            let y1 = min(height - 1, Int(clamping: max(a.y, b.y) + radius, to: limit, rounding: .up))
            guard x0 <= x1, y0 <= y1 else { continue }
            let d = b - a, len2 = d.x * d.x + d.y * d.y
            for y in y0...y1 {
                for x in x0...x1 {
                    let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                    let t = len2 == 0 ? 0 : max(0, min(1, ((p.x - a.x) * d.x + (p.y - a.y) * d.y) / len2))
                    let q = Point(a.x + d.x * t - p.x, a.y + d.y * t - p.y)
                    if q.x * q.x + q.y * q.y <= r2 { body(y * width + x) }
                }
            }
        }
    }
}

/// A cutout mask held in memory (`CutoutSource.memory`), with the strokes
/// it was refined with. Equal and hashed by its bytes and strokes (a
/// digest of the bytes is taken once), so that a frame's lookups of its
/// layer cost nothing and an edit that gives the same mask is no change.
public final class MaskImage: Sendable, Hashable, Codable, CustomStringConvertible {
    public let mask: GreyMask
    public let strokes: [CutoutStroke]
    /// FNV-1a of the mask's size and bytes.
    public let digest: UInt64

    public init(mask: GreyMask, strokes: [CutoutStroke] = []) {
        self.mask = mask
        self.strokes = strokes
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ b: UInt8) { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        for v in [mask.width, mask.height] { for k in 0..<8 { add(UInt8(truncatingIfNeeded: v >> (k * 8))) } }
        mask.pixels.withUnsafeBufferPointer { p in for b in p { add(b) } }
        digest = h
    }

    private enum CodingKeys: String, CodingKey { case mask, strokes }

    public convenience init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mask: try c.decode(GreyMask.self, forKey: .mask), strokes: try c.decode([CutoutStroke].self, forKey: .strokes))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mask, forKey: .mask)
        try c.encode(strokes, forKey: .strokes)
    }

    public static func == (a: MaskImage, b: MaskImage) -> Bool {
        a === b || (a.digest == b.digest && a.strokes == b.strokes && a.mask == b.mask)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    public var description: String { "MaskImage(\(mask.width)x\(mask.height), \(strokes.count) strokes)" }
}

/// A region's cutout as the scene asked for it: the mask's source, the
/// region it was given for (GrabCut starts from it; it must lie inside the
/// image), and where the scene asked (`scene.lua:12`, for messages).
/// Resolved into a `CutoutLayer` once per run, after the script
/// (`Clip.cutouts`).
public struct CutoutRequest: Sendable, Hashable, Codable {
    public var source: CutoutSource
    public var shape: RegionShape
    /// `scene.lua:12` (the chunk and line of the `addSketch` call), nil when
    /// not known.
    public var place: String?

    public init(source: CutoutSource, shape: RegionShape, place: String?) {
        self.source = source
        self.shape = shape
        self.place = place
    }
}

/// An 8-bit grey mask the size of an image: 255 object, 0 background,
/// values between a soft edge. One byte per pixel.
public struct GreyMask: Sendable, Equatable, Codable {
    public let width: Int
    public let height: Int
    /// `width * height` bytes, rows top to bottom.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "GreyMask: pixel count")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    private enum CodingKeys: String, CodingKey { case width, height, pixels }

    /// Decoded: a size and as many bytes (anything else is refused, never trapped on).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let w = try c.decode(Int.self, forKey: .width), h = try c.decode(Int.self, forKey: .height)
        let pixels = try c.decode([UInt8].self, forKey: .pixels)
        guard w >= 0, h >= 0, w.multipliedReportingOverflow(by: h) == (pixels.count, false) else {
            throw DecodingError.dataCorruptedError(forKey: .pixels, in: c, debugDescription: "a \(w)x\(h) mask needs \(w)x\(h) bytes, got \(pixels.count)")
        }
        self.init(width: w, height: h, pixels: pixels)
    }

    /// An all-background mask.
    public init(width: Int, height: Int) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height))
    }

    /// The smallest box holding every pixel that is not 0 (empty when none).
    public var objectBox: PixelRect {
        var x0 = width, y0 = height, x1 = 0, y1 = 0
        pixels.withUnsafeBufferPointer { p in
            for y in 0..<height {
                let row = y * width
                var first = -1, last = -1
                for x in 0..<width where p[row + x] != 0 {
                    if first < 0 { first = x }
                    last = x
                }
                guard first >= 0 else { continue }
                x0 = min(x0, first)
                x1 = max(x1, last + 1)
                y0 = min(y0, y)
                y1 = y + 1
            }
        }
        return x1 > x0 ? PixelRect(x0: x0, y0: y0, x1: x1, y1: y1) : PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)
    }

    /// Whether every pixel is background.
    public var isAllBackground: Bool { !pixels.contains { $0 != 0 } }
    /// Whether some pixel of `box` (clipped to the mask) is not background.
    public func hasObject(in box: PixelRect) -> Bool {
        let b = box.clipped(width: width, height: height)
        guard !b.isEmpty else { return false }
        for y in b.y0 ..< b.y1 where pixels[(y * width + b.x0) ..< (y * width + b.x1)].contains(where: { $0 != 0 }) {
            return true
        }
        return false
    }
    /// Whether every pixel is fully object.
    public var isAllObject: Bool { !pixels.contains { $0 != 255 } }
}

/// What a frame needs to draw a cutout region: over a box of the image
/// (the object's box with a margin), the object layer (premultiplied RGBA:
/// the source's colour with the background's share taken out, alpha the
/// mask) and the plate (straight RGBA: the source with the object's area
/// filled from around it). Outside the box the object is transparent and
/// the plate is the source. Made once per run (`CutoutLayer.init`); the
/// renderers composite `object(p + offset)` over `plate(p)`.
///
/// Memory: the mask (one byte per image pixel), and eight bytes per pixel of
/// the box for the object and the plate.
public final class CutoutLayer: Sendable, Equatable, CustomStringConvertible {
    /// The image size the layer belongs to.
    public let imageWidth: Int, imageHeight: Int
    /// The box of the image the object and plate cover (source pixels).
    public let box: PixelRect
    /// The mask, the size of the image.
    public let mask: GreyMask
    /// `box.area * 4` bytes: premultiplied RGBA, alpha = mask × source alpha.
    public let object: [UInt8]
    /// `box.area * 4` bytes: straight RGBA, the plate.
    public let plate: [UInt8]

    /// The margin (pixels) of transparent object around the mask in `box`,
    /// so that bilinear samples at the box's edge read 0.
    public static let margin = 2

    /// A layer from `source`, its `mask` (same size) and `plate` (the
    /// source with the object filled in: an image of the source's size, or
    /// nil for the source itself). `object = source − (1 − a) · plate` on
    /// premultiplied values, clamped to `[0, alpha]`, so that at rest
    /// `object + (1 − alpha) · plate` gives the source back (no halo of the
    /// old background around a moving soft edge).
    public init(source: RGBAImage, mask: GreyMask, plate full: RGBAImage?) {
        precondition(mask.width == source.width && mask.height == source.height, "CutoutLayer: mask size")
        imageWidth = source.width
        imageHeight = source.height
        self.mask = mask
        let ob = mask.objectBox
        let m = CutoutLayer.margin
        let b = ob.isEmpty ? ob
            : PixelRect(x0: max(0, ob.x0 - m), y0: max(0, ob.y0 - m), x1: min(source.width, ob.x1 + m),
                        y1: min(source.height, ob.y1 + m))
        box = b
        var object = [UInt8](repeating: 0, count: b.area * 4)
        var plate = [UInt8](repeating: 0, count: b.area * 4)
        let w = source.width
        for y in b.y0 ..< b.y1 {
            for x in b.x0 ..< b.x1 {
                let i = (y * w + x) * 4, o = ((y - b.y0) * b.width + (x - b.x0)) * 4
                let a = mask.pixels[y * w + x]
                // The plate is the source wherever the mask is 0; its alpha
                // is always the source's.
                let from = a != 0 ? (full?.pixels ?? source.pixels) : source.pixels
                for c in 0..<3 { plate[o + c] = from[i + c] }
                plate[o + 3] = source.pixels[i + 3]
                guard a != 0 else { continue }
                let coverage = Double(a) / 255
                let sa = Double(source.pixels[i + 3]) / 255
                let alpha = coverage * sa
                for c in 0..<3 {
                    let s = Double(source.pixels[i + c]) / 255 * sa
                    let bg = Double(plate[o + c]) / 255 * sa
                    let v = min(max(s - (1 - coverage) * bg, 0), alpha)
                    object[o + c] = UInt8((v * 255).rounded())
                }
                object[o + 3] = UInt8((alpha * 255).rounded())
            }
        }
        self.object = object
        self.plate = plate
    }

    public static func == (a: CutoutLayer, b: CutoutLayer) -> Bool { a === b }

    public var description: String { "CutoutLayer(\(imageWidth)x\(imageHeight), box \(box))" }

    /// Bytes held: the mask, the object and the plate.
    public var byteCount: Int { mask.pixels.count + object.count + plate.count }
}
