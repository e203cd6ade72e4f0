import Foundation
import WobbleCore
import WobbleMedia
import WobbleVision

/// The selection benchmark's objects (SelectSet/objects.txt: CC0 and
/// public-domain photos with hand-made outlines; the format is described
/// at its top), rasterised as Scripts/select-masks.py does (a pixel is in
/// the object when its centre is), and the measures taken on them: the
/// IoU of a click's first candidate, the clicks to reach an IoU of 0.85
/// (NoC@85) and GrabCut from the object's box.
///
/// What a click is, for our tool (what the studio offers): the first is a
/// `Shift`+click at the object's middle (the pixel farthest inside it):
/// the region fitted around the click's first candidate, with that mask.
/// Each next one goes to the middle of the largest wrong area (the pixel
/// of it farthest from its edge), the standard simulation: a dot of the
/// studio's brush (6 pixels) marking object where the object was missed
/// (a `Shift`+press with a tiny drag) or background where the mask took
/// too much (an `Alt`+click); the region's cutout is computed again from
/// every dot so far, starting from the mask it has (`CutoutVision.refined`,
/// as the studio does: a dot is a strong, local constraint, the band of
/// background it lands on taken out, the piece of object it lands on
/// brought in, see `CutoutVision.corrections`). A dot of object on or past
/// the region's curves grows the region around the piece it brings
/// (`CutoutVision.refinedGrowing`, as the studio does: the region's handles
/// move there; a mask never reaches past its region). Before, the benchmark
/// refitted the region around the mask and the dot itself (a handle drag
/// the studio did not make), so a click could add only up to just past
/// itself. WOBBLE_SELECT_TRACE prints each click (where, the largest wrong
/// area, the IoU after); WOBBLE_SELECT_DUMP=FOLDER writes a picture of each
/// click's state there (`dump`).
enum SelectSet {
    struct Object {
        let photo: String
        let name: String
        let image: RGBAImage
        let truth: GreyMask
        var label: String { SelectSet.label(photo, name) }
    }

    /// `coffee/crema`: the photo's file name without its extension, the object's name.
    static func label(_ photo: String, _ name: String) -> String {
        let file = photo.split(separator: "/").last.map(String.init) ?? photo
        return "\(file.split(separator: ".").first.map(String.init) ?? file)/\(name)"
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("SelectSet")

    private enum Shape {
        case polygon([Point]), ellipse(Point, Point)
        func contains(_ p: Point) -> Bool {
            switch self {
            case .ellipse(let c, let r):
                let dx = (p.x - c.x) / r.x, dy = (p.y - c.y) / r.y
                return dx * dx + dy * dy <= 1
            case .polygon(let pts):
                var inside = false
                for i in pts.indices {
                    let a = pts[i], b = pts[(i + 1) % pts.count]
                    if (a.y > p.y) != (b.y > p.y), p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) { inside.toggle() }
                }
                return inside
            }
        }
    }

    struct BadLine: Error, CustomStringConvertible { let description: String }

