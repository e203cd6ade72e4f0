import WobbleCore

/// A box read through candidates, as a click is (what `"auto"`,
/// `wobble-run cutout --box` and the studio's `C` on a region without
/// strokes compute: `boxMask`). A box says more than GrabCut's rectangle
/// mode uses: the object lies inside it and, drawn tight, touches its four
/// sides; what lies along its border is mostly background. So the box's
/// crop (the box and a ring around it, scaled to at most `boxGridSide`
/// pixels a side) gives candidate masks: the regions of the
/// over-segmentation's hierarchical grouping (selective search, as a
/// click's: `hierarchy`) that lie in the box and span most of it, and
/// GrabCut's two readings of the box (the region's sure background, and
/// rectangle mode). Each is scored by how it fills the box
/// (`boxScore`: its own box against the given one, the share of the box's
/// border band it leaves, the edge along its contour, its colours against
/// a ring around it, the box's centre inside it, agreement with GrabCut);
/// the best is taken, and a group is then refined by GrabCut seeded from it
/// (kept only when it agrees). The grouping needs no colour model, so it
/// finds objects GrabCut cannot in a grey photo.
extension CutoutVision {
    /// The longer side (cells) of the grid a box's candidates are found on.
    static let boxGridSide = 160
    /// The over-segmentation's scales (`Segments.felzenszwalb`'s k) the
    /// groups start from.
    static let boxScales: [Double] = [80, 200]

    /// What the score reads of a box's candidate (on the box's grid).
    struct BoxFeatures: Equatable {
        var boxIoU = 0.0      // its bounding box against the given box
        var touch = 0.0       // the box's sides it reaches (within a cell), over 4
        var bandFree = 0.0    // 1 - its share of the box's inner border band
        var contrast = 0.0    // c / (1 + c): the colour difference across its boundary over the crop's mean
        var separation = 0.0  // 1 - the colour histograms' intersection, inside against a ring around
        var centred = 0.0     // the box centre's depth inside over the deepest cell's
        var compact = 0.0     // 16 A / P², at most 1
        var fill = 0.0        // its area over the box's
        var agree = 0.0       // the highest IoU with GrabCut's readings (other than itself)
        var grabCut = 0.0     // 1 for GrabCut's readings, 0 for a group

        var vector: [Double] { [boxIoU, touch, bandFree, contrast, separation, centred, compact, fill, agree, grabCut] }
    }

    /// The box's grid: the crop (the box and a ring), its scale, its size,
    /// the box on it (cells, end exclusive).
    struct BoxFrame {
        let crop: PixelRect
        let factor: Int
        let lw: Int
        let lh: Int
        let bx0: Int, by0: Int, bx1: Int, by1: Int
        let grid: Grid
        var boxCells: Int { (bx1 - bx0) * (by1 - by0) }

        /// A full-size mask on the grid: a cell is in when the image pixel
        /// at its centre is above 127 (cells outside the box out).
        func cells(of mask: GreyMask) -> [Bool] {
            var out = [Bool](repeating: false, count: lw * lh)
            for y in by0 ..< by1 {
                for x in bx0 ..< bx1 {
                    let sx = min(mask.width - 1, crop.x0 + x * factor + factor / 2), sy = min(mask.height - 1, crop.y0 + y * factor + factor / 2)
                    out[y * lw + x] = mask.pixels[sy * mask.width + sx] > 127
                }
            }
            return out
        }

        /// Cells as a full-size mask (255 in), inside `box` only.
        func mask(_ inside: [Bool], width w: Int, height h: Int, box: PixelRect) -> GreyMask {
            var m = GreyMask(width: w, height: h)
            for y in box.y0 ..< box.y1 {
                let row = min(lh - 1, (y - crop.y0) / factor) * lw
                for x in box.x0 ..< box.x1 where inside[row + min(lw - 1, (x - crop.x0) / factor)] { m.pixels[y * w + x] = 255 }
            }
            return m
        }
    }

    /// A candidate of a box: its cells, its full-size mask when GrabCut
    /// made it, and what the score reads of it.
    struct BoxCandidate {
        var inside: [Bool]
        var mask: GreyMask?
        var features: BoxFeatures
        var source: String   // "region256", "rect256" (GrabCut's readings: the region's sure background, rectangle mode; the working side), "group"
    }

