import WobbleCore

/// Object-sized candidates for a click by hierarchical grouping
/// (selective search: Uijlings et al., "Selective search for object
/// recognition", 2013): the picture, scaled to at most `groupingSide`
/// pixels a side, is over-segmented (`Segments.felzenszwalb`) and its
/// neighbouring segments are merged, the most similar pair first (colour
/// histograms, sizes, how well they fill their box together, and how weak
/// the edge between them is), until one is left; every region of that
/// hierarchy holding the click is a candidate. Each is scored for
/// objectness (`objectness`: a strong edge all along its boundary, a
/// closed contour clear of the picture's edge, the click deep inside it, a
/// sensible size), and the best are refined by GrabCut seeded from them
/// (their inside probably object, a ring around probably background).
/// Deterministic: integer statistics, ties broken by index.
extension CutoutVision {
    /// The longer side (pixels) the grouping works at.
    public static let groupingSide = 160
    /// How many of the best-scored groups GrabCut refines.
    static let groupingRefined = 4

    /// A candidate and its objectness.
    struct Scored: Sendable {
        var mask: GreyMask
        var score: Double
        var coverage: Coverage
    }

    /// The grouping's candidates under `point` (image pixels), best
    /// objectness first (GrabCut's refinements and the groups themselves
    /// together; one within 0.9 IoU of a better one left out).
    static func groupedCandidates(image: RGBAImage, at point: Point) -> [Scored] {
        let w = image.width, h = image.height
        guard w > 0, h > 0, point.x >= 0, point.y >= 0, point.x < Double(w), point.y < Double(h) else { return [] }
        let whole = PixelRect(x0: 0, y0: 0, x1: w, y1: h)
        let factor = max(1, (max(w, h) + groupingSide - 1) / groupingSide)
        let lw = (w + factor - 1) / factor, lh = (h + factor - 1) / factor
        let rgb = workingRGB(image, whole, factor: factor, width: lw, height: lh)
        let cx = min(lw - 1, Int(point.x) / factor), cy = min(lh - 1, Int(point.y) / factor)
        let grid = Grid(rgb: rgb, width: lw, height: lh)
        // Two over-segmentations, two similarity mixes: diverse hierarchies.
        var groups: [[Bool]] = []
        var seen: Set<[Bool]> = []
        for seg in Segments.felzenszwalb(rgb: rgb, width: lw, height: lh, ks: [80, 200], minSize: 12) {
            for useColour in [true, false] {
                for g in hierarchy(grid: grid, labels: seg.labels, count: seg.count, click: cy * lw + cx, useColour: useColour)
                where seen.insert(g).inserted {
                    groups.append(g)
                }
            }
        }
        var scored: [(inside: [Bool], score: Double)] = groups.map { ($0, grid.objectness($0, click: (cx, cy))) }
        scored = scored.enumerated().sorted { ($0.element.score, -$0.offset) > ($1.element.score, -$1.offset) }.map(\.element)
        // Back to the image's size (each cell a factor × factor block, cut
        // at the picture's edges: its rows built once, then copied), with
        // the coverage counted from the cells.
        func upscale(_ inside: [Bool]) -> (mask: GreyMask, coverage: Coverage) {
            var pixels = [UInt8](repeating: 0, count: w * h)
            var count = 0, x0 = lw, y0 = lh, x1 = -1, y1 = -1
            pixels.withUnsafeMutableBufferPointer { p in
                for gy in 0 ..< lh {
                    let top = gy * factor, rows = min(h, top + factor) - top
                    var any = false
                    for gx in 0 ..< lw where inside[gy * lw + gx] {
                        let left = gx * factor, right = min(w, left + factor)
                        for x in left ..< right { p[top * w + x] = 255 }
                        count += (right - left) * rows
                        x0 = min(x0, gx); x1 = max(x1, gx)
                        any = true
                    }
                    guard any else { continue }
                    y0 = min(y0, gy); y1 = gy
                    for y in top + 1 ..< top + rows {
                        p.baseAddress!.advanced(by: y * w).update(from: p.baseAddress!.advanced(by: top * w), count: w)
                    }
                }
            }
            let box = count == 0 ? PixelRect.empty
                : PixelRect(x0: x0 * factor, y0: y0 * factor, x1: min(w, (x1 + 1) * factor), y1: min(h, (y1 + 1) * factor))
            return (GreyMask(width: w, height: h, pixels: pixels), Coverage(count: count, box: box))
        }
        // GrabCut seeded from the best ones, side by side.
        let positive = scored.filter { $0.score > 0 }
        let raws = positive.map { upscale($0.inside) }
        let refinedMasks = concurrently(min(groupingRefined, raws.count)) { n in
            refineGroup(image: image, group: raws[n].mask, at: point).map { ($0, Coverage($0)) }
        }
        var out: [Scored] = []
        for (n, s) in positive.enumerated() {
            var candidates = [Scored(mask: raws[n].mask, score: s.score, coverage: raws[n].coverage)]
            if n < groupingRefined, let (refined, coverage) = refinedMasks[n] {
                let down = grid.downscaled(refined, factor: factor)
                candidates.insert(Scored(mask: refined, score: grid.objectness(down, click: (cx, cy)), coverage: coverage), at: 0)
            }
            out += candidates
        }
        out = out.enumerated().sorted { ($0.element.score, -$0.offset) > ($1.element.score, -$1.offset) }.map(\.element)
        var kept: [Scored] = []
        for c in out where !kept.contains(where: { intersectionOverUnion($0.mask, $0.coverage, c.mask, c.coverage) > 0.9 }) { kept.append(c) }
        return kept
    }

