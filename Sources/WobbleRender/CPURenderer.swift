import WobbleCore

/// The CPU reference renderer: the wobble model and its scene-wide options evaluated exactly, in doubles,
/// per output pixel; bilinear sampling on premultiplied RGBA (divided by
/// alpha again), mirrored or clamped
/// at the image border (`FrameState.edges`); overlapping regions summed or
/// first-wins (`FrameState.overlap`); a downscaled output is the wobbled
/// frame at the image's size, area-averaged (`AreaFilter`). The GLES backend
/// is tested against it.
public final class CPURenderer: FrameRenderer {
    /// The source image, sampled by every frame.
    public let source: RGBAImage
    /// Output pixel centres in source-image coordinates.
    public let mapping: OutputMapping
    /// The image sampled: the source, area-averaged on the axes where the
    /// output is smaller.
    let sampled: RGBAImage
    /// Sampled-image pixels per source pixel, per axis (1 when not downscaled).
    let factor: (x: Double, y: Double)
    /// The output when nothing moves (the scaled still image), made once.
    let still: RGBAImage

    /// A renderer of `source` at `outputWidth`×`outputHeight` (default: the
    /// source's size); the scaled still image is made here, once.
    public init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil) {
        self.source = source
        let m = OutputMapping(sourceWidth: source.width, sourceHeight: source.height,
                              outputWidth: outputWidth ?? source.width, outputHeight: outputHeight ?? source.height)
        mapping = m
        let size = AreaFilter.size(m)
        let smp = AreaFilter.downscale(source, width: size.width, height: size.height)
        let f = (x: Double(size.width) / Double(max(source.width, 1)), y: Double(size.height) / Double(max(source.height, 1)))
        sampled = smp
        factor = f
        if m.outputWidth == smp.width && m.outputHeight == smp.height {
            still = smp
        } else {
            var img = RGBAImage(width: m.outputWidth, height: m.outputHeight)
            img.pixels.withUnsafeMutableBufferPointer { out in
                smp.pixels.withUnsafeBufferPointer { src in
                    for j in 0..<m.outputHeight {
                        for i in 0..<m.outputWidth {
                            let p = m.sourcePoint(i, j)
                            CPURenderer.sample(src, smp.width, smp.height, Point(p.x * f.x, p.y * f.y), .clamp,
                                               into: out, at: (j * m.outputWidth + i) * 4)
                        }
                    }
                }
            }
            still = img
        }
    }

    /// Renders `frame`: straight-alpha RGBA, rows top to bottom. Only the
    /// output pixels of the boxes `FrameDamage` gives are evaluated; the
    /// rest are the still image. Never throws.
    public func render(_ frame: FrameState) throws -> RGBAImage {
        guard !frame.regions.isEmpty else { return still }
        var out = still
        render(frame, boxes: FrameDamage.boxes(frame, mapping: mapping), into: &out)
        return out
    }

    /// Sets the pixels of `boxes` in `image` to `render(frame)`'s; the
    /// others stay as they are.
    public func render(_ frame: FrameState, boxes: [PixelRect], into image: inout RGBAImage) {
        let m = mapping
        guard image.width == m.outputWidth, image.height == m.outputHeight else { return }
        for b in boxes {
            let box = b.clipped(width: m.outputWidth, height: m.outputHeight)
            guard !box.isEmpty else { continue }
            image.copy(box, from: still)
            guard m.filtersWobbledFrame else {
                image.pixels.withUnsafeMutableBufferPointer { dst in
                    CPURenderer.wobble(frame, mapping: m, box: box, source: sampled, image: source, factor: factor, into: dst, origin: (0, 0),
                                       stride: m.outputWidth)
                }
                continue
            }
            // Smaller output: the wobbled frame at the image's size over the
            // box's footprint, area-averaged over each output pixel's.
            FrameDamage.drawDownscaled(box, mapping: m, source: source, into: &image) { dst, fp in
                CPURenderer.wobble(frame, mapping: FrameDamage.fullSize(m), box: fp, source: source, image: source, factor: (1, 1), into: dst,
                                   origin: (fp.x0, fp.y0), stride: fp.width)
            }
        }
    }

    /// The output pixels of `box` under `m` that `frame`'s regions move,
    /// sampled from `sampled` (`factor`: its pixels per source-image pixel)
    /// into `dst`, whose pixel `(i, j)` is at `((j − origin.y) · stride + i − origin.x) · 4`;
    /// the pixels no region moves are left as they are.
    private static func wobble(_ frame: FrameState, mapping m: OutputMapping, box: PixelRect, source sampled: RGBAImage,
                               image: RGBAImage, factor f: (x: Double, y: Double), into dst: UnsafeMutableBufferPointer<UInt8>,
                               origin: (x: Int, y: Int), stride: Int) {
        guard !box.isEmpty else { return }
        let regions = frame.regions
        let sum = frame.overlap == .sum, edges = frame.edges
        let sw = sampled.width, sh = sampled.height
        let hasCutouts = regions.contains { $0.cutout != nil }
        image.pixels.withUnsafeBufferPointer { full in
            sampled.pixels.withUnsafeBufferPointer { src in
                for j in box.y0 ..< box.y1 {
                    for i in box.x0 ..< box.x1 {
                        let p = m.sourcePoint(i, j)
                        // A cutout region (the first, in prepare order, that
                        // moves p) draws its object displaced over its plate.
                        if hasCutouts, let c = firstCutout(regions, at: p) {
                            CPURenderer.composite(c.layer, image: full, p: p, q: p + c.offset, edges: edges,
                                                  into: dst, at: ((j - origin.y) * stride + i - origin.x) * 4)
                            continue
                        }
                        var total: Point?
                        for r in regions where r.cutout == nil {
                            let b = r.shape.bbox
                            guard p.x >= b.minX, p.x <= b.maxX, p.y >= b.minY, p.y <= b.maxY else { continue }
                            if let off = r.offset(at: p) {
                                total = total.map { $0 + off } ?? off
                                if !sum { break }
                            }
                        }
                        if let off = total {
                            let q = p + off
                            CPURenderer.sample(src, sw, sh, Point(q.x * f.x, q.y * f.y), edges,
                                               into: dst, at: ((j - origin.y) * stride + i - origin.x) * 4)
                        }
                    }
                }
            }
        }
    }

    /// The first region of `regions` with a cutout that moves `p`, with its
    /// layer and its offset there.
    @inline(__always)
    static func firstCutout(_ regions: [RegionFrame], at p: Point) -> (layer: CutoutLayer, offset: Point)? {
        for r in regions {
            guard let layer = r.cutout else { continue }
            let b = r.shape.bbox
            guard p.x >= b.minX, p.x <= b.maxX, p.y >= b.minY, p.y <= b.maxY else { continue }
            if let off = r.offset(at: p) { return (layer, off) }
        }
        return nil
    }

    /// The four texels around `(x, y)` (image pixels; mirrored into the
    /// `width × height` image, or clamped to its edge) and the fractions
    /// between them: how a cutout samples its object and its plate.
    @inline(__always)
    static func cutoutFootprint(_ x: Double, _ y: Double, width w: Int, height h: Int,
                                mirrored: Bool) -> (Int, Int, Int, Int, Double, Double) {
        let px = mirrored ? mirror(x, Double(w)) : x
        let py = mirrored ? mirror(y, Double(h)) : y
        let fx = min(max(px - 0.5, 0), Double(w - 1)), fy = min(max(py - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy)
        return (x0, y0, min(x0 + 1, w - 1), min(y0 + 1, h - 1), fx - Double(x0), fy - Double(y0))
    }

    /// A cutout's pixel: its object layer (premultiplied, 0
    /// outside its box) sampled bilinearly at `q` (mirrored or clamped into
    /// the image as the source is), over its plate (the image outside the
    /// box) sampled at `p`: `object + (1 − object alpha) · plate` on
    /// premultiplied values, divided by the alpha again; where that rounds
    /// to 0, the plate's straight colour. `image` is the source image's
    /// RGBA, the size the layer was made for.
    @inline(__always)
    static func composite(_ layer: CutoutLayer, image: UnsafeBufferPointer<UInt8>, p: Point, q: Point, edges: EdgeMode,
                          into dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        let w = layer.imageWidth, box = layer.box
        func footprint(_ p: Point, mirrored: Bool) -> (Int, Int, Int, Int, Double, Double) {
            cutoutFootprint(p.x, p.y, width: w, height: layer.imageHeight, mirrored: mirrored)
        }
        var object = (0.0, 0.0, 0.0, 0.0)
        var plate = (0.0, 0.0, 0.0, 0.0), straight = (0.0, 0.0, 0.0)
        layer.object.withUnsafeBufferPointer { ob in
            let (x0, y0, x1, y1, ax, ay) = footprint(q, mirrored: edges == .mirror)
            @inline(__always) func tap(_ x: Int, _ y: Int, _ wt: Double) {
                guard wt != 0, x >= box.x0, x < box.x1, y >= box.y0, y < box.y1 else { return }
                let k = ((y - box.y0) * box.width + x - box.x0) * 4
                object.0 += wt * Double(ob[k]); object.1 += wt * Double(ob[k + 1])
                object.2 += wt * Double(ob[k + 2]); object.3 += wt * Double(ob[k + 3])
            }
            tap(x0, y0, (1 - ax) * (1 - ay)); tap(x1, y0, ax * (1 - ay)); tap(x0, y1, (1 - ax) * ay); tap(x1, y1, ax * ay)
        }
        layer.plate.withUnsafeBufferPointer { pl in
            let (x0, y0, x1, y1, ax, ay) = footprint(p, mirrored: false)
            @inline(__always) func tap(_ x: Int, _ y: Int, _ wt: Double) {
                guard wt != 0 else { return }
                let inBox = x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1
                let src = inBox ? pl : image
                let k = inBox ? ((y - box.y0) * box.width + x - box.x0) * 4 : (y * w + x) * 4
                let r = Double(src[k]), g = Double(src[k + 1]), b = Double(src[k + 2]), a = Double(src[k + 3])
                plate.0 += wt * r * a / 255; plate.1 += wt * g * a / 255; plate.2 += wt * b * a / 255; plate.3 += wt * a
                straight.0 += wt * r; straight.1 += wt * g; straight.2 += wt * b
            }
            tap(x0, y0, (1 - ax) * (1 - ay)); tap(x1, y0, ax * (1 - ay)); tap(x0, y1, (1 - ax) * ay); tap(x1, y1, ax * ay)
        }
        let keep = 1 - object.3 / 255
        let alpha = object.3 + keep * plate.3
        let premultiplied = (object.0 + keep * plate.0, object.1 + keep * plate.1, object.2 + keep * plate.2)
        func channel(_ v: Double, _ s: Double) -> UInt8 {
            let c = alpha >= 0.5 ? v / alpha * 255 : s
            return UInt8(min(max(c.rounded(), 0), 255))
        }
        dst[o] = channel(premultiplied.0, straight.0)
        dst[o + 1] = channel(premultiplied.1, straight.1)
        dst[o + 2] = channel(premultiplied.2, straight.2)
        dst[o + 3] = UInt8(min(max(alpha.rounded(), 0), 255))
    }

    /// `x` reflected into `[0, size]` at the borders (period `2·size`), as
    /// GL_MIRRORED_REPEAT maps texel indices; NaN and ±inf become 0.
    @inline(__always)
    static func mirror(_ x: Double, _ size: Double) -> Double {
        guard x.isFinite else { return 0 }
        if x >= 0 && x <= size { return x }
        var r = x.truncatingRemainder(dividingBy: 2 * size)
        if r < 0 { r += 2 * size }
        return r > size ? 2 * size - r : r
    }

    /// Bilinear sample of `src` (`w × h`) at point `p` of its own pixel
    /// coordinates (pixel centres at +0.5), mirrored into the image or
    /// clamped to the edge, written as 4 bytes at `dst[at]`.
    @inline(__always)
    static func sample(_ src: UnsafeBufferPointer<UInt8>, _ w: Int, _ h: Int, _ p: Point, _ edges: EdgeMode,
                       into dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        let px = edges == .mirror ? mirror(p.x, Double(w)) : p.x
        let py = edges == .mirror ? mirror(p.y, Double(h)) : p.y
        let fx = min(max(px - 0.5, 0), Double(w - 1))
        let fy = min(max(py - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1)
        let ax = fx - Double(x0), ay = fy - Double(y0)
        let i00 = (y0 * w + x0) * 4, i10 = (y0 * w + x1) * 4, i01 = (y1 * w + x0) * 4, i11 = (y1 * w + x1) * 4
        let w00 = (1 - ax) * (1 - ay), w10 = ax * (1 - ay), w01 = (1 - ax) * ay, w11 = ax * ay
        let a00 = Double(src[i00 + 3]), a10 = Double(src[i10 + 3]), a01 = Double(src[i01 + 3]), a11 = Double(src[i11 + 3])
        let alpha = a00 * w00 + a10 * w10 + a01 * w01 + a11 * w11
        for c in 0..<3 {
            let c00 = Double(src[i00 + c]), c10 = Double(src[i10 + c]), c01 = Double(src[i01 + c]), c11 = Double(src[i11 + c])
            dst[o + c] = unpremultiplied(c00 * a00 * w00 + c10 * a10 * w10 + c01 * a01 * w01 + c11 * a11 * w11, alpha: alpha,
                                         straight: c00 * w00 + c10 * w10 + c01 * w01 + c11 * w11)
        }
        dst[o + 3] = UInt8(min(max(alpha.rounded(), 0), 255))
    }

    /// One colour channel of a sample taken on premultiplied values: the
    /// filtered `colour × alpha` divided by the filtered alpha, so that no
    /// colour hidden under fully transparent pixels reaches a visible one.
    /// Where the filtered alpha rounds to 0 (below 0.5 of 255) nothing is
    /// visible: the straight filtered colour is kept (a pixel copied
    /// unchanged keeps its bytes, and a rounding error in a weight cannot
    /// pick the colour of a neighbour).
    @inline(__always)
    static func unpremultiplied(_ premultiplied: Double, alpha: Double, straight: Double) -> UInt8 {
        let v = alpha >= 0.5 ? premultiplied / alpha : straight
        return UInt8(min(max(v.rounded(), 0), 255))
    }
}
