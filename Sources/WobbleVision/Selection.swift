import WobbleCore

extension CutoutVision {
    /// A region's cutout refined by strokes (what the studio's `C`,
    /// `Shift`+drag and `Alt`+drag compute, and what the selection
    /// benchmark's corrective clicks do): GrabCut on the region's box grown
    /// to hold the object strokes, the region's inside probably object,
    /// every stroke a sure mark (`CutoutStroke.seeds`: a later one wins
    /// where they cross); then cleared outside the region's curves (a mask
    /// never reaches past its region). With `from` (the cutout's mask so
    /// far), GrabCut starts from that mask instead of the region's inside
    /// (probably object where it is above 127): a stroke corrects the mask
    /// rather than starting over. Throws as `objectMask`.
    public static func refined(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke], from: GreyMask? = nil) throws -> GreyMask {
        var r = shape.bbox
        for s in strokes where s.object {
            for p in s.points where p.isFinite {
                r = Rect(minX: min(r.minX, p.x - s.radius), minY: min(r.minY, p.y - s.radius),
                         maxX: max(r.maxX, p.x + s.radius), maxY: max(r.maxY, p.y + s.radius))
            }
        }
        func floor(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .down) }
        func ceil(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .up) }
        let box = PixelRect(x0: max(0, floor(r.minX)), y0: max(0, floor(r.minY)),
                            x1: min(image.width, ceil(r.maxX)), y1: min(image.height, ceil(r.maxY)))
        let seeds = CutoutStroke.seeds(strokes, width: image.width, height: image.height)
        let start = from.flatMap { $0.width == image.width && $0.height == image.height && !$0.isAllBackground ? $0 : nil }
        let mask = try objectMask(image: image, box: box, region: shape, object: seeds.object, background: seeds.background,
                                  workingSide: workingSide, probable: start)
        return clipped(mask, to: shape)
    }

    /// `mask` with every pixel whose centre lies outside `shape` cleared.
    public static func clipped(_ mask: GreyMask, to shape: RegionShape) -> GreyMask {
        var out = mask
        let b = mask.objectBox
        guard !b.isEmpty else { return mask }
        let r = shape.bbox
        for y in b.y0 ..< b.y1 {
            let cy = Double(y) + 0.5
            for x in b.x0 ..< b.x1 where out.pixels[y * mask.width + x] != 0 {
                let cx = Double(x) + 0.5
                if cx < r.minX || cx > r.maxX || cy < r.minY || cy > r.maxY || !shape.contains(Point(cx, cy)) {
                    out.pixels[y * mask.width + x] = 0
                }
            }
        }
        return out
    }
}
