import WobbleCore

/// The one home of which output pixels a frame can change: both renderers
/// bound their work with it, and `RegionFrames` renders, reads back and
/// hands on only these boxes.
///
/// A region moves an output pixel only where the pixel's source point lies
/// in the region's bounding box (both renderers test exactly that, then the
/// region's boundary), so a region's box is the output pixels whose source
/// points may lie in its bbox (`OutputMapping.pixelBounds`). What sampling
/// reads does not grow it: the displacement reach and mirror sampling at the
/// image's edges read the source, which both renderers keep whole (a texture,
/// an image), never a previous frame. For an output smaller than the image
/// the regions move pixels of the frame at the image's size, and an output
/// pixel changes where its footprint (the area filter's) meets them: the box
/// grows by that footprint. The overlay is painted over whole frames
/// (`RegionFrames`), so it adds no box of its own here.
public enum FrameDamage {
    /// The output pixels `frame`'s regions may change under `m`, one box per
    /// region, merged where they overlap (`PixelRect.merged`). Outside them
    /// the frame is the still image. Empty when nothing moves.
    public static func boxes(_ frame: FrameState, mapping m: OutputMapping) -> [PixelRect] {
        PixelRect.merged(frame.regions.map { box(covering: $0.shape.bbox, mapping: m) })
    }

    /// The output pixels that a region with bounding box `bbox` (source
    /// pixels) may change under `m`; empty when none.
    static func box(covering bbox: Rect, mapping m: OutputMapping) -> PixelRect {
        guard m.filtersWobbledFrame else { return pixelBox(m.pixelBounds(covering: bbox)) }
        // The image-size pixels it moves, then every output pixel whose
        // footprint [i·scale, (i+1)·scale) meets them.
        let b = fullSize(m).pixelBounds(covering: bbox)
        guard b.i0 <= b.i1, b.j0 <= b.j1 else { return PixelRect(x0: 0, y0: 0, x1: 0, y1: 0) }
        return PixelRect(x0: Int(Double(b.i0) / m.scaleX), y0: Int(Double(b.j0) / m.scaleY),
                        x1: Int((Double(b.i1 + 1) / m.scaleX).rounded(.up)),
                        y1: Int((Double(b.j1 + 1) / m.scaleY).rounded(.up)))
            .clipped(width: m.outputWidth, height: m.outputHeight)
    }

    /// The pixels at the image's size that the area filter reads for the
    /// output pixels of `box` (a smaller output): their footprints, with a
    /// pixel of margin for the rounding of `i · scale`, clipped to the image.
    static func footprint(of box: PixelRect, mapping m: OutputMapping) -> PixelRect {
        PixelRect(x0: Int((Double(box.x0) * m.scaleX).rounded(.down)) - 1,
                 y0: Int((Double(box.y0) * m.scaleY).rounded(.down)) - 1,
                 x1: Int((Double(box.x1) * m.scaleX).rounded(.up)) + 1,
                 y1: Int((Double(box.y1) * m.scaleY).rounded(.up)) + 1)
            .clipped(width: m.sourceWidth, height: m.sourceHeight)
    }

    /// The mapping of the frame at the image's own size.
    static func fullSize(_ m: OutputMapping) -> OutputMapping {
        OutputMapping(sourceWidth: m.sourceWidth, sourceHeight: m.sourceHeight,
                      outputWidth: m.sourceWidth, outputHeight: m.sourceHeight)
    }

    /// `pixelBounds`' inclusive columns and rows as a box.
    static func pixelBox(_ b: (i0: Int, i1: Int, j0: Int, j1: Int)) -> PixelRect {
        b.i0 <= b.i1 && b.j0 <= b.j1 ? PixelRect(x0: b.i0, y0: b.j0, x1: b.i1 + 1, y1: b.j1 + 1) : PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)
    }

    /// A box of a smaller output, the way both CPU renderers draw it: the
    /// source over the box's footprint (`footprint(of:mapping:)`), `wobble`
    /// run on it at the image's size (`dst`, whose pixel `(x, y)` is at
    /// `((y − fp.y0) · fp.width + x − fp.x0) · 4`), then each output pixel
    /// of the box area-averaged from it into `image`.
    static func drawDownscaled(_ box: PixelRect, mapping m: OutputMapping, source: RGBAImage, into image: inout RGBAImage,
                               wobble: (UnsafeMutableBufferPointer<UInt8>, PixelRect) -> Void) {
        let fp = footprint(of: box, mapping: m)
        var full = [UInt8](repeating: 0, count: fp.area * 4)
        let sw = source.width
        full.withUnsafeMutableBufferPointer { dst in
            source.pixels.withUnsafeBufferPointer { src in
                for y in fp.y0 ..< fp.y1 {
                    (dst.baseAddress! + (y - fp.y0) * fp.width * 4)
                        .update(from: src.baseAddress! + (y * sw + fp.x0) * 4, count: fp.width * 4)
                }
            }
            wobble(dst, fp)
        }
        image.pixels.withUnsafeMutableBufferPointer { dst in
            full.withUnsafeBufferPointer { src in
                for j in box.y0 ..< box.y1 {
                    for i in box.x0 ..< box.x1 {
                        AreaFilter.averagePixel(src, width: source.width, height: source.height, m, i, j,
                                                origin: (fp.x0, fp.y0), stride: fp.width,
                                                into: dst, at: (j * m.outputWidth + i) * 4)
                    }
                }
            }
        }
    }
}