    /// `image` at half its size (each 2×2 square averaged).
    static func half(_ image: RGBAImage) -> RGBAImage {
        let w = image.width / 2, h = image.height / 2
        var out = RGBAImage(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                for c in 0..<4 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { sum += Int(image.pixels[((2 * y + dy) * image.width + 2 * x + dx) * 4 + c]) }
                    out.pixels[(y * w + x) * 4 + c] = UInt8((sum + 2) / 4)
                }
            }
        }
        return out
    }

    /// Every object of the set (`only`: those whose label contains one of
    /// these; `half`: the photos at half their size, the outlines halved).
    static func load(only: [String]? = nil, half: Bool = false) throws -> [Object] {
        let text = try String(contentsOf: folder.appendingPathComponent("objects.txt"), encoding: .utf8)
        var out: [Object] = []
        var photo: (path: String, image: RGBAImage)?
        var current: (name: String, shapes: [(minus: Bool, shape: Shape)])?
        func finish() {
            guard let c = current, let p = photo else { return }
            current = nil
            let label = SelectSet.label(p.path, c.name)
            if let only, !only.contains(where: { label.contains($0) }) { return }
            let image = half ? SelectSet.half(p.image) : p.image
            let s = half ? 2.0 : 1.0
            let w = image.width, h = image.height
            var mask = GreyMask(width: w, height: h)
            for (minus, shape) in c.shapes {
                for y in 0..<h {
                    for x in 0..<w where shape.contains(Point((Double(x) + 0.5) * s, (Double(y) + 0.5) * s)) { mask.pixels[y * w + x] = minus ? 0 : 255 }
                }
            }
            out.append(Object(photo: p.path, name: c.name, image: image, truth: mask))
        }
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var f = raw.split(separator: " ").map(String.init)
            guard let first = f.first, !first.hasPrefix("#") else { continue }
            func bad(_ why: String) -> BadLine { BadLine(description: "objects.txt:\(n + 1): \(why)") }
            func point(_ s: String) throws -> Point {
                let xy = s.split(separator: ",").compactMap { Double($0) }
                guard xy.count == 2 else { throw bad("'\(s)' is not x,y") }
                return Point(xy[0], xy[1])
            }
            switch first {
            case "photo":
                finish()
                guard f.count == 2 else { throw bad("photo PATH") }
                photo = (f[1], try ImageIO.load(path: folder.appendingPathComponent(f[1]).path))
            case "object":
                finish()
                guard f.count == 2 else { throw bad("object NAME") }
                current = (f[1], [])
            default:
                let minus = first == "minus"
                if minus { f.removeFirst() }
                guard current != nil, let kind = f.first else { throw bad("a shape outside an object") }
                let pts = try f.dropFirst().map(point)
                switch kind {
                case "polygon" where pts.count >= 3: current?.shapes.append((minus, .polygon(pts)))
                case "ellipse" where pts.count == 2: current?.shapes.append((minus, .ellipse(pts[0], pts[1])))
                default: throw bad("unknown shape '\(kind)'")
                }
            }
        }
        finish()
        return out
    }

    /// The pixel of `area` (above 127) farthest from its edge (4-neighbour
    /// distance, the first in rows on a tie), as its centre; nil when empty.
    static func middle(of area: [Bool], width w: Int, height h: Int) -> Point? {
        var d = [Int32](repeating: 0, count: w * h)
        var queue: [Int] = []
        for i in 0 ..< w * h where area[i] {
            let x = i % w, y = i / w
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 || !area[i - 1] || !area[i + 1] || !area[i - w] || !area[i + w] {
                d[i] = 1
                queue.append(i)
            }
        }
        var head = 0
        while head < queue.count {
            let i = queue[head]; head += 1
            let x = i % w, y = i / w
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < w && ny < h {
                let n = ny * w + nx
                if area[n] && d[n] == 0 { d[n] = d[i] + 1; queue.append(n) }
            }
        }
        var best = -1, bestD: Int32 = 0
        for i in 0 ..< w * h where d[i] > bestD { best = i; bestD = d[i] }
        return best < 0 ? nil : Point(Double(best % w) + 0.5, Double(best / w) + 0.5)
    }

    /// The largest 4-connected area of `wrong`.
    static func largestArea(_ wrong: [Bool], width w: Int, height h: Int) -> [Bool] {
        var label = [Int32](repeating: -1, count: w * h)
        var best: (id: Int32, size: Int) = (-1, 0)
        var id: Int32 = 0
        for s in 0 ..< w * h where wrong[s] && label[s] < 0 {
            var stack = [s]
            label[s] = id
            var size = 0
            while let i = stack.popLast() {
                size += 1
                let x = i % w, y = i / w
                for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < w && ny < h {
                    let n = ny * w + nx
                    if wrong[n] && label[n] < 0 { label[n] = id; stack.append(n) }
                }
            }
            if size > best.size { best = (id, size) }
            id += 1
        }
        return label.map { $0 == best.id && best.id >= 0 }
    }

    static let brush = 6.0
    /// The mean NoC@85 the test asserts over its subset (at half size, at
    /// most 6 clicks, 7 when never reached): what the grouping and the
    /// corrective dots reach now, 8/3 (the patch in 1, the camera in 3,
    /// the left eye in 4; one click more anywhere fails). Before a dot
    /// marked only its own side of an edge (`CutoutVision.strokeSeeds`),
    /// 11/3 (the left eye not within 6); 11/3 the other way round before a
    /// dot took back the band it lands on (the left eye in 3, the camera
    /// never); 5.0 (15/3) before a dot kept the mask's inside as sure
    /// object. The goal is 3.
    static let nocThreshold = 8.0 / 3.0
    /// The clicks the helmet (full size) needs now, asserted: its first
    /// candidate takes some of the suit above it, and a background dot
    /// takes that band back (18 clicks before).
    static let helmetClicks = 7

    /// A picture of a click's state (WOBBLE_SELECT_DUMP, to look at): the
    /// object's surroundings, the mask's pixels that are right tinted
    /// green, those it took too much red, those it missed blue, the
    /// region's outline yellow and the dots white (object) or black.
    static func dump(_ o: Object, mask: GreyMask, region: RegionShape?, strokes: [CutoutStroke], to path: String) throws {
        let w = o.image.width, h = o.image.height
        let b = o.truth.objectBox
        let m = max(20, max(b.width, b.height) / 3)
        let x0 = max(0, b.x0 - m), y0 = max(0, b.y0 - m), x1 = min(w, b.x1 + m), y1 = min(h, b.y1 + m)
        var out = RGBAImage(width: x1 - x0, height: y1 - y0)
        for y in y0 ..< y1 {
            for x in x0 ..< x1 {
                let k = y * w + x, q = ((y - y0) * out.width + x - x0) * 4
                let t = o.truth.pixels[k] > 127, s = mask.pixels[k] > 127
                var c = (0 ..< 3).map { Double(o.image.pixels[k * 4 + $0]) * 0.5 }
                if t && s { c[1] += 100 } else if s { c[0] += 127 } else if t { c[2] += 127 }
                if let region {
                    let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                    if region.contains(p) != region.contains(p + Point(1, 0)) || region.contains(p) != region.contains(p + Point(0, 1)) { c = [255, 255, 0] }
                }
                for st in strokes {
                    for sp in st.points where (sp - Point(Double(x) + 0.5, Double(y) + 0.5)).length <= st.radius { c = st.object ? [255, 255, 255] : [0, 0, 0] }
                }
                for i in 0 ..< 3 { out.pixels[q + i] = UInt8(min(255, c[i])) }
                out.pixels[q + 3] = 255
            }
        }
        try ImageIO.writePNG(out, to: path)
    }

    /// What the measures give for one object.
    struct Result {
        var firstIoU: Double
        var firstMattedIoU: Double  // the first candidate matted: what the studio's click and `cutout --at` give
        var bestIoU: Double      // the best of the click's candidates
        var bestRank: Int        // its place in the list, from 1
        var count: Int           // how many candidates
        var clicks: Int          // NoC@85 (maxClicks + 1 when never reached)
        var boxIoU: Double       // a region on the object's box
        var looseBoxIoU: Double  // a region 20% larger each way
        var candidateSeconds: Double
        var candidateCPUSeconds: Double  // the process's CPU time over the click's candidates (every thread)
        var studioSeconds: Double        // the candidates, the first matted and a region fitted around each (the studio's wait)
        var digest: UInt64               // FNV-1a over every candidate's bytes, in order: the same candidates, the same order
        var correctionSeconds: Double  // a corrective click's cutout, the mean (0 when none)
    }

    /// The measures for `o` (NoC@85 up to `maxClicks`).
    static func measure(_ o: Object, maxClicks: Int = 20, box: Bool = true) throws -> Result {
        let w = o.image.width, h = o.image.height
        let truth = o.truth.pixels.map { $0 > 127 }
        guard let click = middle(of: truth, width: w, height: h) else { throw BadLine(description: "\(o.label): empty") }
        let t0 = DispatchTime.now().uptimeNanoseconds, c0 = clock()
        let candidates = (try? CutoutVision.clickCandidates(image: o.image, at: click)) ?? []
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        let cpu = Double(clock() - c0) / Double(CLOCKS_PER_SEC)
        // What the studio's window does next before it shows the first
        // candidate (CutoutEditor's click job): the first matted, a region
        // fitted around each.
        let s0 = DispatchTime.now().uptimeNanoseconds
        var firstMatted = 0.0
        for (i, m) in candidates.enumerated() {
            let shown = i == 0 ? ((try? CutoutVision.clickMatte(image: o.image, mask: m)) ?? m) : m
            if i == 0 { firstMatted = CutoutVision.intersectionOverUnion(shown, o.truth) }
            _ = CutoutVision.fitRegion(around: shown)
        }
        let studioSeconds = seconds + Double(DispatchTime.now().uptimeNanoseconds - s0) / 1e9
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for m in candidates {
            for b in m.pixels { digest = (digest ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        var mask = candidates.first ?? GreyMask(width: w, height: h)
        let first = CutoutVision.intersectionOverUnion(mask, o.truth)
        let ious = candidates.map { CutoutVision.intersectionOverUnion($0, o.truth) }
        let best = ious.indices.max { (ious[$0], -$0) < (ious[$1], -$1) }
        var clicks = 1
        var iou = first
        var region = CutoutVision.fitRegion(around: mask).map { $0.shape }
        var strokes: [CutoutStroke] = []
        var correcting = 0.0, corrections = 0
        while iou < 0.85 && clicks < maxClicks {
            clicks += 1
            var wrong = [Bool](repeating: false, count: w * h)
            for i in 0 ..< w * h { wrong[i] = truth[i] != (mask.pixels[i] > 127) }
            guard let p = middle(of: largestArea(wrong, width: w, height: h), width: w, height: h) else { break }
            let object = truth[Int(p.y) * w + Int(p.x)]
            strokes.append(CutoutStroke(points: [p], radius: brush, object: object))
            let c0 = DispatchTime.now().uptimeNanoseconds
            let found = region.flatMap { try? CutoutVision.refinedGrowing(image: o.image, region: $0, strokes: strokes, from: mask) }
            correcting += Double(DispatchTime.now().uptimeNanoseconds - c0) / 1e9
            corrections += 1
            guard let next = found else { continue }
            if let grown = next.region { region = grown.shape }
            mask = next.mask
            iou = CutoutVision.intersectionOverUnion(mask, o.truth)
            if ProcessInfo.processInfo.environment["WOBBLE_SELECT_TRACE"] != nil {
                let area = largestArea(wrong, width: w, height: h).reduce(0) { $0 + ($1 ? 1 : 0) }
                print(String(format: "trace: %@ click %d %@ at %.0f,%.0f (largest wrong area %d px): IoU %.3f", o.label, clicks, object ? "object" : "background", p.x, p.y, area, iou))
            }
            if let dir = ProcessInfo.processInfo.environment["WOBBLE_SELECT_DUMP"] {
                try? dump(o, mask: mask, region: region, strokes: strokes, to: "\(dir)/\(o.label.replacingOccurrences(of: "/", with: "-"))-\(clicks).png")
            }
        }
        if iou < 0.85 { clicks = maxClicks + 1 }
        if let dir = ProcessInfo.processInfo.environment["WOBBLE_SELECT_DUMP"] {
            try? dump(o, mask: candidates.first ?? GreyMask(width: w, height: h), region: CutoutVision.fitRegion(around: candidates.first ?? GreyMask(width: w, height: h)).map { $0.shape },
                      strokes: [], to: "\(dir)/\(o.label.replacingOccurrences(of: "/", with: "-"))-1.png")
        }
        var boxIoU = 0.0, looseBoxIoU = 0.0
        if box {
            // The region's corners on the object's box (its curves then cut
            // the box's corners), and 20% of the box's size out on each side.
            let b = o.truth.objectBox
            for grow in [0.0, 0.2] {
                let dx = Int((grow * Double(b.width)).rounded()), dy = Int((grow * Double(b.height)).rounded())
                let g = PixelRect(x0: max(0, b.x0 - dx), y0: max(0, b.y0 - dy), x1: min(w, b.x1 + dx), y1: min(h, b.y1 + dy))
                let region = SketchPoints(lt: Point(Double(g.x0), Double(g.y0)), rt: Point(Double(g.x1), Double(g.y0)),
                                          rb: Point(Double(g.x1), Double(g.y1)), lb: Point(Double(g.x0), Double(g.y1))).shape
                if let m = try? CutoutVision.objectMask(image: o.image, box: g, region: region) {
                    if grow == 0 { boxIoU = CutoutVision.intersectionOverUnion(m, o.truth) } else { looseBoxIoU = CutoutVision.intersectionOverUnion(m, o.truth) }
                }
            }
        }
        return Result(firstIoU: first, firstMattedIoU: firstMatted, bestIoU: best.map { ious[$0] } ?? 0, bestRank: (best ?? -1) + 1, count: candidates.count, clicks: clicks, boxIoU: boxIoU, looseBoxIoU: looseBoxIoU, candidateSeconds: seconds,
                      candidateCPUSeconds: cpu, studioSeconds: studioSeconds, digest: digest,
                      correctionSeconds: corrections == 0 ? 0 : correcting / Double(corrections))
    }
}
