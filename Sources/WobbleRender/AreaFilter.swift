import WobbleCore

/// Area averaging for outputs smaller than the image. The still image is
/// the image area-averaged to the output size on each axis where the
/// output is smaller (`downscale`, once per renderer); where regions move,
/// each output pixel is the wobbled frame at the image's size averaged over
/// the pixel's footprint (`averagePixel`; `Shaders/downscale.frag` in the
/// GLES backend): a downscaled frame is the wobbled image averaged, never a
/// point sample, and the wobble is not applied to an averaged image. Both
/// work on premultiplied colour.
enum AreaFilter {
    /// The size of the prefiltered source for `mapping`: the output size on
    /// an axis where the output is smaller, the source's on the others.
    static func size(_ m: OutputMapping) -> (width: Int, height: Int) {
        (min(m.sourceWidth, m.outputWidth), min(m.sourceHeight, m.outputHeight))
    }

    /// `source` area-averaged to `width × height` (each no larger than the
    /// source's): every output pixel the mean of the source over its
    /// footprint (fractional pixels weighted by their covered part), on
    /// premultiplied values divided by the averaged alpha again (no colour
    /// hidden under transparent pixels bleeds into visible ones), rounded to
    /// 8 bits. Returns `source` when the size is
    /// its own.
    static func downscale(_ source: RGBAImage, width: Int, height: Int) -> RGBAImage {
        if width == source.width && height == source.height { return source }
        let rowsFiltered = resample(source.pixels, count: source.width, lines: source.height, stride: 4, lineStride: source.width * 4,
                                    to: width)
        // rowsFiltered: width × source.height, doubles.
        let cols = resampleDoubles(rowsFiltered, count: source.height, lines: width, stride: width * 4, lineStride: 4, to: height)
        // The same two passes over premultiplied colour (the alpha is
        // channel 3 of either).
        let pmRows = resamplePremultiplied(source, to: width)
        let pmCols = resampleDoubles(pmRows, count: source.height, lines: width, stride: width * 4, lineStride: 4, to: height)
        var px = [UInt8](repeating: 0, count: width * height * 4)
        for k in 0 ..< (width * height) {
            let alpha = cols[k * 4 + 3]
            for c in 0 ..< 3 {
                px[k * 4 + c] = CPURenderer.unpremultiplied(pmCols[k * 4 + c], alpha: alpha, straight: cols[k * 4 + c])
            }
            px[k * 4 + 3] = UInt8(min(max(alpha.rounded(), 0), 255))
        }
        return RGBAImage(width: width, height: height, pixels: px)
    }

    /// The horizontal pass of `resample` over `colour × alpha` (alpha kept
    /// in channel 3): rows of `m` samples, doubles.
    private static func resamplePremultiplied(_ source: RGBAImage, to m: Int) -> [Double] {
        let ws = weights(from: source.width, to: m)
        let src = source.pixels, w = source.width
        var out = [Double](repeating: 0, count: source.height * m * 4)
        for l in 0 ..< source.height {
            for (i, (first, wt)) in ws.enumerated() {
                var acc = (0.0, 0.0, 0.0, 0.0)
                for (k, wk) in wt.enumerated() {
                    let o = (l * w + first + k) * 4
                    let a = Double(src[o + 3])
                    acc.0 += wk * Double(src[o]) * a
                    acc.1 += wk * Double(src[o + 1]) * a
                    acc.2 += wk * Double(src[o + 2]) * a
                    acc.3 += wk * a
                }
                let o = (l * m + i) * 4
                (out[o], out[o + 1], out[o + 2], out[o + 3]) = acc
            }
        }
        return out
    }

    /// The weights of a box filter from `n` samples to `m <= n`: for each
    /// output index, (first input index, weights summing to 1).
    static func weights(from n: Int, to m: Int) -> [(first: Int, w: [Double])] {
        let scale = Double(n) / Double(m)
        return (0 ..< m).map { i in
            let a = Double(i) * scale, b = Double(i + 1) * scale
            let first = Int(a.rounded(.down))
            let last = min(n - 1, Int(b.rounded(.up)) - 1)
            var w: [Double] = []
            for k in first ... max(first, last) {
                let lo = max(a, Double(k)), hi = min(b, Double(k + 1))
                w.append(max(0, hi - lo) / scale)
            }
            return (first, w)
        }
    }

