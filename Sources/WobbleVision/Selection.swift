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
    /// (probably object where it is above 127, and object for sure more
    /// than `sureDepth` of GrabCut's working pixels inside its edge): a
    /// stroke corrects the mask's edge rather than starting over, and never
    /// loses the object (when GrabCut still gives everything to the
    /// background, the answer is that mask with the strokes' pixels as they
    /// mark them). Throws as `objectMask`.
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
        // No strokes and no mask yet (the studio's `C` on a region): the
        // region read as a box, as `"auto"` reads it (`boxMask`).
        if strokes.isEmpty, from == nil, !box.isEmpty {
            return clipped(try boxMask(image: image, box: box, region: shape), to: shape)
        }
        let seeds = CutoutStroke.seeds(strokes, width: image.width, height: image.height)
        let start = from.flatMap { $0.width == image.width && $0.height == image.height && !$0.isAllBackground ? $0 : nil }
        // The mask so far, away from its edge, is object for sure: GrabCut
        // moves the edge, it does not drop the object a click is refining.
        var object = seeds.object
        if let start {
            let ring = max(8, max(box.width, box.height) / 6)
            let longer = max(min(image.width, box.x1 + ring) - max(0, box.x0 - ring), min(image.height, box.y1 + ring) - max(0, box.y0 - ring))
            let factor = max(1, (longer + workingSide - 1) / workingSide)
            let inner = interior(of: start, in: box, depth: sureDepth * factor)
            if var o = object {
                for k in o.pixels.indices where inner.pixels[k] != 0 { o.pixels[k] = 255 }
                object = o
            } else if !inner.isAllBackground {
                object = inner
            }
        }
        // A click is a strong, local constraint (`corrections`): a
        // background stroke takes back the band it lands on, an object
        // stroke brings the piece it lands on.
        var background = seeds.background
        var probable = start
        if let s = start {
            let c = corrections(image: image, box: box, region: shape, strokes: strokes, start: s, seeds: seeds)
            if let u = c.unlikely { for k in u.pixels.indices where u.pixels[k] != 0 { probable?.pixels[k] = 0 } }
            if let r = c.remove {
                var b = background ?? GreyMask(width: image.width, height: image.height)
                for k in r.pixels.indices where r.pixels[k] != 0 { b.pixels[k] = 255; probable?.pixels[k] = 0 }
                background = b
            }
            if let a = c.add { for k in a.pixels.indices where a.pixels[k] != 0 { probable?.pixels[k] = 255 } }
        }
        let mask: GreyMask
        do {
            mask = try objectMask(image: image, box: box, region: shape, object: object, background: background,
                                  workingSide: workingSide, probable: probable)
        } catch CutoutProblem.noObject {
            // GrabCut gave everything to the background: the mask so far,
            // each stroke's pixels as it marks them.
            guard var kept = start else { throw CutoutProblem.noObject }
            if let o = seeds.object { for k in o.pixels.indices where o.pixels[k] > 127 { kept.pixels[k] = 255 } }
            if let b = background { for k in b.pixels.indices where b.pixels[k] > 127 { kept.pixels[k] = 0 } }
            let c = clipped(kept, to: shape)
            guard !c.isAllBackground else { throw CutoutProblem.noObject }
            return c
        }
        return clipped(mask, to: shape)
    }

    /// How deep inside the mask so far (working pixels of GrabCut) a pixel
    /// is object for sure when strokes refine it.
    static let sureDepth = 3

    /// The pixels of `mask` (above 127) inside `box` more than `depth`
    /// pixels from its edge (8-neighbour distance; outside the box counts
    /// as outside the mask: the mask is clipped to its region).
    static func interior(of mask: GreyMask, in box: PixelRect, depth: Int) -> GreyMask {
        let w = mask.width
        let bw = box.width, bh = box.height
        var d = [Int32](repeating: 0, count: bw * bh)
        func at(_ x: Int, _ y: Int) -> Int32 { x < 0 || y < 0 || x >= bw || y >= bh ? 0 : d[y * bw + x] }
        for y in 0 ..< bh {
            for x in 0 ..< bw where mask.pixels[(box.y0 + y) * w + box.x0 + x] > 127 {
                d[y * bw + x] = min(at(x - 1, y), at(x, y - 1), at(x - 1, y - 1), at(x + 1, y - 1)) + 1
            }
        }
        for y in stride(from: bh - 1, through: 0, by: -1) {
            for x in stride(from: bw - 1, through: 0, by: -1) where d[y * bw + x] > 0 {
                d[y * bw + x] = min(d[y * bw + x], min(at(x + 1, y), at(x, y + 1), at(x + 1, y + 1), at(x - 1, y + 1)) + 1)
            }
        }
        var out = GreyMask(width: w, height: mask.height)
        for y in 0 ..< bh {
            for x in 0 ..< bw where d[y * bw + x] > Int32(depth) { out.pixels[(box.y0 + y) * w + box.x0 + x] = 255 }
        }
        return out
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
