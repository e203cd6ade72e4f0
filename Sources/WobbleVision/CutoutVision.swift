import WobbleCore

/// Why a cutout cannot be made; `message` reads after `cutout = "auto": `
/// or the mask's name.
public enum CutoutProblem: Error, Equatable, CustomStringConvertible {
    /// The box or region reaches outside the image.
    case outsideImage(box: PixelRect, width: Int, height: Int)
    /// Every pixel of the box and around it has one colour.
    case uniform
    /// GrabCut found no object in the box.
    case noObject
    /// OpenCV failed.
    case vision(String)
    /// A click's object is looked for in squares of at least
    /// `smallestSquare` pixels: a picture smaller than that has none.
    case tooSmallForAClick(width: Int, height: Int)

    public var description: String {
        switch self {
        case .outsideImage(let b, let w, let h):
            return "the region (box \(b.x0),\(b.y0) to \(b.x1),\(b.y1)) reaches outside the \(w)×\(h) image"
        case .uniform: return "the region is one uniform colour: there is no object to cut out"
        case .noObject: return "found no object in the region"
        case .vision(let m): return m
        case .tooSmallForAClick(let w, let h):
            return "a click looks for an object in squares of at least \(CutoutVision.smallestSquare)×\(CutoutVision.smallestSquare) pixels and the picture is \(w)×\(h): mark the object with a box or a region instead"
        }
    }
}

/// Cutout masks and plates: the only code that reaches OpenCV
/// (through `OpenCV`, the C shim's one caller). What `addSketch{cutout =
/// "auto"}`, `wobble-run cutout` and the studio call:
/// - `objectMask`: the object in a box (GrabCut), started from a region
///   and refined by strokes that mark object and background; or the
///   object under a click;
/// - `plate`: the image with the object's area filled from around it;
/// - `layer`: both, ready for the renderers (`CutoutLayer`);
/// - `fitRegion`: a region whose boundary holds a mask (a new sketch
///   around the object under the mouse).
///
/// Deterministic: the same bytes in, the same mask out (OpenCV's random
/// generator seeded, one thread inside each call, no CPU-dependent code
/// paths; the scaling around it is integer arithmetic here). A click's
/// independent calls run side by side (`concurrently`) and are gathered
/// in a fixed order, so its candidates do not depend on the threads.
public enum CutoutVision {
    /// GrabCut works on the box (and a ring around it) scaled so that its
    /// longer side is at most this many pixels; the mask is scaled back up.
    public static let workingSide = 256
    /// GrabCut's rounds.
    public static let iterations = 5

    /// The object inside `box` (image pixels) of `image`, as a soft matte
    /// of the image's size (255 object, 0 background, the edge's alpha
    /// solved at full resolution: `matte(image:mask:)`). With a region and
    /// no strokes, the box is read through candidates (`boxMask`: the
    /// over-segmentation's groups in the box and GrabCut's readings,
    /// scored by how they fill the box). With strokes, GrabCut: everything
    /// outside `box` background, the region's inside probably object,
    /// beyond its curves background; its answer is then cleared more than
    /// a few pixels outside `region` (nothing of the background beyond the
    /// region's curves comes along) and cut to the piece of object under
    /// the region's centre (`keepObjectUnderCentre`); `object` and
    /// `background` (masks of the image's size: pixels above 127) are
    /// strokes that mark pixels for sure (the matte keeps them).
    ///
    /// Throws `CutoutProblem`: the box outside the image, a uniform box,
    /// no object found, OpenCV's failure.
    public static func objectMask(image: RGBAImage, box: PixelRect, region: RegionShape? = nil,
                                  object: GreyMask? = nil, background: GreyMask? = nil) throws -> GreyMask {
        let band = matteBand(width: image.width, height: image.height, factor: workingFactor(box: box, image: image))
        if region != nil, object == nil, background == nil {
            // Without strokes, the box read through candidates (`boxMask`).
            return try objectMatte(image: image, mask: try boxMask(image: image, box: box, region: region), band: band)
        }
        let mask = try objectMask(image: image, box: box, region: region, object: object, background: background,
                                  workingSide: workingSide, constrained: true)
        return try matte(image: image, mask: mask, band: band, object: object, background: background)
    }