    /// GrabCut seeded from a group: its box grown by a fifth (at least 8
    /// pixels) as the box, the group probably object, the rest probably
    /// background, a disc at the click sure object; only the part
    /// connected to the click. Nil when GrabCut fails or loses the click.
    static func refineGroup(image: RGBAImage, group: GreyMask, at point: Point) -> GreyMask? {
        let w = image.width, h = image.height
        let b = group.objectBox
        guard !b.isEmpty else { return nil }
        let grow = max(8, max(b.width, b.height) / 5)
        let box = PixelRect(x0: max(0, b.x0 - grow), y0: max(0, b.y0 - grow), x1: min(w, b.x1 + grow), y1: min(h, b.y1 + grow))
        let cx = Int(point.x), cy = Int(point.y)
        var seed = GreyMask(width: w, height: h)
        let r = max(2.5, 0.04 * Double(min(b.width, b.height)))
        let ri = Int(r.rounded(.up))
        for y in max(0, cy - ri)...min(h - 1, cy + ri) {
            for x in max(0, cx - ri)...min(w - 1, cx + ri) where Double((x - cx) * (x - cx) + (y - cy) * (y - cy)) <= r * r
                && group.pixels[y * w + x] > 127 {
                seed.pixels[y * w + x] = 255
            }
        }
        guard var mask = try? objectMask(image: image, box: box, region: nil, object: seed, background: nil,
                                         workingSide: clickWorkingSide, probable: group) else { return nil }
        guard mask.pixels[cy * w + cx] > 0 else { return nil }
        keepConnected(&mask, to: cx, cy)
        return mask
    }

