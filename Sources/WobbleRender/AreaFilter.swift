import WobbleCore

/// The source as both backends sample it: for an output smaller than the
/// source (on either axis), the source area-averaged to the output size on
/// that axis (a downscaled frame is the wobbled source averaged
/// over each output pixel's footprint, never a point sample); otherwise the
/// source itself. Sampling it bilinearly at a displaced position gives the
/// area average of the displaced source wherever the offset is locally a
/// translation, which inside a region is everywhere up to the offset's
/// gradient over one output pixel.
///
/// Both backends use the same prefiltered image (the GLES backend uploads
/// it as its source texture), so they agree as closely downscaled as at
/// full size.
enum AreaFilter {
    /// The size of the prefiltered source for `mapping`: the output size on
    /// an axis where the output is smaller, the source's on the others.
    static func size(_ m: OutputMapping) -> (width: Int, height: Int) {
        (min(m.sourceWidth, m.outputWidth), min(m.sourceHeight, m.outputHeight))
    }

    /// `source` area-averaged to `width × height` (each no larger than the
    /// source's): every output pixel the mean of the source over its
    /// footprint (fractional pixels weighted by their covered part), on
    /// straight values, rounded to 8 bits. Returns `source` when the size is
    /// its own.
    static func downscale(_ source: RGBAImage, width: Int, height: Int) -> RGBAImage {
        if width == source.width && height == source.height { return source }
        let rowsFiltered = resample(source.pixels, count: source.width, lines: source.height, stride: 4, lineStride: source.width * 4,
                                    to: width)
        // rowsFiltered: width × source.height, doubles.
        let cols = resampleDoubles(rowsFiltered, count: source.height, lines: width, stride: width * 4, lineStride: 4, to: height)
        var px = [UInt8](repeating: 0, count: width * height * 4)
        for j in 0 ..< height {
            for i in 0 ..< width {
                for c in 0 ..< 4 {
                    px[(j * width + i) * 4 + c] = UInt8(min(max(cols[(j * width + i) * 4 + c].rounded(), 0), 255))
                }
            }
        }
        return RGBAImage(width: width, height: height, pixels: px)
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
}
