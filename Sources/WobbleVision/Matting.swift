import WobbleCore

/// A cutout's soft edge: a matte, not a hard mask.
///
/// A band of pixels around the object's edge (the mask's 127.5 level) is
/// unknown; the rest is known (255 inside, 0 outside). The band's alpha is
/// solved from the picture's colours at full resolution (closed-form
/// matting: the matting Laplacian of 3×3 windows, solved on the band only),
/// so the mask follows the picture's own edge however coarsely the mask was
/// found (GrabCut works at a reduced size). The plate and the object's
/// colours under a soft matte are estimated by `plate(image:mask:)`.
extension CutoutVision {
    /// How alpha is solved in the band.
    public enum MatteMethod: Sendable {
        /// Closed-form matting (Levin et al. 2008): the default.
        case closedForm
        /// A colour guided filter of the hard mask (He et al. 2010):
        /// faster, blurrier; kept for comparison (docs/DECISIONS.md).
        case guided
    }

    /// The closed-form matte's window regularisation (colours in 0…1).
    static let matteEpsilon = 1e-6
    /// Conjugate gradient steps at most (the band is thin: it converges
    /// in far fewer).
    static let matteIterations = 400
    /// How many times the band may grow by its half-width where the
    /// solved alpha is cut off at its edge.
    static let matteGrowth = 4
    /// The alpha (levels from the side's own value) at the band's edge
    /// that grows it.
    static let matteGrowthLevel = 26

    /// The band's half-width in pixels for a `width × height` picture whose
    /// mask was found at `factor` picture pixels per working pixel: at
    /// least 3, at least the mask's own uncertainty (`factor + 1`), and a
    /// pixel per 400 of the picture's longer side (a larger picture has
    /// wider soft edges).
    public static func matteBand(width: Int, height: Int, factor: Int = 1) -> Int {
        max(3, factor + 1, (max(width, height) + 200) / 400)
    }

    /// `matteBand` for a click's candidate (`clickCandidates`): GrabCut's
    /// factor in the click's largest square.
    public static func clickMatteBand(width: Int, height: Int) -> Int {
        matteBand(width: width, height: height, factor: max(1, (min(width, height) / 2 + clickWorkingSide - 1) / clickWorkingSide))
    }

    /// A click's candidate as the person gets it (the studio's `Shift` +
    /// click, `wobble-run cutout --at`): matted in `clickMatteBand`, or as
    /// found when the matte keeps under half of it (`objectMatte`).
    public static func clickMatte(image: RGBAImage, mask: GreyMask) throws -> GreyMask {
        try objectMatte(image: image, mask: mask, band: clickMatteBand(width: image.width, height: image.height))
    }