    /// The regions holding pixel `click` of one hierarchy: segments
    /// `labels` (0 ..< count) merged, the most similar neighbours first
    /// (each edge's similarity kept, and computed again only for the edges
    /// of the region a merge made). With `keep` (a box's reading, not a
    /// click's), instead every region of the hierarchy, the segments
    /// themselves included, whose size and box (x0, y0, x1, y1 inclusive)
    /// `keep` accepts.
    static func hierarchy(grid: Grid, labels: [Int32], count: Int, click: Int, useColour: Bool,
                          keep: ((Int, (Int, Int, Int, Int)) -> Bool)? = nil) -> [[Bool]] {
        let n = grid.width * grid.height
        let bins = 8
        // Per region: size, box, colour histogram (bins per channel).
        var size = [Int](repeating: 0, count: count)
        var box = [(Int, Int, Int, Int)](repeating: (Int.max, Int.max, Int.min, Int.min), count: count)
        var hist = [Int](repeating: 0, count: count * 3 * bins)
        for i in 0..<n {
            let l = Int(labels[i]), x = i % grid.width, y = i / grid.width
            size[l] += 1
            box[l] = (min(box[l].0, x), min(box[l].1, y), max(box[l].2, x), max(box[l].3, y))
            for c in 0..<3 { hist[l * 3 * bins + c * bins + Int(grid.rgb[i * 3 + c]) * bins / 256] += 1 }
        }
        // Neighbours: the edge between them (pixel pairs, summed colour difference).
        struct Edge { var a: Int; var b: Int; var length: Int; var strength: Int; var similarity = 0.0; var alive = true }
        var edges: [Edge] = []
        var index: [Int: Int] = [:]
        func key(_ a: Int, _ b: Int) -> Int { min(a, b) * 1_000_000 + max(a, b) }
        for y in 0..<grid.height {
            for x in 0..<grid.width {
                let i = y * grid.width + x
                for j in [x + 1 < grid.width ? i + 1 : -1, y + 1 < grid.height ? i + grid.width : -1] where j >= 0 {
                    let a = Int(labels[i]), b = Int(labels[j])
                    guard a != b else { continue }
                    if let e = index[key(a, b)] {
                        edges[e].length += 1
                        edges[e].strength += grid.difference(i, j)
                    } else {
                        index[key(a, b)] = edges.count
                        edges.append(Edge(a: min(a, b), b: max(a, b), length: 1, strength: grid.difference(i, j)))
                    }
                }
            }
        }
        var adjacent = [[Int]](repeating: [], count: count)
        for (k, e) in edges.enumerated() { adjacent[e.a].append(k); adjacent[e.b].append(k) }
        let total = Double(n)
        func similarity(_ e: Edge) -> Double {
            let a = e.a, b = e.b
            var colour = 0.0
            if useColour {
                var sum = 0
                for k in 0 ..< 3 * bins { sum += min(hist[a * 3 * bins + k] * size[b], hist[b * 3 * bins + k] * size[a]) }
                colour = Double(sum) / Double(3 * size[a] * size[b])
            }
            let sizeSim = 1 - Double(size[a] + size[b]) / total
            let bx = (max(box[a].2, box[b].2) - min(box[a].0, box[b].0) + 1) * (max(box[a].3, box[b].3) - min(box[a].1, box[b].1) + 1)
            let fill = 1 - Double(bx - size[a] - size[b]) / total
            let edge = 1 - min(1, Double(e.strength) / Double(e.length) / 60)
            return colour + sizeSim + fill + 2 * edge
        }
        for k in edges.indices { edges[k].similarity = similarity(edges[k]) }
        var members = (0..<count).map { [Int32($0)] }
        var holder = Int(labels[click])
        var out: [[Bool]] = []
        func region(_ r: Int) -> [Bool] {
            var inside = [Bool](repeating: false, count: count)
            for m in members[r] { inside[Int(m)] = true }
            return labels.map { inside[Int($0)] }
        }
        if let keep {
            for l in 0 ..< count where keep(size[l], box[l]) { out.append(region(l)) }
        } else {
            out.append(region(holder))
        }
        while true {
            var best = -1
            for k in edges.indices where edges[k].alive && (best < 0 || edges[k].similarity > edges[best].similarity) { best = k }
            guard best >= 0 else { break }
            let a = edges[best].a, b = edges[best].b
            edges[best].alive = false
            // b into a.
            size[a] += size[b]
            box[a] = (min(box[a].0, box[b].0), min(box[a].1, box[b].1), max(box[a].2, box[b].2), max(box[a].3, box[b].3))
            for k in 0 ..< 3 * bins { hist[a * 3 * bins + k] += hist[b * 3 * bins + k] }
            members[a] += members[b]
            members[b] = []
            for k in adjacent[b] where edges[k].alive {
                let other = edges[k].a == b ? edges[k].b : edges[k].a
                index[key(b, other)] = nil
                if let existing = index[key(a, other)], edges[existing].alive {
                    edges[existing].length += edges[k].length
                    edges[existing].strength += edges[k].strength
                    edges[k].alive = false
                } else {
                    edges[k].a = min(a, other)
                    edges[k].b = max(a, other)
                    index[key(a, other)] = k
                    adjacent[a].append(k)
                }
            }
            adjacent[b] = []
            adjacent[a] = adjacent[a].filter { edges[$0].alive }
            for k in adjacent[a] { edges[k].similarity = similarity(edges[k]) }
            if holder == b { holder = a }
            if let keep {
                if keep(size[a], box[a]) { out.append(region(a)) }
            } else if holder == a {
                out.append(region(a))
            }
        }
        return out
    }

    /// The working picture and what the grouping measures on it.
    struct Grid {
        let rgb: [UInt8]
        let width: Int
        let height: Int
        /// The mean colour difference between 4-neighbours over the picture.
        let meanEdge: Double