    /// An object's mask (a box's, a click's) matted (`matte`), or as found
    /// when the matte keeps under half of it (a small object whose band
    /// the matte solves to background: the camera at half size; a click
    /// on a cat's cheek, whose 300–600 pixel candidate it cleared).
    public static func objectMatte(image: RGBAImage, mask: GreyMask, band: Int) throws -> GreyMask {
        let matted = try matte(image: image, mask: mask, band: band)
        func area(_ m: GreyMask) -> Int { m.pixels.reduce(0) { $0 + ($1 > 127 ? 1 : 0) } }
        return area(matted) * 2 < area(mask) ? mask : matted
    }

    /// `objectMask(image:box:...)` with GrabCut on at most `workingSide`
    /// pixels a side.
    static func objectMask(image: RGBAImage, box: PixelRect, region: RegionShape?, object: GreyMask?, background: GreyMask?,
                           workingSide: Int, probable: GreyMask? = nil, constrained: Bool = false, rectangle: Bool = false) throws -> GreyMask {
        let w = image.width, h = image.height
        guard !box.isEmpty, box.x0 >= 0, box.y0 >= 0, box.x1 <= w, box.y1 <= h else {
            throw CutoutProblem.outsideImage(box: box, width: w, height: h)
        }
        // The box and a ring of background around it (GrabCut's colour
        // model of the background needs some).
        let ring = max(8, max(box.width, box.height) / 6)
        let crop = PixelRect(x0: max(0, box.x0 - ring), y0: max(0, box.y0 - ring),
                             x1: min(w, box.x1 + ring), y1: min(h, box.y1 + ring))
        if isUniform(image, crop) { throw CutoutProblem.uniform }
        // Working size: the crop scaled by an integer-friendly factor.
        let longer = max(crop.width, crop.height)
        let factor = max(1, (longer + workingSide - 1) / workingSide)   // crop pixels per working pixel
        let lw = (crop.width + factor - 1) / factor, lh = (crop.height + factor - 1) / factor
        let rgb = workingRGB(image, crop, factor: factor, width: lw, height: lh)
        var labels = [UInt8](repeating: OpenCV.Label.background.rawValue, count: lw * lh)
        for j in 0..<lh {
            for i in 0..<lw {
                // The working pixel's footprint in the image.
                let fx0 = crop.x0 + i * factor, fy0 = crop.y0 + j * factor
                let fx1 = min(crop.x1, fx0 + factor), fy1 = min(crop.y1, fy0 + factor)
                // A stroke over any of it marks it (background first).
                var marked: OpenCV.Label?
                if background != nil || object != nil {
                    for y in fy0 ..< fy1 {
                        for x in fx0 ..< fx1 {
                            if let background, background.pixels[y * w + x] > 127 { marked = .background }
                            if marked == nil, let object, object.pixels[y * w + x] > 127 { marked = .object }
                        }
                    }
                }
                // Labelled by the footprint's centre.
                let c = Point(Double(fx0 + fx1) / 2, Double(fy0 + fy1) / 2)
                let label: OpenCV.Label
                if let marked {
                    label = marked
                } else if c.x < Double(box.x0) || c.x > Double(box.x1) || c.y < Double(box.y0) || c.y > Double(box.y1) {
                    label = .background
                } else if rectangle {
                    // GrabCut's rectangle mode: the whole box probably object.
                    label = .probablyObject
                } else if constrained, let region, outside(region, c, by: Double(factor + 2)) {
                    label = .background
                } else if let probable {
                    let px = min(fx1 - 1, Int(c.x)), py = min(fy1 - 1, Int(c.y))
                    label = probable.pixels[py * w + px] > 127 ? .probablyObject : .probablyBackground
                } else if region.map({ $0.contains(c) }) ?? true {
                    label = .probablyObject
                } else {
                    label = .probablyBackground
                }
                labels[j * lw + i] = label.rawValue
            }
        }
        guard labels.contains(where: { $0 == OpenCV.Label.probablyObject.rawValue || $0 == OpenCV.Label.object.rawValue }),
              labels.contains(where: { $0 == OpenCV.Label.background.rawValue || $0 == OpenCV.Label.probablyBackground.rawValue })
        else { throw CutoutProblem.noObject }
        do {
            try OpenCV.grabCut(rgb: rgb, width: lw, height: lh, labels: &labels, iterations: iterations)
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        // The region then bounds the object: nothing more than a few
        // pixels beyond its curves (background texture GrabCut took).
        if constrained, let region {
            for j in 0..<lh {
                for i in 0..<lw {
                    let fx0 = crop.x0 + i * factor, fy0 = crop.y0 + j * factor
                    let fx1 = min(crop.x1, fx0 + factor), fy1 = min(crop.y1, fy0 + factor)
                    let c = Point(Double(fx0 + fx1) / 2, Double(fy0 + fy1) / 2)
                    if outside(region, c, by: Double(factor + 2)) { labels[j * lw + i] = OpenCV.Label.background.rawValue }
                }
            }
        }
        if constrained {
            keepObjectUnderCentre(&labels, width: lw, height: lh,
                                  centre: region.map { ((Int($0.center.x) - crop.x0) / factor, (Int($0.center.y) - crop.y0) / factor) }
                                      ?? (((box.x0 + box.x1) / 2 - crop.x0) / factor, ((box.y0 + box.y1) / 2 - crop.y0) / factor))
        }
        // Back to the image's size: the working mask (0/255) sampled
        // bilinearly at each pixel centre of the box, its ramp steepened to
        // about a pixel (doubles: the same results on every machine).
        let fg = labels.map { $0 == OpenCV.Label.object.rawValue || $0 == OpenCV.Label.probablyObject.rawValue ? 255.0 : 0.0 }
        var mask = GreyMask(width: w, height: h)
        let steep = Double(factor)
        var any = false
        func axis(_ v: Int, _ origin: Int, _ n: Int) -> (Int, Int, Double) {
            let f = min(max((Double(v - origin) + 0.5) / Double(factor) - 0.5, 0), Double(n - 1))
            let i = Int(f)
            return (i, min(i + 1, n - 1), f - Double(i))
        }
        for y in box.y0 ..< box.y1 {
            let (y0, y1, ay) = axis(y, crop.y0, lh)
            for x in box.x0 ..< box.x1 {
                let (x0, x1, ax) = axis(x, crop.x0, lw)
                let top = fg[y0 * lw + x0] * (1 - ax) + fg[y0 * lw + x1] * ax
                let bottom = fg[y1 * lw + x0] * (1 - ax) + fg[y1 * lw + x1] * ax
                let v = top * (1 - ay) + bottom * ay
                let s = min(255, max(0, ((v - 127.5) * steep + 127.5).rounded()))
                mask.pixels[y * w + x] = UInt8(s)
                if s != 0 { any = true }
            }
        }
        guard any else { throw CutoutProblem.noObject }
        return mask
    }

    /// The object under `point` (image pixels) in one square of `side`
    /// pixels around it (default half the picture's shorter side, moved
    /// inside the picture): what `clickCandidates` finds at one scale.
    public static func objectMask(image: RGBAImage, at point: Point, side: Int? = nil) throws -> GreyMask {
        let w = image.width, h = image.height
        return try clickMask(image: image, at: point, side: min(side ?? min(w, h) / 2, w, h), workingSide: workingSide).mask
    }

    /// The squares a click tries: half the picture's shorter side, then
    /// halved while at least this many pixels.
    public static let smallestClickSide = 24
    /// The smallest square GrabCut is run in for a click (a picture's
    /// shorter side below it has no click candidates).
    public static let smallestSquare = 8
    /// GrabCut's working side for each of a click's squares (small: a
    /// click tries several, and answers within a second).
    public static let clickWorkingSide = 128

    /// What a click may mean, best first, from squares around `point`
    /// (image pixels) of several sizes (half the picture's shorter side,
    /// halved down to `smallestClickSide`):
    /// - in each, GrabCut from a disc around the click (sure object, radius
    ///   0.12 of the square's side, at least 3.5 pixels), a centred square
    ///   of 0.6 of the side probably object and the rest probably
    ///   background, keeping only the part connected to the click;
    /// - in each, the part under the click of an over-segmentation at each
    ///   of `partScales` (`parts`): it follows edges rather than colours,
    ///   so it holds an object whose colours also occur around it (a dark
    ///   housing around a bright mirror glass, on a dark shelf) that
    ///   GrabCut's colour models give to the background.
    ///
    /// Gathered (a mask within 0.9 IoU of an earlier one left out): the
    /// grouping's two best, GrabCut's objects that stay clear of their
    /// square's inner edges (the object is whole) and are more than the
    /// disc they started from, the smallest first; then the ones that
    /// reach their square's edges, the smallest square first; then the
    /// ones no more than their disc; the parts, smallest first, leaving
    /// out those over a third of their square (the background around the
    /// thing). Ordered by `orderScore` (the edge along the boundary, the
    /// click's depth inside, agreement with the others, colours unlike the
    /// surroundings, size), the gathering order breaking ties. The squares
    /// and the grouping are computed side by side on the machine's cores
    /// (the order needs them all: the first is known with the last).
    /// Deterministic like `objectMask`.
    /// Throws as `objectMask` when no square finds an object.
    public static func clickCandidates(image: RGBAImage, at point: Point) throws -> [GreyMask] {
        let w = image.width, h = image.height
        guard min(w, h) >= smallestSquare else { throw CutoutProblem.tooSmallForAClick(width: w, height: h) }
        var sides: [Int] = []
        var side = min(w, h) / 2
        while side >= smallestClickSide { sides.append(side); side /= 2 }
        if sides.isEmpty { sides = [min(w, h)] }
        var clear: [Coverage.Of] = [], cut: [Coverage.Of] = [], trivial: [Coverage.Of] = []
        var partsFound: [Coverage.Of] = []
        var firstProblem: Error?
        // Every square's parts and GrabCut, and the grouping, side by side
        // (job 0 the grouping, then the squares smallest first); gathered
        // below in that order.
        let order = Array(sides.reversed())
        typealias Square = (parts: [Coverage.Of], click: Result<(mask: GreyMask, box: PixelRect, seedArea: Double), any Error>)
        let jobs = concurrently(order.count + 1) { k -> (grouped: [Scored], square: Square?) in
            guard k > 0 else { return (groupedCandidates(image: image, at: point), nil) }
            let side = order[k - 1]
            var found: [Coverage.Of] = []
            if point.x >= 0, point.y >= 0, point.x < Double(w), point.y < Double(h) {
                let p = parts(image: image, at: point, side: side, ks: partScales, workingSide: clickWorkingSide)
                for m in p.masks {
                    let c = Coverage(m)
                    if c.count * 3 <= p.box.area { found.append(Coverage.Of(mask: m, coverage: c)) }
                }
            }
            return ([], (found, Result { try clickMask(image: image, at: point, side: side, workingSide: clickWorkingSide) }))
        }
        for (k, side) in order.enumerated() {
            guard let square = jobs[k + 1].square else { continue }
            partsFound += square.parts
            let found: (mask: GreyMask, box: PixelRect, seedArea: Double)
            switch square.click {
            case .success(let f): found = f
            case .failure(let error):
                if firstProblem == nil { firstProblem = error }
                continue
            }
            let m = found.mask, b = found.box
            let coverage = Coverage(m)
            // Object pixels on the square's edges that are not the picture's.
            var touching = 0
            for x in b.x0 ..< b.x1 {
                if b.y0 > 0, m.pixels[b.y0 * w + x] > 127 { touching += 1 }
                if b.y1 < h, m.pixels[(b.y1 - 1) * w + x] > 127 { touching += 1 }
            }
            for y in b.y0 ..< b.y1 {
                if b.x0 > 0, m.pixels[y * w + b.x0] > 127 { touching += 1 }
                if b.x1 < w, m.pixels[y * w + b.x1 - 1] > 127 { touching += 1 }
            }
            if Double(coverage.count) < 2 * found.seedArea {
                trivial.append(Coverage.Of(mask: m, coverage: coverage))
            } else if touching * 100 <= 4 * side {
                clear.append(Coverage.Of(mask: m, coverage: coverage))
            } else {
                cut.append(Coverage.Of(mask: m, coverage: coverage))
            }
        }
        // Without any GrabCut object, no parts either: the problem is said.
        guard !(clear.isEmpty && cut.isEmpty && trivial.isEmpty) else { throw firstProblem ?? CutoutProblem.noObject }
        func smallestFirst(_ list: [Coverage.Of]) -> [Coverage.Of] {
            list.enumerated().sorted { ($0.element.coverage.count, $0.offset) < ($1.element.coverage.count, $1.offset) }.map(\.element)
        }
        let grabCut = smallestFirst(clear) + cut + trivial
        let grouped = jobs[0].grouped.map { Coverage.Of(mask: $0.mask, coverage: $0.coverage) }
        var distinct: [Coverage.Of] = []
        for m in grouped.prefix(2) + grabCut.prefix(1) + smallestFirst(partsFound) + grabCut.dropFirst() + grouped.dropFirst(2)
        where !distinct.contains(where: { intersectionOverUnion($0.mask, $0.coverage, m.mask, m.coverage) > 0.9 }) {
            distinct.append(m)
        }
        return ordered(distinct.map(\.mask), image: image, at: point)
    }

    /// The pixels above 127 in both masks over those in either (0 when none is).
    public static func intersectionOverUnion(_ a: GreyMask, _ b: GreyMask) -> Double {
        var inter = 0, union = 0
        for (x, y) in zip(a.pixels, b.pixels) {
            let p = x > 127, q = y > 127
            if p && q { inter += 1 }
            if p || q { union += 1 }
        }
        return union == 0 ? 0 : Double(inter) / Double(union)
    }

    /// GrabCut in the square of `side` around `point` (moved inside the
    /// picture): the disc around the click sure object, a square of 0.6 of
    /// the side centred on the click probably object, the rest of the
    /// square probably background; only the part connected to the click
    /// kept. The mask, the square and the disc's area.
    static func clickMask(image: RGBAImage, at point: Point, side s: Int,
                          workingSide: Int) throws -> (mask: GreyMask, box: PixelRect, seedArea: Double) {
        let w = image.width, h = image.height
        guard s >= smallestSquare, point.x >= 0, point.y >= 0, point.x < Double(w), point.y < Double(h) else {
            throw CutoutProblem.outsideImage(box: PixelRect(x0: Int(point.x), y0: Int(point.y), x1: Int(point.x) + 1,
                                                            y1: Int(point.y) + 1), width: w, height: h)
        }
        let cx = Int(point.x), cy = Int(point.y)
        let box = clickSquare(point, side: s, width: w, height: h)
        let c = Point(Double(cx) + 0.5, Double(cy) + 0.5)
        let r = 0.3 * Double(s)
        let region = SketchPoints(lt: Point(c.x - r, c.y - r), rt: Point(c.x + r, c.y - r),
                                  rb: Point(c.x + r, c.y + r), lb: Point(c.x - r, c.y + r)).shape
        let seedRadius = max(3.5, 0.12 * Double(s))
        var seed = GreyMask(width: w, height: h)
        let sr = Int(seedRadius.rounded(.up))
        var seedArea = 0.0
        for y in max(0, cy - sr)...min(h - 1, cy + sr) {
            for x in max(0, cx - sr)...min(w - 1, cx + sr) {
                let dx = Double(x - cx), dy = Double(y - cy)
                if dx * dx + dy * dy <= seedRadius * seedRadius { seed.pixels[y * w + x] = 255; seedArea += 1 }
            }
        }
        var mask = try objectMask(image: image, box: box, region: region, object: seed, background: nil, workingSide: workingSide)
        // Only the part connected to the click.
        guard mask.pixels[cy * w + cx] > 0 else { throw CutoutProblem.noObject }
        keepConnected(&mask, to: cx, cy)
        return (mask, box, seedArea)
    }

    /// The square of `side` pixels around `point`, moved inside the picture.
    static func clickSquare(_ point: Point, side s: Int, width w: Int, height h: Int) -> PixelRect {
        let cx = Int(point.x), cy = Int(point.y)
        let x0 = min(max(0, cx - s / 2), w - s), y0 = min(max(0, cy - s / 2), h - s)
        return PixelRect(x0: x0, y0: y0, x1: x0 + s, y1: y0 + s)
    }

    /// Clears every pixel of `mask` not connected (4-neighbours, above 0)
    /// to `(cx, cy)`; all of it when that pixel is 0.
    static func keepConnected(_ mask: inout GreyMask, to cx: Int, _ cy: Int) {
        let w = mask.width, h = mask.height
        guard cx >= 0, cy >= 0, cx < w, cy < h, mask.pixels[cy * w + cx] > 0 else { mask = GreyMask(width: w, height: h); return }
        var keep = [Bool](repeating: false, count: w * h)
        keep[cy * w + cx] = true
        var stack = [cy * w + cx]
        while let k = stack.popLast() {
            let x = k % w, y = k / w
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < w && ny < h {
                let n = ny * w + nx
                if !keep[n] && mask.pixels[n] > 0 { keep[n] = true; stack.append(n) }
            }
        }
        for k in 0 ..< w * h where !keep[k] { mask.pixels[k] = 0 }
    }

    /// The over-segmentation scales (`Segments.felzenszwalb`'s k, on a
    /// square scaled to at most `clickWorkingSide` pixels a side) whose part
    /// under a click is a candidate.
    public static let partScales: [Double] = [250, 400, 600]
    /// A part's rims: segments at most this wide (twice their area over
    /// their perimeter, working pixels) with at least `rimShare` of their
    /// perimeter on the part.
    static let rimWidth = 2.0, rimShare = 0.4

    /// The parts under `point` of the square of `side` around it (moved
    /// inside the picture), one for each of `ks`: the square scaled to at
    /// most `workingSide` pixels a side and over-segmented
    /// (`Segments.felzenszwalb`, segments of at least 10 pixels); the
    /// segment under the click with its rims (thin segments along it: an
    /// outline, a highlight on an edge) and its holes filled, as a mask of
    /// the image's size (255 in the part). The masks and the square.
    static func parts(image: RGBAImage, at point: Point, side s: Int, ks: [Double], workingSide: Int) -> (masks: [GreyMask], box: PixelRect) {
        let w = image.width, h = image.height
        let cx = min(max(0, Int(point.x)), w - 1), cy = min(max(0, Int(point.y)), h - 1)
        let box = clickSquare(Point(Double(cx), Double(cy)), side: s, width: w, height: h)
        let factor = max(1, (s + workingSide - 1) / workingSide)
        let lw = (s + factor - 1) / factor, lh = lw
        let rgb = workingRGB(image, box, factor: factor, width: lw, height: lh)
        let masks = Segments.felzenszwalb(rgb: rgb, width: lw, height: lh, ks: ks, minSize: 10).map { seg -> GreyMask in
            let labels = seg.labels
            let target = labels[((cy - box.y0) / factor) * lw + (cx - box.x0) / factor]
            // Each segment's area, perimeter and perimeter on the part.
            var area = [Int](repeating: 0, count: seg.count), perimeter = area, onPart = area
            for y in 0..<lh {
                for x in 0..<lw {
                    let l = Int(labels[y * lw + x])
                    area[l] += 1
                    for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
                        guard nx >= 0, ny >= 0, nx < lw, ny < lh else { perimeter[l] += 1; continue }
                        let n = labels[ny * lw + nx]
                        if Int(n) != l {
                            perimeter[l] += 1
                            if n == target { onPart[l] += 1 }
                        }
                    }
                }
            }
            let rim = (0 ..< seg.count).map { l in
                l != Int(target) && Double(2 * area[l]) <= rimWidth * Double(perimeter[l])
                    && Double(onPart[l]) >= rimShare * Double(perimeter[l])
            }
            var inPart = labels.map { $0 == target || rim[Int($0)] }
            // Holes: what is not in the part and does not reach the square's edge.
            var outside = [Bool](repeating: false, count: lw * lh)
            var stack: [Int] = []
            for i in 0 ..< lw * lh where !inPart[i] {
                let x = i % lw, y = i / lw
                if x == 0 || y == 0 || x == lw - 1 || y == lh - 1 { outside[i] = true; stack.append(i) }
            }
            while let i = stack.popLast() {
                let x = i % lw, y = i / lw
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < lw && ny < lh {
                    let n = ny * lw + nx
                    if !inPart[n] && !outside[n] { outside[n] = true; stack.append(n) }
                }
            }
            for i in 0 ..< lw * lh where !outside[i] { inPart[i] = true }
            var mask = GreyMask(width: w, height: h)
            for y in box.y0 ..< box.y1 {
                let row = ((y - box.y0) / factor) * lw
                for x in box.x0 ..< box.x1 where inPart[row + (x - box.x0) / factor] { mask.pixels[y * w + x] = 255 }
            }
            return mask
        }
        return (masks, box)
    }