    /// `mask` (the image's size) as a soft matte: the pixels within `band`
    /// pixels (nil: `matteBand`) of its edge (between a pixel above 127 and
    /// one at or below) solved by `method`, the mask's value there the first
    /// guess; 255 elsewhere above 127, 0 elsewhere at or below. Where the
    /// solved alpha is cut off at the band's edge the band grows there
    /// (`matteGrowth`). Pixels under `background` (above 127) are 0 and
    /// under `object` 255, as strokes mark them. `epsilon`: the method's
    /// regularisation (nil: its default). An empty mask comes back as it
    /// is. Deterministic. Throws `CutoutProblem.vision`.
    public static func matte(image: RGBAImage, mask: GreyMask, band: Int? = nil,
                             method: MatteMethod = .closedForm, epsilon: Double? = nil,
                             object: GreyMask? = nil, background: GreyMask? = nil) throws -> GreyMask {
        precondition(mask.width == image.width && mask.height == image.height, "matte: mask size")
        let w = image.width, h = image.height
        let r = max(1, band ?? matteBand(width: w, height: h))
        let ob = mask.objectBox
        guard !ob.isEmpty else { return mask }
        let pad = r * (1 + matteGrowth) + 3
        let crop = PixelRect(x0: max(0, ob.x0 - pad), y0: max(0, ob.y0 - pad), x1: min(w, ob.x1 + pad), y1: min(h, ob.y1 + pad))
        let cw = crop.width, ch = crop.height
        guard cw >= 3, ch >= 3 else { return mask }
        var rgb = [UInt8](repeating: 0, count: cw * ch * 3)
        var alpha = [UInt8](repeating: 0, count: cw * ch)
        var hard = [Bool](repeating: false, count: cw * ch)
        image.pixels.withUnsafeBufferPointer { src in
            for y in 0 ..< ch {
                for x in 0 ..< cw {
                    let k = ((y + crop.y0) * w + x + crop.x0), o = y * cw + x
                    rgb[o * 3] = src[k * 4]; rgb[o * 3 + 1] = src[k * 4 + 1]; rgb[o * 3 + 2] = src[k * 4 + 2]
                    alpha[o] = mask.pixels[k]
                    hard[o] = mask.pixels[k] > 127
                }
            }
        }
        // The band: pixels within r (Chebyshev distance, through any pixel)
        // of an edge pixel, found by a breadth-first walk from the edge.
        var distance = [Int](repeating: Int.max, count: cw * ch)
        var queue: [Int] = []
        for y in 0 ..< ch {
            for x in 0 ..< cw {
                let o = y * cw + x
                let edge = (x > 0 && hard[o - 1] != hard[o]) || (x < cw - 1 && hard[o + 1] != hard[o])
                    || (y > 0 && hard[o - cw] != hard[o]) || (y < ch - 1 && hard[o + cw] != hard[o])
                if edge { distance[o] = 0; queue.append(o) }
            }
        }
        var head = 0
        while head < queue.count {
            let o = queue[head]; head += 1
            let d = distance[o]
            guard d < r - 1 else { continue }
            let x = o % cw, y = o / cw
            for ny in max(0, y - 1) ... min(ch - 1, y + 1) {
                for nx in max(0, x - 1) ... min(cw - 1, x + 1) where distance[ny * cw + nx] == Int.max {
                    distance[ny * cw + nx] = d + 1
                    queue.append(ny * cw + nx)
                }
            }
        }
        // Edge pixels are at distance 0 on both sides: the band is r pixels
        // wide on each side of the edge.
        var known = [UInt8](repeating: 1, count: cw * ch)
        for o in 0 ..< cw * ch {
            if distance[o] == Int.max {
                alpha[o] = hard[o] ? 255 : 0
            } else {
                known[o] = 0
            }
        }
        // Strokes are sure: pixels under one keep its value (background
        // first, as GrabCut's labels take them), and the band never grows
        // over them.
        var locked = [Bool](repeating: false, count: cw * ch)
        if object != nil || background != nil {
            for y in 0 ..< ch {
                for x in 0 ..< cw {
                    let k = (y + crop.y0) * w + x + crop.x0, o = y * cw + x
                    if let background, background.pixels[k] > 127 {
                        alpha[o] = 0
                    } else if let object, object.pixels[k] > 127 {
                        alpha[o] = 255
                    } else {
                        continue
                    }
                    known[o] = 1
                    locked[o] = true
                }
            }
        }
        do {
            switch method {
            case .closedForm:
                try OpenCV.matteClosedForm(rgb: rgb, width: cw, height: ch, known: known, alpha: &alpha, epsilon: epsilon ?? matteEpsilon,
                                           iterations: matteIterations)
                // Where the solved alpha does not reach its side's value at
                // the band's edge (a strand of hair, a feathered rim wider
                // than the band), the band grows there by r and is solved
                // again, at most `matteGrowth` times.
                for _ in 0 ..< matteGrowth {
                    var seeds: [Int] = []
                    for o in 0 ..< cw * ch where known[o] != 0 && !locked[o] {
                        let x = o % cw, y = o / cw
                        let want: UInt8 = hard[o] ? 255 : 0
                        var cut = false
                        for ny in max(0, y - 1) ... min(ch - 1, y + 1) {
                            for nx in max(0, x - 1) ... min(cw - 1, x + 1) {
                                let n = ny * cw + nx
                                if known[n] == 0, hard[n] == hard[o], abs(Int(alpha[n]) - Int(want)) >= matteGrowthLevel { cut = true }
                            }
                        }
                        if cut { seeds.append(o) }
                    }
                    guard !seeds.isEmpty else { break }
                    var reach = [Int](repeating: -1, count: cw * ch)
                    for o in seeds { reach[o] = 0 }
                    var head = 0
                    while head < seeds.count {
                        let o = seeds[head]; head += 1
                        known[o] = 0
                        guard reach[o] < r - 1 else { continue }
                        let x = o % cw, y = o / cw
                        for ny in max(0, y - 1) ... min(ch - 1, y + 1) {
                            for nx in max(0, x - 1) ... min(cw - 1, x + 1) {
                                let n = ny * cw + nx
                                if reach[n] < 0, known[n] != 0, !locked[n], hard[n] == hard[o] { reach[n] = reach[o] + 1; seeds.append(n) }
                            }
                        }
                    }
                    try OpenCV.matteClosedForm(rgb: rgb, width: cw, height: ch, known: known, alpha: &alpha,
                                               epsilon: epsilon ?? matteEpsilon, iterations: matteIterations)
                }
            case .guided:
                var guide = alpha
                for o in 0 ..< cw * ch where known[o] == 0 { guide[o] = hard[o] ? 255 : 0 }
                alpha = guide
                try OpenCV.matteGuided(rgb: rgb, width: cw, height: ch, known: known, alpha: &alpha, radius: r, epsilon: epsilon ?? 1e-3)
            }
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        closeDips(&alpha, rgb: rgb, width: cw, height: ch, known: known, reach: matteDipReach(band: r), around: 2 * r + 2)
        var out = mask
        for y in 0 ..< ch {
            for x in 0 ..< cw { out.pixels[(y + crop.y0) * w + x + crop.x0] = alpha[y * cw + x] }
        }
        // Nothing of the object outside the crop (a mask's stray pixels far
        // from its edge are already 0 or 255 and kept).
        return out
    }

