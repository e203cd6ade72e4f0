import WobbleCore

/// A corrective click as a strong, local constraint: what a stroke of
/// background takes back from the mask so far, and what a stroke of object
/// brings to it, before GrabCut runs again (`refined`) with a colour model
/// made afresh from the labels.
///
/// Both are basins of geodesic distance on colour (a step costs its length
/// times `1 + geodesicWeight · |colour difference| / the crop's mean
/// difference`, so crossing an edge costs many steps), on GrabCut's working
/// grid, reaching at most `clickReach` of the object's size (the longer
/// side of the mask's box: a thin part is reached along its length) from
/// the stroke:
/// - a background stroke inside the mask takes the mask's pixels that are
///   nearer to it (paths inside the mask) than to the object's seeds: the
///   object strokes, the region's centre (or the mask's deepest pixel) and
///   the mask's inside (2 working pixels or more from its edge) farther
///   from every background stroke than `clearance` times that stroke's
///   depth in the mask (a click at the middle of a wrong area takes that
///   area, not the object beside it). Those within `sureReach` of the
///   object's size from the stroke become background for sure (a click
///   takes back the band it lands on, not 6 pixels; GrabCut cannot grow
///   it back), the rest of the basin probably background.
/// - an object stroke outside the mask claims the pixels outside the mask
///   nearer to it (paths outside the mask) than to the background's seeds
///   (the background strokes and what lies beyond the region's curves):
///   they become probably object, for GrabCut to keep or drop.
extension CutoutVision {
    /// The weight of a colour step against a spatial one (see above).
    static let geodesicWeight = 2.0
    /// How far a click reaches, in the object's size (0: no limit).
    static let clickReach = 0.5
    /// How far from a background stroke its basin is background for sure, in the object's size.
    static let sureReach = 0.5
    /// How far around a background stroke the mask's inside is not an
    /// object seed, in the stroke's depth in the mask.
    static let clearance = 4.0