    /// The box's grid and its candidates (GrabCut's readings first), each
    /// with its features. `sides`: GrabCut's working sides for its
    /// readings; `gridSide`, `ks`: the grouping's grid and scales;
    /// `refineTop`: that many of the best-scored groups also refined by
    /// GrabCut as candidates (0 as a box is read: measured, not kept);
    /// `measuresAgreement`: each candidate's `agree` (0 without; the score
    /// does not read it). Throws as `objectMask` when the box is outside
    /// the image or uniform.
    static func boxCandidates(image: RGBAImage, box: PixelRect, region: RegionShape?,
                              sides: [Int] = [workingSide], gridSide: Int = boxGridSide, ks: [Double] = boxScales,
                              refineTop: Int = 0, measuresAgreement: Bool = false) throws -> (frame: BoxFrame, candidates: [BoxCandidate]) {
        let w = image.width, h = image.height
        guard !box.isEmpty, box.x0 >= 0, box.y0 >= 0, box.x1 <= w, box.y1 <= h else {
            throw CutoutProblem.outsideImage(box: box, width: w, height: h)
        }
        let ring = max(8, max(box.width, box.height) / 6)
        let crop = PixelRect(x0: max(0, box.x0 - ring), y0: max(0, box.y0 - ring), x1: min(w, box.x1 + ring), y1: min(h, box.y1 + ring))
        if isUniform(image, crop) { throw CutoutProblem.uniform }
        let factor = max(1, (max(crop.width, crop.height) + gridSide - 1) / gridSide)
        let lw = (crop.width + factor - 1) / factor, lh = (crop.height + factor - 1) / factor
        let rgb = workingRGB(image, crop, factor: factor, width: lw, height: lh)
        let grid = Grid(rgb: rgb, width: lw, height: lh)
        let bx0 = (box.x0 - crop.x0) / factor, by0 = (box.y0 - crop.y0) / factor
        let bx1 = max(bx0 + 1, min(lw, (box.x1 - crop.x0 + factor - 1) / factor))
        let by1 = max(by0 + 1, min(lh, (box.y1 - crop.y0 + factor - 1) / factor))
        let frame = BoxFrame(crop: crop, factor: factor, lw: lw, lh: lh, bx0: bx0, by0: by0, bx1: bx1, by1: by1, grid: grid)
        let bw = bx1 - bx0, bh = by1 - by0
        // GrabCut's two readings.
        var readings: [(GreyMask, [Bool], String)] = []
        for side in sides {
            for rectangle in [false, true] {
                if let m = try? objectMask(image: image, box: box, region: region, object: nil, background: nil,
                                           workingSide: side, constrained: true, rectangle: rectangle) {
                    readings.append((m, frame.cells(of: m), "\(rectangle ? "rect" : "region")\(side)"))
                }
            }
        }
        // The groups in the box: at least 3% of it, spanning at least 40%
        // of its width and of its height, reaching at most a few cells past it.
        let margin = max(1, min(bw, bh) / 30)
        let minArea = max(4, frame.boxCells * 3 / 100)
        let keep: (Int, (Int, Int, Int, Int)) -> Bool = { size, b in
            size >= minArea && b.0 >= bx0 - margin && b.1 >= by0 - margin && b.2 < bx1 + margin && b.3 < by1 + margin
                && (b.2 - b.0 + 1) * 5 >= bw * 2 && (b.3 - b.1 + 1) * 5 >= bh * 2
        }
        // Cells the object may take: in the box, and not beyond the
        // region's curves by more than GrabCut's constraint allows.
        var allowed = [Bool](repeating: false, count: lw * lh)
        let beyond = Double(workingFactor(box: box, image: image) + 2)
        for y in by0 ..< by1 {
            for x in bx0 ..< bx1 {
                let c = Point(Double(crop.x0 + x * factor) + Double(factor) / 2, Double(crop.y0 + y * factor) + Double(factor) / 2)
                allowed[y * lw + x] = region.map { !outside($0, c, by: beyond) } ?? true
            }
        }
        var seen = Set<[Bool]>()
        var groups: [[Bool]] = []
        for seg in Segments.felzenszwalb(rgb: rgb, width: lw, height: lh, ks: ks, minSize: 12) {
            for useColour in [true, false] {
                for g in hierarchy(grid: grid, labels: seg.labels, count: seg.count, click: 0, useColour: useColour, keep: keep) {
                    // Clipped to the box.
                    var c = g
                    for i in 0 ..< lw * lh where c[i] && !allowed[i] { c[i] = false }
                    if seen.insert(c).inserted { groups.append(c) }
                }
            }
        }
        for r in readings { seen.insert(r.1) }
        var out: [BoxCandidate] = readings.map { BoxCandidate(inside: $0.1, mask: $0.0, features: BoxFeatures(), source: $0.2) }
        out += groups.map { BoxCandidate(inside: $0, mask: nil, features: BoxFeatures(), source: "group") }
        // Agreement with GrabCut's readings has no weight in the score:
        // measured only where the candidates are dumped to fit the weights.
        let readingCells = measuresAgreement ? readings.map(\.1) : []
        for k in out.indices {
            out[k].features = boxFeatures(out[k].inside, frame: frame, readings: readingCells, isReading: k < readings.count ? k : nil)
        }
        out = out.filter { $0.features.fill > 0 }
        if refineTop > 0 {
            let groupsByScore = out.indices.filter { out[$0].mask == nil }
                .sorted { (boxScore(out[$0].features), -$0) > (boxScore(out[$1].features), -$1) }
            for k in groupsByScore.prefix(refineTop) {
                let group = frame.mask(out[k].inside, width: w, height: h, box: box)
                guard let r = refinement(image: image, box: box, region: region, group: group) else { continue }
                let cells = frame.cells(of: r)
                var f = boxFeatures(cells, frame: frame, readings: readingCells, isReading: nil)
                f.grabCut = 1
                if f.fill > 0 { out.append(BoxCandidate(inside: cells, mask: r, features: f, source: "refined")) }
            }
        }
        return (frame, out)
    }