    /// How far (pixels) on each side of a solved pixel `closeDips` looks
    /// for the object: a third of the band's half-width, at least 2 (a dip
    /// up to twice as wide is closed; the band follows the picture's size).
    static func matteDipReach(band r: Int) -> Int { max(2, r / 3) }

    /// No dips inside the object's outline: a solved pixel (`known` 0)
    /// whose alpha is below the object on both sides of it, along a row, a
    /// column or a diagonal within `reach` pixels, and whose colour is not
    /// the background's (further from the mean of the sure background
    /// within `around` pixels — known, alpha 0 — than three times its
    /// spread and 16 levels), is raised to the higher of the two sides (the
    /// highest alpha each side reaches: the object can carry a colour only
    /// as bright as its alpha lets it). The closed-form matte explains a
    /// pixel as a mix of the object's and the background's colours in its
    /// windows; a colour that is neither (a specular highlight, a bright or
    /// dark line along a rim) lies beyond both, and its alpha was cut off
    /// at 0: a hole along the highlight, which the plate kept, a bright
    /// line left where the object was. A gap of the background's own
    /// colours (between strands of hair, the texture around a furry edge)
    /// is left to the matte.
    static func closeDips(_ alpha: inout [UInt8], rgb: [UInt8], width cw: Int, height ch: Int, known: [UInt8], reach d: Int, around R: Int) {
        guard d > 0 else { return }
        let source = alpha
        let directions = [(1, 0), (0, 1), (1, 1), (1, -1)]
        for y in 0 ..< ch {
            for x in 0 ..< cw {
                let o = y * cw + x
                guard known[o] == 0, source[o] < 255 else { continue }
                var best = source[o]
                for (dx, dy) in directions {
                    var left: UInt8 = 0, right: UInt8 = 0
                    for s in 1 ... d {
                        let lx = x - s * dx, ly = y - s * dy, rx = x + s * dx, ry = y + s * dy
                        if lx >= 0, ly >= 0, lx < cw, ly < ch { left = max(left, source[ly * cw + lx]) }
                        if rx >= 0, ry >= 0, rx < cw, ry < ch { right = max(right, source[ry * cw + rx]) }
                    }
                    if min(left, right) > source[o] { best = max(best, left, right) }
                }
                guard best > source[o] else { continue }
                // The background around: its mean and spread (integers:
                // the same bytes on every machine).
                var n = 0, sum = (0, 0, 0), square = 0
                for yy in max(0, y - R) ... min(ch - 1, y + R) {
                    for xx in max(0, x - R) ... min(cw - 1, x + R) where known[yy * cw + xx] != 0 && source[yy * cw + xx] == 0 {
                        let k = (yy * cw + xx) * 3
                        let r = Int(rgb[k]), g = Int(rgb[k + 1]), b = Int(rgb[k + 2])
                        sum.0 += r; sum.1 += g; sum.2 += b
                        square += r * r + g * g + b * b
                        n += 1
                    }
                }
                if n > 0 {
                    let k = o * 3
                    let mr = Double(sum.0) / Double(n), mg = Double(sum.1) / Double(n), mb = Double(sum.2) / Double(n)
                    let variance = max(0, Double(square) / Double(n) - (mr * mr + mg * mg + mb * mb))
                    let dr = Double(rgb[k]) - mr, dg = Double(rgb[k + 1]) - mg, db = Double(rgb[k + 2]) - mb
                    let distance = (dr * dr + dg * dg + db * db).squareRoot()
                    guard distance > 3 * variance.squareRoot() + 16 else { continue }
                }
                alpha[o] = best
            }
        }
    }