    /// What a click's strokes mean on the mask so far (`start`), as masks
    /// of the image's size (nil where nothing is): pixels to take out for
    /// sure (`remove`), to add as probably object (`add`), and probably
    /// background (`unlikely`, the whole basin of the background strokes).
    static func corrections(image: RGBAImage, box: PixelRect, region shape: RegionShape, strokes: [CutoutStroke],
                            start: GreyMask, seeds: (object: GreyMask?, background: GreyMask?),
                            weight: Double = geodesicWeight, reach: Double = clickReach, sure: Double = sureReach,
                            barrier: Bool = false) -> (remove: GreyMask?, add: GreyMask?, unlikely: GreyMask?) {
        let w = image.width, h = image.height
        guard !strokes.isEmpty, !box.isEmpty else { return (nil, nil, nil) }
        // GrabCut's working grid (`objectMask`'s crop and factor).
        let ring = max(8, max(box.width, box.height) / 6)
        let crop = PixelRect(x0: max(0, box.x0 - ring), y0: max(0, box.y0 - ring),
                             x1: min(w, box.x1 + ring), y1: min(h, box.y1 + ring))
        let longer = max(crop.width, crop.height)
        let factor = max(1, (longer + workingSide - 1) / workingSide)
        let lw = (crop.width + factor - 1) / factor, lh = (crop.height + factor - 1) / factor
        let n = lw * lh
        let rgb = workingRGB(image, crop, factor: factor, width: lw, height: lh)
        // Per working pixel: in the mask (its footprint's centre), under a
        // stroke of object / background (any of its footprint), beyond the
        // region's curves.
        var inMask = [Bool](repeating: false, count: n)
        var objectSeed = inMask, backgroundSeed = inMask, beyond = inMask
        for j in 0 ..< lh {
            for i in 0 ..< lw {
                let fx0 = crop.x0 + i * factor, fy0 = crop.y0 + j * factor
                let fx1 = min(crop.x1, fx0 + factor), fy1 = min(crop.y1, fy0 + factor)
                let k = j * lw + i
                let cx = (fx0 + fx1) / 2, cy = (fy0 + fy1) / 2
                inMask[k] = start.pixels[min(fy1 - 1, cy) * w + min(fx1 - 1, cx)] > 127
                for y in fy0 ..< fy1 {
                    for x in fx0 ..< fx1 {
                        if let b = seeds.background, b.pixels[y * w + x] > 127 { backgroundSeed[k] = true }
                        if let o = seeds.object, o.pixels[y * w + x] > 127 { objectSeed[k] = true }
                    }
                }
                if backgroundSeed[k] { objectSeed[k] = false }
                let c = Point(Double(fx0 + fx1) / 2, Double(fy0 + fy1) / 2)
                beyond[k] = c.x < Double(box.x0) || c.x > Double(box.x1) || c.y < Double(box.y0) || c.y > Double(box.y1)
                    || outside(shape, c, by: Double(factor + 2))
            }
        }
        // The step costs' scale: the crop's mean colour difference.
        func diff(_ a: Int, _ b: Int) -> Double {
            let dr = Double(rgb[a * 3]) - Double(rgb[b * 3]), dg = Double(rgb[a * 3 + 1]) - Double(rgb[b * 3 + 1])
            let db = Double(rgb[a * 3 + 2]) - Double(rgb[b * 3 + 2])
            return (dr * dr + dg * dg + db * db).squareRoot()
        }
        var total = 0.0, count = 0
        for j in 0 ..< lh {
            for i in 0 ..< lw {
                if i + 1 < lw { total += diff(j * lw + i, j * lw + i + 1); count += 1 }
                if j + 1 < lh { total += diff(j * lw + i, (j + 1) * lw + i); count += 1 }
            }
        }
        let scale = weight / max(1, count == 0 ? 1 : total / Double(count))
        // A click reaches at most `reach` times the object's size (the
        // longer side of the mask's box) from its stroke.
        let size = Double(max(start.objectBox.width, start.objectBox.height))
        let limit = reach * size
        func near(_ k: Int, object: Bool, limit: Double = limit) -> Bool {
            guard limit > 0 else { return true }
            let fx0 = crop.x0 + (k % lw) * factor, fy0 = crop.y0 + (k / lw) * factor
            let c = Point(Double(fx0) + Double(factor) / 2, Double(fy0) + Double(factor) / 2)
            for s in strokes where s.object == object {
                for p in s.points where (p - c).length <= limit + s.radius { return true }
            }
            return false
        }
        var remove: [Bool]?, add: [Bool]?, unlikely: [Bool]?
        // Take back: background strokes inside the mask.
        if backgroundSeed.indices.contains(where: { backgroundSeed[$0] && inMask[$0] }) {
            var sources = objectSeed.indices.filter { objectSeed[$0] && inMask[$0] }
            // The mask's inside away from the background strokes is object
            // too (see above).
            do {
                let depth = depthMap(inMask, width: lw, height: lh)
                var reach: [(Point, Double)] = []
                for s in strokes where !s.object {
                    for p in s.points where p.isFinite {
                        let i = (Int(p.x) - crop.x0) / factor, j = (Int(p.y) - crop.y0) / factor
                        guard i >= 0, j >= 0, i < lw, j < lh else { continue }
                        let d = Double(depth[j * lw + i]) * Double(factor)
                        reach.append((p, max(s.radius, clearance * d)))
                    }
                }
                for k in 0 ..< n where depth[k] >= 2 && !backgroundSeed[k] {
                    let c = Point(Double(crop.x0 + (k % lw) * factor) + Double(factor) / 2, Double(crop.y0 + (k / lw) * factor) + Double(factor) / 2)
                    if !reach.contains(where: { ($0.0 - c).length <= $0.1 }) { sources.append(k) }
                }
            }
            let centre = (Int(shape.center.x) - crop.x0) / factor, middle = (Int(shape.center.y) - crop.y0) / factor
            if centre >= 0, middle >= 0, centre < lw, middle < lh, inMask[middle * lw + centre], !backgroundSeed[middle * lw + centre] {
                sources.append(middle * lw + centre)
            } else if let deepest = deepestPixel(inMask, width: lw, height: lh) {
                sources.append(deepest)
            }
            let toObject = geodesic(rgb: rgb, width: lw, height: lh, from: sources, within: inMask, scale: scale, diff: diff)
            let toBackground = geodesic(rgb: rgb, width: lw, height: lh, from: backgroundSeed.indices.filter { backgroundSeed[$0] && inMask[$0] },
                                        within: inMask, scale: scale, diff: diff)
            let basin = (0 ..< n).map { inMask[$0] && toBackground[$0] < toObject[$0] && near($0, object: false) }
            remove = (0 ..< n).map { basin[$0] && near($0, object: false, limit: sure * size) }
            unlikely = basin
        }
        // Add: object strokes outside the mask.
        if objectSeed.indices.contains(where: { objectSeed[$0] && !inMask[$0] }) {
            let outsideMask = inMask.map { !$0 }
            let toObject = geodesic(rgb: rgb, width: lw, height: lh, from: objectSeed.indices.filter { objectSeed[$0] && !inMask[$0] },
                                    within: outsideMask, scale: scale, diff: diff, barrier: barrier)
            let toBackground = geodesic(rgb: rgb, width: lw, height: lh,
                                        from: (0 ..< n).filter { !inMask[$0] && !objectSeed[$0] && (backgroundSeed[$0] || beyond[$0]) },
                                        within: outsideMask, scale: scale, diff: diff, barrier: barrier)
            add = (0 ..< n).map { !inMask[$0] && !beyond[$0] && toObject[$0] < toBackground[$0] && near($0, object: true) }
        }
        func upscaled(_ marks: [Bool]?) -> GreyMask? {
            guard let marks, marks.contains(true) else { return nil }
            var out = GreyMask(width: w, height: h)
            for y in crop.y0 ..< crop.y1 {
                let row = ((y - crop.y0) / factor) * lw
                for x in crop.x0 ..< crop.x1 where marks[row + (x - crop.x0) / factor] { out.pixels[y * w + x] = 255 }
            }
            return out
        }
        return (upscaled(remove), upscaled(add), upscaled(unlikely))
    }