    /// Filters `lines` lines of `count` samples (4 channels each) to `m`
    /// samples: output laid out as `lines × m`, 4 channels, row-major with
    /// the output sample index fastest (for rows) — see the callers.
    private static func resample(_ src: [UInt8], count: Int, lines: Int, stride: Int, lineStride: Int, to m: Int) -> [Double] {
        let ws = weights(from: count, to: m)
        var out = [Double](repeating: 0, count: lines * m * 4)
        for l in 0 ..< lines {
            for (i, (first, w)) in ws.enumerated() {
                for c in 0 ..< 4 {
                    var acc = 0.0
                    for (k, wk) in w.enumerated() { acc += wk * Double(src[l * lineStride + (first + k) * stride + c]) }
                    out[(l * m + i) * 4 + c] = acc
                }
            }
        }
        return out
    }

    /// As `resample`, for the second (vertical) pass over doubles laid out
    /// `count × lines` (rows of `lines` samples): output `m × lines`.
    private static func resampleDoubles(_ src: [Double], count: Int, lines: Int, stride: Int, lineStride: Int, to m: Int) -> [Double] {
        let ws = weights(from: count, to: m)
        var out = [Double](repeating: 0, count: lines * m * 4)
        for l in 0 ..< lines {
            for (j, (first, w)) in ws.enumerated() {
                for c in 0 ..< 4 {
                    var acc = 0.0
                    for (k, wk) in w.enumerated() { acc += wk * src[(first + k) * stride + l * lineStride + c] }
                    out[(j * lines + l) * 4 + c] = acc
                }
            }
        }
        return out
    }

    /// Output pixel `(i, j)` of `m` as the area average of `frame` (an image
    /// of the source's size, straight RGBA) over the pixel's footprint, on
    /// premultiplied values (a colour hidden under transparent pixels does
    /// not bleed), written as 4 bytes at `dst[o]`. A downscaled frame where
    /// regions move is made this way from the wobbled full-size frame, in
    /// both backends (`Shaders/downscale.frag` is the same loop).
    /// `frame` may hold only part of the image: its pixel `(x, y)` at
    /// `((y − origin.y) · stride + x − origin.x) · 4` (default: the whole
    /// image, `stride` its width); it must cover the footprint
    /// (`FrameDamage.footprint`).
    @inline(__always)
    static func averagePixel(_ frame: UnsafeBufferPointer<UInt8>, width: Int, height: Int, _ m: OutputMapping,
                             _ i: Int, _ j: Int, origin: (x: Int, y: Int) = (0, 0), stride: Int? = nil,
                             into dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        let stride = stride ?? width
        let ax = Double(i) * m.scaleX, bx = ax + m.scaleX, ay = Double(j) * m.scaleY, by = ay + m.scaleY
        let x0 = Int(ax.rounded(.down)), y0 = Int(ay.rounded(.down))
        let x1 = min(width - 1, Int(bx.rounded(.up)) - 1), y1 = min(height - 1, Int(by.rounded(.up)) - 1)
        var pm = (0.0, 0.0, 0.0, 0.0), straight = (0.0, 0.0, 0.0)
        if y0 <= y1 && x0 <= x1 {
            for y in y0 ... y1 {
                let wy = max(0, min(by, Double(y + 1)) - max(ay, Double(y)))
                for x in x0 ... x1 {
                    let w = max(0, min(bx, Double(x + 1)) - max(ax, Double(x))) * wy
                    let k = ((y - origin.y) * stride + x - origin.x) * 4
                    let r = Double(frame[k]), g = Double(frame[k + 1]), b = Double(frame[k + 2]), a = Double(frame[k + 3])
                    pm.0 += w * r * a; pm.1 += w * g * a; pm.2 += w * b * a; pm.3 += w * a
                    straight.0 += w * r; straight.1 += w * g; straight.2 += w * b
                }
            }
        }
        let area = m.scaleX * m.scaleY
        let alpha = pm.3 / area
        dst[o] = CPURenderer.unpremultiplied(pm.0 / area, alpha: alpha, straight: straight.0 / area)
        dst[o + 1] = CPURenderer.unpremultiplied(pm.1 / area, alpha: alpha, straight: straight.1 / area)
        dst[o + 2] = CPURenderer.unpremultiplied(pm.2 / area, alpha: alpha, straight: straight.2 / area)
        dst[o + 3] = UInt8(min(max(alpha.rounded(), 0), 255))
    }
}