    /// `refined(image:region:strokes:from:)` (GrabCut from a region and
    /// strokes: the studio's `C` and strokes) as a soft matte: its edge's
    /// band solved as `"auto"`'s (`matte(image:mask:)`, the band for
    /// GrabCut's working size on the region's box), the strokes' pixels
    /// kept as they mark them, nothing past the region's curves. A hard
    /// mask would leave the outer half of the object's soft or dark rim in
    /// the plate (a ghost line where the object was) and move the inner half
    /// with the object. Throws `CutoutProblem`.
    public static func refinedMatte(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke],
                                    from: GreyMask? = nil) throws -> GreyMask {
        try refinedMatteGrowing(image: image, region: shape, strokes: strokes, from: from).mask
    }

    /// `refinedMatte`, the region grown where an object stroke reaches past
    /// it (`refinedGrowing`): the matte and the grown region (nil when it
    /// did not grow), what the studio's strokes use.
    public static func refinedMatteGrowing(image: RGBAImage, region old: RegionShape, strokes: [CutoutStroke],
                                           from: GreyMask? = nil, fresh: Int = 1) throws -> (mask: GreyMask, region: SketchPoints?) {
        let found = try refinedGrowing(image: image, region: old, strokes: strokes, from: from, fresh: fresh)
        let shape = found.region?.shape ?? old
        return (try matted(found.mask, image: image, region: shape, strokes: strokes, from: from), found.region)
    }

    /// `refinedMatte`'s matte of a mask `refined` found in `shape`.
    static func matted(_ mask: GreyMask, image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke], from: GreyMask?) throws -> GreyMask {
        let seeds = strokeSeeds(image: image, strokes: strokes)
        let r = shape.bbox
        func whole(_ v: Double, _ rounding: FloatingPointRoundingRule) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: rounding) }
        let box = PixelRect(x0: max(0, whole(r.minX, .down)), y0: max(0, whole(r.minY, .down)),
                            x1: min(image.width, whole(r.maxX, .up)), y1: min(image.height, whole(r.maxY, .up)))
        let factor = box.isEmpty ? 1 : workingFactor(box: box, image: image)
        if strokes.isEmpty, from == nil, !box.isEmpty {
            // The region read as a box (`refined`: `boxMask`), matted as `"auto"`'s.
            return clipped(try objectMatte(image: image, mask: mask, band: matteBand(width: image.width, height: image.height, factor: factor)), to: shape)
        }
        let matted = try matte(image: image, mask: mask, band: matteBand(width: image.width, height: image.height, factor: factor),
                               object: seeds.object, background: seeds.background)
        return clipped(matted, to: shape)
    }

    /// The sum of absolute differences between two masks' alpha (0…1 a
    /// pixel): the matting benchmarks' error measure.
    public static func alphaSAD(_ a: GreyMask, _ b: GreyMask) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var sum = 0
        for (x, y) in zip(a.pixels, b.pixels) { sum += abs(Int(x) - Int(y)) }
        return Double(sum) / 255
    }
}

/// "auto" that stays on the object: GrabCut's constraints.
extension CutoutVision {
    /// Image pixels per working pixel for GrabCut on `box` (and its ring)
    /// of `image` (as `objectMask` scales it).
    static func workingFactor(box: PixelRect, image: RGBAImage) -> Int {
        let ring = max(8, max(box.width, box.height) / 6)
        let cw = min(image.width, box.x1 + ring) - max(0, box.x0 - ring)
        let ch = min(image.height, box.y1 + ring) - max(0, box.y0 - ring)
        return max(1, (max(cw, ch) + workingSide - 1) / workingSide)
    }

