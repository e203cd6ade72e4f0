import WobbleCore

/// The CPU reference renderer: SPEC §5 evaluated exactly, in doubles, per
/// output pixel; bilinear sampling clamped to the edge, on straight RGBA.
/// The GLES backend is tested against it.
public final class CPURenderer: FrameRenderer {
    /// The source image, sampled by every frame.
    public let source: RGBAImage
    /// Output pixel centres in source-image coordinates.
    public let mapping: OutputMapping
    /// The output when nothing moves (the scaled still image), made once.
    private let still: RGBAImage


    /// A renderer of `source` at `outputWidth`×`outputHeight` (default: the
    /// source's size); the scaled still image is made here, once.
    public init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil) {
        self.source = source
        let m = OutputMapping(sourceWidth: source.width, sourceHeight: source.height,
                              outputWidth: outputWidth ?? source.width, outputHeight: outputHeight ?? source.height)
        mapping = m
        if m.outputWidth == source.width && m.outputHeight == source.height {
            still = source
        } else {
            var img = RGBAImage(width: m.outputWidth, height: m.outputHeight)
            img.pixels.withUnsafeMutableBufferPointer { out in
                source.pixels.withUnsafeBufferPointer { src in
                    for j in 0..<m.outputHeight {
                        for i in 0..<m.outputWidth {
                            CPURenderer.sample(src, source.width, source.height, m.sourcePoint(i, j), into: out, at: (j * m.outputWidth + i) * 4)
                        }
                    }
                }
            }
            still = img
        }
    }

    /// Renders `frame`: straight-alpha RGBA, rows top to bottom. Only the
    /// output pixels inside some moving region's box are evaluated; the rest
    /// are the still image. Never throws.
    public func render(_ frame: FrameState) throws -> RGBAImage {
        var out = still
        guard !frame.regions.isEmpty else { return out }
        let m = mapping
        // Only output pixels whose source point lies in some region's bbox can move.
        var minI = m.outputWidth, maxI = -1, minJ = m.outputHeight, maxJ = -1
        for r in frame.regions {
            let b = m.pixelBounds(covering: r.shape.bbox)
            minI = min(minI, b.i0)
            maxI = max(maxI, b.i1)
            minJ = min(minJ, b.j0)
            maxJ = max(maxJ, b.j1)
        }
        guard minI <= maxI, minJ <= maxJ else { return out }
        let regions = frame.regions
        out.pixels.withUnsafeMutableBufferPointer { dst in
            source.pixels.withUnsafeBufferPointer { src in
                for j in minJ...maxJ {
                    for i in minI...maxI {
                        let p = m.sourcePoint(i, j)
                        for r in regions {
                            let b = r.shape.bbox
                            guard p.x >= b.minX, p.x <= b.maxX, p.y >= b.minY, p.y <= b.maxY else { continue }
                            if let off = r.offset(at: p) {
                                CPURenderer.sample(src, source.width, source.height, p + off, into: dst, at: (j * m.outputWidth + i) * 4)
                                break
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// Bilinear sample of `src` at source point `p` (pixel centres at +0.5),
    /// clamped to the edge, written as 4 bytes at `dst[at]`.
    @inline(__always)
    static func sample(_ src: UnsafeBufferPointer<UInt8>, _ w: Int, _ h: Int, _ p: Point,
                       into dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        let fx = min(max(p.x - 0.5, 0), Double(w - 1))
        let fy = min(max(p.y - 0.5, 0), Double(h - 1))
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1)
        let ax = fx - Double(x0), ay = fy - Double(y0)
        let i00 = (y0 * w + x0) * 4, i10 = (y0 * w + x1) * 4, i01 = (y1 * w + x0) * 4, i11 = (y1 * w + x1) * 4
        for c in 0..<4 {
            let top = Double(src[i00 + c]) * (1 - ax) + Double(src[i10 + c]) * ax
            let bot = Double(src[i01 + c]) * (1 - ax) + Double(src[i11 + c]) * ax
            let v = top * (1 - ay) + bot * ay
            dst[o + c] = UInt8(min(max(v.rounded(), 0), 255))
        }
    }
}