    /// What `boxScore` reads of the cells `inside` of `frame`'s box.
    static func boxFeatures(_ inside: [Bool], frame: BoxFrame, readings: [[Bool]], isReading: Int?) -> BoxFeatures {
        let lw = frame.lw, lh = frame.lh
        let bx0 = frame.bx0, by0 = frame.by0, bx1 = frame.bx1, by1 = frame.by1
        var f = BoxFeatures()
        var area = 0
        var mx0 = Int.max, my0 = Int.max, mx1 = Int.min, my1 = Int.min
        for y in by0 ..< by1 {
            for x in bx0 ..< bx1 where inside[y * lw + x] {
                area += 1
                mx0 = min(mx0, x); my0 = min(my0, y); mx1 = max(mx1, x); my1 = max(my1, y)
            }
        }
        guard area > 0 else { return f }
        let boxCells = Double(frame.boxCells)
        f.fill = Double(area) / boxCells
        f.boxIoU = Double((mx1 - mx0 + 1) * (my1 - my0 + 1)) / boxCells
        f.touch = Double([mx0 <= bx0 + 1, my0 <= by0 + 1, mx1 >= bx1 - 2, my1 >= by1 - 2].filter { $0 }.count) / 4
        // The box's inner border band.
        let t = max(1, Int((0.06 * Double(min(bx1 - bx0, by1 - by0))).rounded()))
        var band = 0, taken = 0
        for y in by0 ..< by1 {
            for x in bx0 ..< bx1 where x < bx0 + t || x >= bx1 - t || y < by0 + t || y >= by1 - t {
                band += 1
                if inside[y * lw + x] { taken += 1 }
            }
        }
        f.bandFree = band == 0 ? 0 : 1 - Double(taken) / Double(band)
        let shape = frame.grid.facts(inside)
        let c = shape.boundary == 0 ? 0 : Double(shape.strength) / Double(shape.boundary) / frame.grid.meanEdge
        f.contrast = c / (1 + c)
        let perimeter = Double(shape.boundary + shape.onEdge)
        f.compact = perimeter == 0 ? 0 : min(1, 16 * Double(area) / (perimeter * perimeter))
        let cx = min(lw - 1, (bx0 + bx1) / 2), cy = min(lh - 1, (by0 + by1) / 2)
        f.centred = inside[cy * lw + cx] ? Double(shape.depth[cy * lw + cx]) / Double(shape.deepest) : 0
        // Colours inside against a ring around.
        if let sep = colourSeparation(inside: inside, rgb: frame.grid.rgb, width: lw, height: lh, area: area) { f.separation = sep }
        // Agreement with GrabCut's readings.
        for (k, r) in readings.enumerated() where k != isReading {
            var i = 0, u = 0
            for y in by0 ..< by1 {
                for x in bx0 ..< bx1 {
                    let a = inside[y * lw + x], b = r[y * lw + x]
                    if a && b { i += 1 }
                    if a || b { u += 1 }
                }
            }
            f.agree = max(f.agree, u == 0 ? 0 : Double(i) / Double(u))
        }
        f.grabCut = isReading == nil ? 0 : 1
        return f
    }