    /// Whether `p` lies outside `region` by more than `margin` pixels
    /// (along the ray from its centre).
    static func outside(_ region: RegionShape, _ p: Point, by margin: Double) -> Bool {
        let v = p - region.center
        let d = v.length
        guard d > margin else { return false }
        guard let r = region.boundaryDistance(ux: v.x / d, uy: v.y / d) else { return true }
        return d > r + margin
    }

    /// GrabCut's object labels (`OpenCV.Label`, `width × height`) cut to
    /// one piece: the 4-connected object component under `centre` (working
    /// pixels), or the largest when the centre is background; the other
    /// pieces (background texture whose colours look like the object's)
    /// become background.
    static func keepObjectUnderCentre(_ labels: inout [UInt8], width lw: Int, height lh: Int, centre: (Int, Int)) {
        func isObject(_ v: UInt8) -> Bool { v == OpenCV.Label.object.rawValue || v == OpenCV.Label.probablyObject.rawValue }
        var component = [Int32](repeating: -1, count: lw * lh)
        var sizes: [Int] = []
        var stack: [Int] = []
        for start in 0 ..< lw * lh where isObject(labels[start]) && component[start] < 0 {
            let id = Int32(sizes.count)
            var size = 0
            component[start] = id
            stack.append(start)
            while let k = stack.popLast() {
                size += 1
                let x = k % lw, y = k / lw
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < lw && ny < lh {
                    let n = ny * lw + nx
                    if component[n] < 0 && isObject(labels[n]) { component[n] = id; stack.append(n) }
                }
            }
            sizes.append(size)
        }
        guard sizes.count > 1 else { return }
        let cx = min(max(0, centre.0), lw - 1), cy = min(max(0, centre.1), lh - 1)
        var keep = component[cy * lw + cx]
        if keep < 0 {
            keep = Int32(sizes.indices.max { (sizes[$0], -$0) < (sizes[$1], -$1) } ?? 0)
        }
        for k in 0 ..< lw * lh where component[k] >= 0 && component[k] != keep {
            labels[k] = OpenCV.Label.probablyBackground.rawValue
        }
    }
}

/// The plate behind a soft matte.
extension CutoutVision {
    /// Whether some pixel of `box` in `mask` is neither 0 nor 255.
    static func hasSoftEdge(_ mask: GreyMask, in box: PixelRect) -> Bool {
        let w = mask.width
        for y in box.y0 ..< box.y1 where mask.pixels[(y * w + box.x0) ..< (y * w + box.x1)].contains(where: { $0 != 0 && $0 != 255 }) {
            return true
        }
        return false
    }

    /// `plate(image:mask:)` for a mask with a soft edge: where the mask is
    /// soft (1…254) the background's own colour, estimated from the picture
    /// and the matte (multi-level foreground and background estimation:
    /// the picture there is `a·F + (1 − a)·B`, F and B smooth where alpha
    /// is); where it is 255, filled from around it (`plateFill`, the soft
    /// edge's estimated background among what it fills from), so
    /// the plate has no seam at the band and the object layer
    /// (`source − (1 − a)·plate`) is the object's own colour times alpha.
    /// The estimation's tiles: squares of this side, each with
    /// `backgroundTileOverlap` more pixels of context around it; only the
    /// tiles holding a soft pixel are estimated (memory and time follow
    /// the edge, not the object's area).
    static let backgroundTile = 256, backgroundTileOverlap = 24
    /// The alpha from which a soft pixel's background is filled rather
    /// than estimated.
    static let backgroundOpaque: UInt8 = 230

    /// The background colour (3 bytes a pixel, `width × height`) under
    /// `alpha` at every soft pixel (1…254) of `rgb`, estimated tile by tile;
    /// other pixels 0.
    static func estimatedBackground(rgb: [UInt8], alpha: [UInt8], width cw: Int, height ch: Int,
                                    tile t: Int = backgroundTile) throws -> [UInt8] {
        try estimatedColours(rgb: rgb, alpha: alpha, width: cw, height: ch, tile: t).background
    }

    /// How far (levels, in some channel) the picture may be from
    /// `a·F + (1 − a)·B` with the estimated colours before the estimated
    /// background is not trusted there.
    static let backgroundMisfit = 12