    /// The pixel of `area` farthest from its edge (8-neighbour chamfer), nil when empty.
    static func deepestPixel(_ area: [Bool], width w: Int, height h: Int) -> Int? {
        let d = depthMap(area, width: w, height: h)
        var best = -1, bestD: Int32 = 0
        for k in 0 ..< w * h where d[k] > bestD { best = k; bestD = d[k] }
        return best < 0 ? nil : best
    }

    /// Each pixel's 8-neighbour distance to the outside of `area` (1 on its edge, 0 outside).
    static func depthMap(_ area: [Bool], width w: Int, height h: Int) -> [Int32] {
        var d = [Int32](repeating: 0, count: w * h)
        func at(_ x: Int, _ y: Int) -> Int32 { x < 0 || y < 0 || x >= w || y >= h ? 0 : d[y * w + x] }
        for y in 0 ..< h {
            for x in 0 ..< w where area[y * w + x] {
                d[y * w + x] = min(at(x - 1, y), at(x, y - 1), at(x - 1, y - 1), at(x + 1, y - 1)) + 1
            }
        }
        for y in stride(from: h - 1, through: 0, by: -1) {
            for x in stride(from: w - 1, through: 0, by: -1) where d[y * w + x] > 0 {
                d[y * w + x] = min(d[y * w + x], min(at(x + 1, y), at(x, y + 1), at(x + 1, y + 1), at(x - 1, y + 1)) + 1)
            }
        }
        return d
    }

    /// Geodesic distance (Dijkstra, 8 neighbours) from `sources` over the
    /// pixels where `within` holds; infinity where none reaches. With
    /// `barrier`, a path costs its largest colour step first and its length
    /// second, instead of the sum of its steps (the minimum barrier: a long
    /// part of one colour is as near as its first pixel, what lies past an
    /// edge as far as the edge).
    static func geodesic(rgb: [UInt8], width w: Int, height h: Int, from sources: [Int], within: [Bool], scale: Double,
                         diff: (Int, Int) -> Double, barrier: Bool = false) -> [Double] {
        var dist = [Double](repeating: .infinity, count: w * h)
        var heap = MinHeap()
        for s in sources where within[s] && dist[s] > 0 { dist[s] = 0; heap.push(0, s) }
        let steps: [(Int, Int, Double)] = [(-1, 0, 1), (1, 0, 1), (0, -1, 1), (0, 1, 1),
                                           (-1, -1, 2.0.squareRoot()), (1, -1, 2.0.squareRoot()), (-1, 1, 2.0.squareRoot()), (1, 1, 2.0.squareRoot())]
        while let (d, k) = heap.pop() {
            guard d <= dist[k] else { continue }
            let x = k % w, y = k / w
            for (dx, dy, len) in steps {
                let nx = x + dx, ny = y + dy
                guard nx >= 0, ny >= 0, nx < w, ny < h else { continue }
                let m = ny * w + nx
                guard within[m] else { continue }
                let nd: Double
                if barrier {
                    // The largest step (in eighths), then the length.
                    let top = max((d / barrierUnit).rounded(.down), (scale * diff(k, m) * 8).rounded(.down))
                    nd = top * barrierUnit + (d.truncatingRemainder(dividingBy: barrierUnit) + len)
                } else {
                    nd = d + len * (1 + scale * diff(k, m))
                }
                if nd < dist[m] { dist[m] = nd; heap.push(nd, m) }
            }
        }
        return dist
    }

    /// A barrier path's cost: its largest step (in eighths of a colour
    /// step's unit) times this, plus its length (less than this on any
    /// working grid).
    static let barrierUnit = 1e6

    /// A binary min-heap of (distance, index), ties by index (deterministic).
    struct MinHeap {
        private var items: [(Double, Int)] = []
        private func less(_ a: (Double, Int), _ b: (Double, Int)) -> Bool { a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) }
        mutating func push(_ d: Double, _ k: Int) {
            items.append((d, k))
            var i = items.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard less(items[i], items[p]) else { break }
                items.swapAt(i, p); i = p
            }
        }
        mutating func pop() -> (Double, Int)? {
            guard let top = items.first else { return nil }
            let last = items.removeLast()
            if !items.isEmpty {
                items[0] = last
                var i = 0
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var m = i
                    if l < items.count, less(items[l], items[m]) { m = l }
                    if r < items.count, less(items[r], items[m]) { m = r }
                    if m == i { break }
                    items.swapAt(i, m); i = m
                }
            }
            return top
        }
    }
}