    /// The score's weights: a candidate that fills the box (its area over
    /// the box's), whose own box matches the given one while it leaves the
    /// box's border band (`boxIoU · bandFree`), with the box's centre deep
    /// inside, a strong edge along its contour and colours unlike a ring
    /// around it, GrabCut's own readings slightly preferred (their edges
    /// are finer); less for a candidate whose box spans the given one
    /// without leaving its border band (`min(boxIoU, 0.8)`: background
    /// texture that fills a loose box). Fitted on the hand-masked set's 40
    /// boxes (tight and 20% out) by a random search, with `"auto"`'s
    /// composites (boxes 8–40 px larger than the object) as a constraint
    /// (none takes anything 12 px beyond the object, nor with any weight
    /// moved by 20%), checked leaving one photo out (docs/DECISIONS.md).
    /// Agreement with GrabCut's readings got no weight.
    static let boxWeights = (fill: 1.4, fitsBox: 1.4, spans: -0.7, centred: 1.4, contrast: 0.9, separation: 0.8, grabCut: 0.2)

    /// How much a box's candidate with `f` looks like the object in it.
    static func boxScore(_ f: BoxFeatures) -> Double {
        let w = boxWeights
        return w.fill * f.fill + w.fitsBox * f.boxIoU * f.bandFree + w.spans * min(f.boxIoU, 0.8) + w.centred * f.centred
            + w.contrast * f.contrast + w.separation * f.separation + w.grabCut * f.grabCut
    }

    /// How a box was read: the mask (before the matte), which candidate
    /// (its index in `boxCandidates`' list), and for a group the mask as
    /// found and GrabCut's refinement of it (nil when it failed).
    struct BoxReading {
        var mask: GreyMask
        var chosen: Int
        var group: GreyMask?
        var refinement: GreyMask?
    }

    /// A refinement is kept when its IoU with the group it started from is
    /// at least this.
    static let boxRefineAgreement = 0.8

    /// The object in `box` read through candidates (see above): the
    /// best-scored candidate; a group is then refined by GrabCut seeded
    /// from it (the group probably object, its inside more than
    /// `sureDepth` working pixels from its edge object for sure, beyond the
    /// region's curves background), the refinement kept when it agrees
    /// (`boxRefineAgreement`). Throws as `objectMask`.
    static func boxMask(image: RGBAImage, box: PixelRect, region: RegionShape?) throws -> GreyMask {
        try boxReading(image: image, box: box, region: region).mask
    }

    static func boxReading(image: RGBAImage, box: PixelRect, region: RegionShape?) throws -> BoxReading {
        let (frame, candidates) = try boxCandidates(image: image, box: box, region: region)
        let scores = candidates.map { boxScore($0.features) }
        guard let best = candidates.indices.max(by: { (scores[$0], -$0) < (scores[$1], -$1) }) else { throw CutoutProblem.noObject }
        if let m = candidates[best].mask { return BoxReading(mask: m, chosen: best) }
        let group = frame.mask(candidates[best].inside, width: image.width, height: image.height, box: box)
        let refinement = refinement(image: image, box: box, region: region, group: group)
        if let r = refinement, intersectionOverUnion(r, group) >= boxRefineAgreement {
            return BoxReading(mask: r, chosen: best, group: group, refinement: r)
        }
        return BoxReading(mask: group, chosen: best, group: group, refinement: refinement)
    }

    /// GrabCut seeded from `group` (a full-size mask in `box`): the group
    /// probably object, its inside more than `sureDepth` working pixels
    /// from its edge object for sure, beyond the region's curves
    /// background. Nil when GrabCut fails.
    static func refinement(image: RGBAImage, box: PixelRect, region: RegionShape?, group: GreyMask) -> GreyMask? {
        let factor = workingFactor(box: box, image: image)
        let inner = interior(of: group, in: box, depth: sureDepth * factor)
        return try? objectMask(image: image, box: box, region: region, object: inner.isAllBackground ? nil : inner,
                               background: nil, workingSide: workingSide, probable: group, constrained: true)
    }
}