    /// `estimatedBackground`, and where it does not explain the picture
    /// (`misfit`: the picture more than `backgroundMisfit` levels from
    /// `a·F + (1 − a)·B` in some channel: a colour that is neither the
    /// object's nor the background's, whose background was cut off at
    /// 0 or 1 — the shaded white tip of a rocket on a blue sky came out
    /// navy, a pale ear's rim as the ear's own pink).
    static func estimatedColours(rgb: [UInt8], alpha: [UInt8], width cw: Int, height ch: Int,
                                 tile t: Int = backgroundTile) throws -> (background: [UInt8], misfit: [Bool]) {
        var out = [UInt8](repeating: 0, count: cw * ch * 3)
        var misfit = [Bool](repeating: false, count: cw * ch)
        let pad = backgroundTileOverlap
        for ty in stride(from: 0, to: ch, by: t) {
            for tx in stride(from: 0, to: cw, by: t) {
                let core = PixelRect(x0: tx, y0: ty, x1: min(cw, tx + t), y1: min(ch, ty + t))
                var soft = false
                for y in core.y0 ..< core.y1 where !soft {
                    for x in core.x0 ..< core.x1 where alpha[y * cw + x] != 0 && alpha[y * cw + x] != 255 { soft = true; break }
                }
                guard soft else { continue }
                let r = PixelRect(x0: max(0, core.x0 - pad), y0: max(0, core.y0 - pad), x1: min(cw, core.x1 + pad), y1: min(ch, core.y1 + pad))
                var tileRGB = [UInt8](repeating: 0, count: r.area * 3), tileAlpha = [UInt8](repeating: 0, count: r.area)
                for y in r.y0 ..< r.y1 {
                    for x in r.x0 ..< r.x1 {
                        let o = (y - r.y0) * r.width + (x - r.x0), k = y * cw + x
                        tileAlpha[o] = alpha[k]
                        for c in 0..<3 { tileRGB[o * 3 + c] = rgb[k * 3 + c] }
                    }
                }
                let (f, b) = try OpenCV.foregroundBackground(rgb: tileRGB, width: r.width, height: r.height, alpha: tileAlpha)
                for y in core.y0 ..< core.y1 {
                    for x in core.x0 ..< core.x1 where alpha[y * cw + x] != 0 && alpha[y * cw + x] != 255 {
                        let o = (y - r.y0) * r.width + (x - r.x0), k = y * cw + x
                        let a = Int(alpha[k])
                        for c in 0..<3 {
                            out[k * 3 + c] = b[o * 3 + c]
                            // a·F + (1 − a)·B in 255ths of levels.
                            let mix = a * Int(f[o * 3 + c]) + (255 - a) * Int(b[o * 3 + c])
                            if abs(mix - 255 * Int(rgb[k * 3 + c])) > 255 * backgroundMisfit { misfit[k] = true }
                        }
                    }
                }
            }
        }
        return (out, misfit)
    }

    /// How far (pixels) around a soft pixel `BackgroundAround` looks.
    static let backgroundAroundRadius = 8

    /// The picture's background (alpha 0) around each pixel: the mean and
    /// spread of its colour within a square (box sums over the crop:
    /// integers, the same on every machine). An estimated background that
    /// is not among them (further from the mean than three times the
    /// spread and 16 levels) is not trusted: the shaded white tip of a
    /// rocket mixed with its sky gave a navy sky, a pale rim of a cat's ear
    /// gave a pale band and its orange spot an orange speck, left in the
    /// plate when the object swung away.
    struct BackgroundAround {
        let width: Int, height: Int, radius: Int
        /// Box sums (`(width + 1) × (height + 1)`): count, r, g, b, and the
        /// sum of squares of the three.
        var count: [Int], r: [Int], g: [Int], b: [Int], square: [Int]