    /// `box` of `image` averaged over squares of `factor` pixels: `width ×
    /// height` pixels of 3 bytes (integer arithmetic: the same bytes on
    /// every machine).
    static func workingRGB(_ image: RGBAImage, _ box: PixelRect, factor: Int, width lw: Int, height lh: Int) -> [UInt8] {
        let w = image.width
        var rgb = [UInt8](repeating: 0, count: lw * lh * 3)
        image.pixels.withUnsafeBufferPointer { src in
            for j in 0..<lh {
                for i in 0..<lw {
                    let fx0 = box.x0 + i * factor, fy0 = box.y0 + j * factor
                    let fx1 = min(box.x1, fx0 + factor), fy1 = min(box.y1, fy0 + factor)
                    var sum = (0, 0, 0), n = 0
                    for y in fy0 ..< fy1 {
                        for x in fx0 ..< fx1 {
                            let k = (y * w + x) * 4
                            sum.0 += Int(src[k]); sum.1 += Int(src[k + 1]); sum.2 += Int(src[k + 2])
                            n += 1
                        }
                    }
                    let o = (j * lw + i) * 3
                    rgb[o] = UInt8((sum.0 + n / 2) / n)
                    rgb[o + 1] = UInt8((sum.1 + n / 2) / n)
                    rgb[o + 2] = UInt8((sum.2 + n / 2) / n)
                }
            }
        }
        return rgb
    }