        init(rgb: [UInt8], width: Int, height: Int) {
            self.rgb = rgb
            self.width = width
            self.height = height
            var sum = 0, n = 0
            for y in 0..<height {
                for x in 0..<width {
                    let i = y * width + x
                    if x + 1 < width { sum += Grid.difference(rgb, i, i + 1); n += 1 }
                    if y + 1 < height { sum += Grid.difference(rgb, i, i + width); n += 1 }
                }
            }
            meanEdge = max(1, Double(sum) / Double(max(1, n)))
        }

        static func difference(_ rgb: [UInt8], _ i: Int, _ j: Int) -> Int {
            abs(Int(rgb[i * 3]) - Int(rgb[j * 3])) + abs(Int(rgb[i * 3 + 1]) - Int(rgb[j * 3 + 1])) + abs(Int(rgb[i * 3 + 2]) - Int(rgb[j * 3 + 2]))
        }
        func difference(_ i: Int, _ j: Int) -> Int { Grid.difference(rgb, i, j) }

        /// `mask` (the image's size) at the grid's size: a cell is in when
        /// its top left pixel is above 127.
        func downscaled(_ mask: GreyMask, factor: Int) -> [Bool] {
            var out = [Bool](repeating: false, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    let sx = min(mask.width - 1, x * factor + factor / 2), sy = min(mask.height - 1, y * factor + factor / 2)
                    out[y * width + x] = mask.pixels[sy * mask.width + sx] > 127
                }
            }
            return out
        }

        /// The facts of the shape `inside` (a cell per grid cell) that the
        /// candidate scores read: its cells next to an outside cell
        /// (`boundary`, 4-neighbours) and the summed colour difference
        /// across them (`strength`), its sides on the picture's edge
        /// (`onEdge`), and each cell's depth (1 on its border, one more a
        /// cell inwards; 0 outside) with the deepest.
        func facts(_ inside: [Bool]) -> (boundary: Int, onEdge: Int, strength: Int, depth: [Int32], deepest: Int32) {
            let n = width * height
            var boundary = 0, onEdge = 0, strength = 0
            var depth = [Int32](repeating: 0, count: n)
            var queue: [Int] = []
            for i in 0..<n where inside[i] {
                let x = i % width, y = i / width
                var border = false
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
                    guard nx >= 0, ny >= 0, nx < width, ny < height else { onEdge += 1; border = true; continue }
                    let j = ny * width + nx
                    if !inside[j] { boundary += 1; strength += difference(i, j); border = true }
                }
                if border { depth[i] = 1; queue.append(i) }
            }
            var head = 0, deepest: Int32 = 1
            while head < queue.count {
                let i = queue[head]; head += 1
                let x = i % width, y = i / width
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < width && ny < height {
                    let j = ny * width + nx
                    if inside[j] && depth[j] == 0 { depth[j] = depth[i] + 1; deepest = max(deepest, depth[j]); queue.append(j) }
                }
            }
            return (boundary, onEdge, strength, depth, deepest)
        }

        /// How much `inside` looks like an object clicked at `click`: the
        /// mean colour difference across its boundary (against the
        /// picture's mean), times the share of its boundary clear of the
        /// picture's edge, times how deep the click lies in it (against its
        /// deepest pixel), times a size prior (nothing under 12 cells or
        /// over half the picture). 0 when the click is not in it.
        func objectness(_ inside: [Bool], click: (Int, Int)) -> Double {
            let n = width * height
            guard inside[click.1 * width + click.0] else { return 0 }
            let area = inside.reduce(0) { $0 + ($1 ? 1 : 0) }
            guard area >= 12, area * 2 <= n else { return 0 }
            let shape = facts(inside)
            let boundary = shape.boundary, onEdge = shape.onEdge, strength = shape.strength
            let depth = shape.depth, deepest = shape.deepest
            guard boundary > 0 else { return 0 }
            let contrast = Double(strength) / Double(boundary) / meanEdge
            let edge = contrast / (contrast + 1)
            let closed = Double(boundary) / Double(boundary + onEdge)
            let centred = Double(depth[click.1 * width + click.0]) / Double(deepest)
            let share = Double(area) / Double(n)
            let sized = share < 0.002 ? share / 0.002 : (share > 0.3 ? max(0, (0.5 - share) / 0.2) : 1)
            return edge * closed * closed * (0.3 + 0.7 * centred) * sized
        }
    }
}