        init(rgb: [UInt8], alpha: [UInt8], width w: Int, height h: Int, radius: Int) {
            width = w; height = h; self.radius = radius
            let n = (w + 1) * (h + 1)
            count = [Int](repeating: 0, count: n); r = count; g = count; b = count; square = count
            for y in 0 ..< h {
                var rc = 0, rr = 0, rg = 0, rb = 0, rs = 0
                for x in 0 ..< w {
                    let o = y * w + x
                    if alpha[o] == 0 {
                        let cr = Int(rgb[o * 3]), cg = Int(rgb[o * 3 + 1]), cb = Int(rgb[o * 3 + 2])
                        rc += 1; rr += cr; rg += cg; rb += cb; rs += cr * cr + cg * cg + cb * cb
                    }
                    let k = (y + 1) * (w + 1) + x + 1, above = y * (w + 1) + x + 1
                    count[k] = count[above] + rc; r[k] = r[above] + rr; g[k] = g[above] + rg
                    b[k] = b[above] + rb; square[k] = square[above] + rs
                }
            }
        }

        /// Whether `colour` (3 bytes a pixel) at pixel `o` is like the
        /// background around it (true when there is none around).
        func holds(_ colour: [UInt8], at o: Int) -> Bool {
            let x = o % width, y = o / width
            let x0 = max(0, x - radius), y0 = max(0, y - radius), x1 = min(width, x + radius + 1), y1 = min(height, y + radius + 1)
            func box(_ t: [Int]) -> Int {
                t[y1 * (width + 1) + x1] - t[y0 * (width + 1) + x1] - t[y1 * (width + 1) + x0] + t[y0 * (width + 1) + x0]
            }
            let n = box(count)
            guard n > 0 else { return true }
            let mr = Double(box(r)) / Double(n), mg = Double(box(g)) / Double(n), mb = Double(box(b)) / Double(n)
            let variance = max(0, Double(box(square)) / Double(n) - (mr * mr + mg * mg + mb * mb))
            let dr = Double(colour[o * 3]) - mr, dg = Double(colour[o * 3 + 1]) - mg, db = Double(colour[o * 3 + 2]) - mb
            return (dr * dr + dg * dg + db * db).squareRoot() <= 3 * variance.squareRoot() + 16
        }
    }

    static func mattedPlate(image: RGBAImage, mask: GreyMask, box ob: PixelRect, method: PlateFill = plateFill) throws -> RGBAImage {
        let w = image.width, h = image.height
        let radius = 5, margin = 16
        let crop = PixelRect(x0: max(0, ob.x0 - margin), y0: max(0, ob.y0 - margin),
                             x1: min(w, ob.x1 + margin), y1: min(h, ob.y1 + margin))
        let cw = crop.width, ch = crop.height
        var rgb = [UInt8](repeating: 0, count: cw * ch * 3)
        var alpha = [UInt8](repeating: 0, count: cw * ch)
        for y in 0 ..< ch {
            for x in 0 ..< cw {
                let k = (y + crop.y0) * w + x + crop.x0, o = y * cw + x
                rgb[o * 3] = image.pixels[k * 4]; rgb[o * 3 + 1] = image.pixels[k * 4 + 1]; rgb[o * 3 + 2] = image.pixels[k * 4 + 2]
                alpha[o] = mask.pixels[k]
            }
        }
        do {
            let (background, misfit) = try estimatedColours(rgb: rgb, alpha: alpha, width: cw, height: ch)
            let around = BackgroundAround(rgb: rgb, alpha: alpha, width: cw, height: ch, radius: backgroundAroundRadius)
            var holes = [UInt8](repeating: 0, count: cw * ch)
            for o in 0 ..< cw * ch {
                switch alpha[o] {
                case 0: continue
                case 255: holes[o] = 255
                default:
                    // Where the estimate does not explain the picture, or
                    // the object covers nearly all of the pixel (its
                    // background then rests on a few levels), the
                    // background is filled from around, as under the object.
                    if misfit[o] || alpha[o] >= backgroundOpaque || !around.holds(background, at: o) { holes[o] = 255 }
                    for c in 0..<3 { rgb[o * 3 + c] = background[o * 3 + c] }
                }
            }
            try fill(rgb: &rgb, width: cw, height: ch, holes: holes, radius: Double(radius), method: method)
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        var out = image
        for y in 0 ..< ch {
            for x in 0 ..< cw where alpha[y * cw + x] != 0 {
                let k = ((y + crop.y0) * w + x + crop.x0) * 4, o = (y * cw + x) * 3
                out.pixels[k] = rgb[o]; out.pixels[k + 1] = rgb[o + 1]; out.pixels[k + 2] = rgb[o + 2]
            }
        }
        return out
    }
}