    /// Whether every pixel of `box` in `image` is within 2 levels of the
    /// first, per channel.
    static func isUniform(_ image: RGBAImage, _ box: PixelRect) -> Bool {
        guard !box.isEmpty else { return true }
        let w = image.width
        return image.pixels.withUnsafeBufferPointer { p in
            let f = (box.y0 * w + box.x0) * 4
            for y in box.y0 ..< box.y1 {
                for x in box.x0 ..< box.x1 {
                    let k = (y * w + x) * 4
                    for c in 0..<3 where abs(Int(p[k + c]) - Int(p[f + c])) > 2 { return false }
                }
            }
            return true
        }
    }

    /// How a plate's hole is filled.
    public enum PlateFill: Sendable {
        /// Telea's inpainting (OpenCV): the border carried inward along
        /// straight lines; a wide hole becomes streaks.
        case telea
        /// Patches of the picture around the hole, coarse to fine
        /// (`wobble_fill_texture`): the texture kept. The plate's fill.
        case texture
    }

    /// The plate's fill.
    public static let plateFill = PlateFill.texture

    /// Fills `rgb` (`width × height`, 3 bytes a pixel) in place where
    /// `holes` is not 0, by `method` (Telea's looks `radius` pixels around).
    static func fill(rgb: inout [UInt8], width: Int, height: Int, holes: [UInt8], radius: Double,
                     method: PlateFill = plateFill) throws {
        switch method {
        case .telea: try OpenCV.inpaint(rgb: &rgb, width: width, height: height, holes: holes, radius: radius)
        case .texture: try OpenCV.fillTexture(rgb: &rgb, width: width, height: height, holes: holes)
        }
    }

