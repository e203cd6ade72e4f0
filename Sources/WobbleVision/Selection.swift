import Foundation
import WobbleCore

extension CutoutVision {
    /// A region's cutout refined by strokes (what the studio's `C`,
    /// `Shift`+drag and `Alt`+drag compute, and what the selection
    /// benchmark's corrective clicks do): GrabCut on the region's box grown
    /// to hold the object strokes, the region's inside probably object,
    /// every stroke a sure mark (`strokeSeeds`: a later one wins
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
        try refinedGrowing(image: image, region: shape, strokes: strokes, from: from).mask
    }

    /// `refined(image:region:strokes:from:)`, the region grown first where
    /// an object stroke reaches past it (`grownRegion`); GrabCut then runs
    /// in the grown region and the mask is cleared outside it. `region` is
    /// the grown one (nil when the region holds what every object stroke
    /// brings): the studio moves the region's handles there. Without it an
    /// object click can never bring what lies beyond the region's curves (a
    /// rocket's body below its nose, a spoon's handle above its bowl: every
    /// click added a few pixels past the last). Only the last `fresh`
    /// strokes (this click's) grow it: an earlier stroke the region was
    /// since moved away from (the handles dragged in) stays outside.
    public static func refinedGrowing(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke],
                                      from: GreyMask? = nil, fresh: Int = 1) throws -> (mask: GreyMask, region: SketchPoints?) {
        let start = from.flatMap { $0.width == image.width && $0.height == image.height && !$0.isAllBackground ? $0 : nil }
        guard let start else { return (try refinedMask(image: image, region: shape, strokes: strokes, from: from), nil) }
        guard let grown = grownRegion(image: image, region: shape, strokes: strokes, fresh: fresh, start: start) else {
            return (try refinedMask(image: image, region: shape, strokes: strokes, from: from), nil)
        }
        return (try refinedMask(image: image, region: grown.region.shape, strokes: strokes, from: from,
                                beyond: grown.beyond, brought: grown.brought), grown.region)
    }

    /// How far an object stroke may reach past the region, in the object's
    /// size (the longer side of the mask so far's box).
    static let growReach = 0.5

    /// The region an object stroke grows (nil when none reaches past the
    /// region's curves), what lies beyond the old region and is background
    /// for sure in it, and what the strokes bring. An object stroke on or
    /// past the region's curves (within its radius of them) reaches
    /// `growReach` of the object's size around it; where that disc is not
    /// inside the region, the piece the stroke lands on is found in a region
    /// fitted around the old one, the mask so far and those discs:
    /// `corrections`' object basin by the minimum barrier (what the stroke
    /// reaches without crossing a stronger colour edge than any background
    /// does, then by length: a long part of one colour is brought whole up
    /// to the reach, a uniform sky beside it is not, being nearer to the
    /// background beyond). When the piece lies past the old region by more
    /// than a dot's area (or the stroke itself does), the region is fitted
    /// again around the old one, the mask so far and the piece; beyond the
    /// old region only the piece can become object (GrabCut does not spread
    /// into what the click did not reach).
    static func grownRegion(image: RGBAImage, region shape: RegionShape, strokes all: [CutoutStroke], fresh: Int,
                            start: GreyMask) -> (region: SketchPoints, beyond: GreyMask, brought: GreyMask)? {
        let w = image.width, h = image.height
        // The background strokes and the fresh object strokes.
        let first = all.count - max(0, min(fresh, all.count))
        let strokes = all.enumerated().filter { !$0.element.object || $0.offset >= first }.map(\.element)
        let ob = start.objectBox
        let limit = growReach * Double(max(ob.width, ob.height))
        guard limit > 0 else { return nil }
        var reaches: [CutoutStroke] = []
        for s in strokes where s.object {
            for p in s.points where p.isFinite {
                // Only a stroke near the region's curves (or past them)
                // reaches past them: one well inside corrects the mask there.
                guard outside(shape, p, by: -s.radius) else { continue }
                let r = limit + s.radius
                let past = (0 ..< 16).contains { i in
                    let a = Double(i) * Double.pi / 8
                    let q = Point(min(max(p.x + r * cos(a), 0), Double(w)), min(max(p.y + r * sin(a), 0), Double(h)))
                    return !shape.contains(q)
                }
                if past { reaches.append(CutoutStroke(points: [p], radius: r, object: true)) }
            }
        }
        guard !reaches.isEmpty else { return nil }
        // The mask so far and the old region.
        var held = GreyMask(width: w, height: h)
        for k in held.pixels.indices where start.pixels[k] > 127 { held.pixels[k] = 255 }
        let b = pixelBox(shape.bbox, width: w, height: h)
        for y in b.y0 ..< max(b.y0, b.y1) {
            for x in b.x0 ..< max(b.x0, b.x1) where shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)) { held.pixels[y * w + x] = 255 }
        }
        var reach = held
        for r in reaches { r.paint(into: &reach) }
        guard let wide = fitRegion(around: reach, margin: 0) else { return nil }
        // The piece each object stroke lands on, in the wide region.
        let box = pixelBox(wide.shape.bbox, width: w, height: h)
        let seeds = strokeSeeds(image: image, strokes: strokes)
        let c = corrections(image: image, box: box, region: wide.shape, strokes: strokes, start: start, seeds: seeds, reach: growReach,
                            barrier: true)
        // What the strokes bring: their own pixels and their basins.
        var brought = GreyMask(width: w, height: h)
        for s in strokes where s.object { s.paint(into: &brought) }
        if let a = c.add { for k in a.pixels.indices where a.pixels[k] != 0 { brought.pixels[k] = 255 } }
        // Grown only when the strokes bring more past the region's curves
        // than a dot covers (an object's edge a pixel or two past a tight
        // region is corrected inside it, as before).
        var past = 0
        var piece = held
        for k in brought.pixels.indices where brought.pixels[k] != 0 {
            piece.pixels[k] = 255
            if held.pixels[k] == 0 { past += 1 }
        }
        let dot = strokes.filter(\.object).map { Double.pi * $0.radius * $0.radius }.max() ?? 0
        let landedPast = strokes.contains { $0.object && $0.points.contains { !shape.contains($0) } }
        guard Double(past) > dot || landedPast, let grown = fitRegion(around: piece) else { return nil }
        // Beyond the old region, only what the strokes brought: the rest
        // of the grown region there is background for sure (GrabCut does
        // not spread into what the click did not reach).
        var beyond = GreyMask(width: w, height: h)
        let g = pixelBox(grown.shape.bbox, width: w, height: h)
        for y in g.y0 ..< g.y1 {
            for x in g.x0 ..< g.x1 where piece.pixels[y * w + x] == 0 { beyond.pixels[y * w + x] = 255 }
        }
        return (grown, beyond, brought)
    }

    /// What a click's strokes mark for sure (`CutoutStroke.seeds`: a later
    /// stroke wins where two cross), each stroke's pixels on its own side of
    /// an edge: where the colours under a stroke differ by more than
    /// `edgeContrast` (it straddles an edge), only its pixels nearer in
    /// colour to the stroke's line (the pixel under the line where it passes
    /// nearest) than half that spread. A 6-pixel dot at the middle of a wrong band 2
    /// pixels wide (a thin object's edge) otherwise marks the object beside
    /// the band as well, for sure: the click takes a slice of what it should
    /// keep.
    static func strokeSeeds(image: RGBAImage, strokes: [CutoutStroke]) -> (object: GreyMask?, background: GreyMask?) {
        let w = image.width, h = image.height
        func colour(_ k: Int) -> (Double, Double, Double) {
            (Double(image.pixels[k * 4]), Double(image.pixels[k * 4 + 1]), Double(image.pixels[k * 4 + 2]))
        }
        func distance(_ a: (Double, Double, Double), _ b: (Double, Double, Double)) -> Double {
            ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1) + (a.2 - b.2) * (a.2 - b.2)).squareRoot()
        }
        var object: GreyMask?, background: GreyMask?
        func colourAt(_ p: Point) -> (Double, Double, Double) {
            colour(min(max(Int(p.y.rounded(.down)), 0), h - 1) * w + min(max(Int(p.x.rounded(.down)), 0), w - 1))
        }
        for s in strokes {
            let line = s.points.filter(\.isFinite)
            let segments = line.count == 1 ? [(line[0], line[0])] : Array(zip(line, line.dropFirst()))
            var pixels: [(Int, Double)] = []
            s.forEachPixel(width: w, height: h) { k in
                // The colour under the stroke's line where it passes nearest.
                let c = Point(Double(k % w) + 0.5, Double(k / w) + 0.5)
                var nearest: Point?, best = Double.infinity
                for (a, b) in segments {
                    let d = b - a, len2 = d.x * d.x + d.y * d.y
                    let t = len2 > 0 ? min(max(((c.x - a.x) * d.x + (c.y - a.y) * d.y) / len2, 0), 1) : 0
                    let q = Point(a.x + t * d.x, a.y + t * d.y)
                    let e = (q - c).length
                    if e < best { best = e; nearest = q }
                }
                guard let nearest else { return }
                pixels.append((k, distance(colour(k), colourAt(nearest))))
            }
            let spread = pixels.map(\.1).max() ?? 0
            let keep = spread > edgeContrast ? spread / 2 : .infinity
            if s.object { object = object ?? GreyMask(width: w, height: h) } else { background = background ?? GreyMask(width: w, height: h) }
            for (k, d) in pixels where d <= keep {
                object?.pixels[k] = s.object ? 255 : 0
                background?.pixels[k] = s.object ? 0 : 255
            }
        }
        return (object, background)
    }

    /// The colour spread (RGB distance) under a stroke above which it
    /// straddles an edge (`strokeSeeds`).
    static let edgeContrast = 40.0

    /// The pixels of `r` (rounded out) inside a `width × height` picture.
    static func pixelBox(_ r: Rect, width w: Int, height h: Int) -> PixelRect {
        func floor(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .down) }
        func ceil(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .up) }
        return PixelRect(x0: max(0, floor(r.minX)), y0: max(0, floor(r.minY)), x1: min(w, ceil(r.maxX)), y1: min(h, ceil(r.maxY)))
    }

    /// `refined(image:region:strokes:from:)` in the region as it is.
    /// `beyond`: pixels that are background for sure besides the strokes'.
    static func refinedMask(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke], from: GreyMask? = nil,
                            beyond: GreyMask? = nil, brought: GreyMask? = nil) throws -> GreyMask {
        var r = shape.bbox
        for s in strokes where s.object {
            for p in s.points where p.isFinite {
                r = Rect(minX: min(r.minX, p.x - s.radius), minY: min(r.minY, p.y - s.radius),
                         maxX: max(r.maxX, p.x + s.radius), maxY: max(r.maxY, p.y + s.radius))
            }
        }
        let box = pixelBox(r, width: image.width, height: image.height)
        // No strokes and no mask yet (the studio's `C` on a region): the
        // region read as a box, as `"auto"` reads it (`boxMask`).
        if strokes.isEmpty, from == nil, !box.isEmpty {
            return clipped(try boxMask(image: image, box: box, region: shape), to: shape)
        }
        let seeds = strokeSeeds(image: image, strokes: strokes)
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
        if let beyond {
            var b = background ?? GreyMask(width: image.width, height: image.height)
            for k in beyond.pixels.indices where beyond.pixels[k] != 0 { b.pixels[k] = 255 }
            background = b
        }
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
            if let a = brought { for k in a.pixels.indices where a.pixels[k] != 0 { probable?.pixels[k] = 255 } }
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