    /// `image` with the pixels where `holes` is not 0 filled by `method`
    /// from the rest (the whole picture: for measuring fills). Throws
    /// `CutoutProblem.vision`.
    public static func filled(_ image: RGBAImage, holes: GreyMask, method: PlateFill) throws -> RGBAImage {
        precondition(holes.width == image.width && holes.height == image.height)
        let n = image.width * image.height
        var rgb = [UInt8](repeating: 0, count: n * 3)
        for k in 0 ..< n { for c in 0 ..< 3 { rgb[k * 3 + c] = image.pixels[k * 4 + c] } }
        do {
            try fill(rgb: &rgb, width: image.width, height: image.height, holes: holes.pixels, radius: 5, method: method)
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        var out = image
        for k in 0 ..< n where holes.pixels[k] != 0 { for c in 0 ..< 3 { out.pixels[k * 4 + c] = rgb[k * 3 + c] } }
        return out
    }

    /// The plate behind `mask`'s object: `image` with the object's area
    /// (the mask above 0, grown by 2 pixels so that no fringe of the object
    /// is copied into it) filled from the pixels around it (`plateFill`:
    /// patches of the texture around the hole, coarse to fine); every
    /// pixel where the mask is 0 is the image's own. Alpha is the image's.
    /// `method`: the fill (tests compare).
    public static func plate(image: RGBAImage, mask: GreyMask, method: PlateFill = plateFill) throws -> RGBAImage {
        precondition(mask.width == image.width && mask.height == image.height)
        let w = image.width, h = image.height
        let ob = mask.objectBox
        guard !ob.isEmpty else { return image }
        if hasSoftEdge(mask, in: ob) { return try mattedPlate(image: image, mask: mask, box: ob, method: method) }
        let grow = 2, radius = 5, margin = 16
        let crop = PixelRect(x0: max(0, ob.x0 - margin), y0: max(0, ob.y0 - margin),
                             x1: min(w, ob.x1 + margin), y1: min(h, ob.y1 + margin))
        let cw = crop.width, ch = crop.height
        var rgb = [UInt8](repeating: 0, count: cw * ch * 3)
        var holes = [UInt8](repeating: 0, count: cw * ch)
        for y in crop.y0 ..< crop.y1 {
            for x in crop.x0 ..< crop.x1 {
                let k = (y * w + x) * 4, o = (y - crop.y0) * cw + (x - crop.x0)
                rgb[o * 3] = image.pixels[k]; rgb[o * 3 + 1] = image.pixels[k + 1]; rgb[o * 3 + 2] = image.pixels[k + 2]
                guard mask.pixels[y * w + x] != 0 else { continue }
                for yy in max(crop.y0, y - grow) ... min(crop.y1 - 1, y + grow) {
                    for xx in max(crop.x0, x - grow) ... min(crop.x1 - 1, x + grow) {
                        holes[(yy - crop.y0) * cw + (xx - crop.x0)] = 255
                    }
                }
            }
        }
        do {
            try fill(rgb: &rgb, width: cw, height: ch, holes: holes, radius: Double(radius), method: method)
        } catch let e as VisionError {
            throw CutoutProblem.vision(e.message)
        }
        var out = image
        for y in crop.y0 ..< crop.y1 {
            for x in crop.x0 ..< crop.x1 where mask.pixels[y * w + x] != 0 {
                let k = (y * w + x) * 4, o = ((y - crop.y0) * cw + (x - crop.x0)) * 3
                out.pixels[k] = rgb[o]; out.pixels[k + 1] = rgb[o + 1]; out.pixels[k + 2] = rgb[o + 2]
            }
        }
        return out
    }

    /// What the renderers draw for a cutout: the object layer and the plate
    /// over the object's box (`CutoutLayer`), from `image` and its `mask`.
    public static func layer(image: RGBAImage, mask: GreyMask) throws -> CutoutLayer {
        CutoutLayer(source: image, mask: mask, plate: try plate(image: image, mask: mask))
    }

    /// A region whose boundary holds every pixel of `mask` above 127 with a
    /// margin (`margin` of the object's longer side, at least 2 pixels): a
    /// rectangle of corners around the object, grown until its four curves
    /// hold it, the center at the object's centroid. Nil for an empty mask.
    public static func fitRegion(around mask: GreyMask, margin: Double = 0.06) -> SketchPoints? {
        var sx = 0.0, sy = 0.0, n = 0.0
        var outline: [Point] = []
        let w = mask.width, h = mask.height
        func solid(_ x: Int, _ y: Int) -> Bool { x >= 0 && y >= 0 && x < w && y < h && mask.pixels[y * w + x] > 127 }
        for y in 0..<h {
            for x in 0..<w where solid(x, y) {
                sx += Double(x) + 0.5; sy += Double(y) + 0.5; n += 1
                if !solid(x - 1, y) || !solid(x + 1, y) || !solid(x, y - 1) || !solid(x, y + 1) {
                    // The pixel's outer corners.
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { outline.append(Point(Double(x + dx), Double(y + dy))) }
                }
            }
        }
        guard n > 0 else { return nil }
        let c = Point(sx / n, sy / n)
        let b = Rect(bounding: outline)
        let m = max(2, margin * max(b.width, b.height))
        // Grow the rectangle about the centroid until the curves hold the
        // outline pushed out by the margin.
        let left = c.x - b.minX + m, right = b.maxX - c.x + m, top = c.y - b.minY + m, bottom = b.maxY - c.y + m
        var scale = 1.0
        for _ in 0..<60 {
            let p = SketchPoints(lt: Point(c.x - left * scale, c.y - top * scale), rt: Point(c.x + right * scale, c.y - top * scale),
                                 rb: Point(c.x + right * scale, c.y + bottom * scale), lb: Point(c.x - left * scale, c.y + bottom * scale),
                                 center: c)
            let shape = p.shape
            let holds = outline.allSatisfy { q in
                let d = q - c, len = d.length
                return len == 0 || shape.contains(c + d * ((len + m) / len))
            }
            if holds { return p }
            scale *= 1.05
        }
        return nil
    }
}
