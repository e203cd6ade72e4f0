import Foundation
import WobbleCore
@testable import WobbleVision
import XCTest

/// A box read through candidates (`CutoutVision.boxMask`), on the
/// hand-masked set (SelectSet).
final class BoxFitTests: XCTestCase {
    /// The box of `o` grown by `grow` of its size on each side (in the
    /// picture), and the region whose corners are on it.
    static func box(_ o: SelectSet.Object, grow: Double) -> (PixelRect, RegionShape) {
        let w = o.image.width, h = o.image.height, b = o.truth.objectBox
        let dx = Int((grow * Double(b.width)).rounded()), dy = Int((grow * Double(b.height)).rounded())
        let g = PixelRect(x0: max(0, b.x0 - dx), y0: max(0, b.y0 - dy), x1: min(w, b.x1 + dx), y1: min(h, b.y1 + dy))
        let region = SketchPoints(lt: Point(Double(g.x0), Double(g.y0)), rt: Point(Double(g.x1), Double(g.y0)),
                                  rb: Point(Double(g.x1), Double(g.y1)), lb: Point(Double(g.x0), Double(g.y1))).shape
        return (g, region)
    }

    /// Every candidate of every box of the set (tight and 20% out) with its
    /// features and its IoU: what the score's weights were fitted on. Only
    /// with WOBBLE_BOXFIT_DUMP set.
    func testDumpTheBoxCandidates() throws {
        let env = ProcessInfo.processInfo.environment
        guard env["WOBBLE_BOXFIT_DUMP"] != nil else { throw XCTSkip("with WOBBLE_BOXFIT_DUMP=1") }
        let only = env["WOBBLE_SELECT_ONLY"].map { $0.split(separator: ",").map(String.init) }
        for o in try SelectSet.load(only: only) {
            for (name, grow) in [("tight", 0.0), ("loose", 0.2)] {
                let (box, region) = Self.box(o, grow: grow)
                let t0 = DispatchTime.now().uptimeNanoseconds
                let sides = env["WOBBLE_BOXFIT_SIDES"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [CutoutVision.workingSide]
                let grid = env["WOBBLE_BOXFIT_GRID"].flatMap { Int($0) } ?? CutoutVision.boxGridSide
                let ks = env["WOBBLE_BOXFIT_KS"].map { $0.split(separator: ",").compactMap { Double($0) } } ?? CutoutVision.boxScales
                let found = try CutoutVision.boxCandidates(image: o.image, box: box, region: region, sides: sides, gridSide: grid, ks: ks, refineTop: env["WOBBLE_BOXFIT_REFINE"].flatMap { Int($0) } ?? 0,
                                                           measuresAgreement: true)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
                print(String(format: "boxfit-time: %@ %@ %.3f s, %d candidates", o.label, name, seconds, found.candidates.count))
                for c in found.candidates {
                    let m = c.mask ?? found.frame.mask(c.inside, width: o.image.width, height: o.image.height, box: box)
                    let iou = CutoutVision.intersectionOverUnion(m, o.truth)
                    print("boxfit-dump: \(o.label) \(name) \(c.source) \(String(format: "%.4f", iou)) " + c.features.vector.map { String(format: "%.4f", $0) }.joined(separator: " "))
                }
            }
        }
    }
}

extension BoxFitTests {
    /// How a box was read before (kept here to measure against, side by
    /// side): GrabCut twice, the region's sure background and rectangle
    /// mode, the one with the higher `orderScore` (the box's centre as the
    /// click) kept; then the matte.
    static func twoReadings(image: RGBAImage, box: PixelRect, region: RegionShape) throws -> GreyMask {
        let found = Result {
            try CutoutVision.objectMask(image: image, box: box, region: region, object: nil, background: nil,
                                        workingSide: CutoutVision.workingSide, constrained: true)
        }
        var mask: GreyMask
        if let whole = try? CutoutVision.objectMask(image: image, box: box, region: region, object: nil, background: nil,
                                                    workingSide: CutoutVision.workingSide, constrained: true, rectangle: true) {
            if case .success(let m) = found {
                let centre = Point(Double(box.x0 + box.x1) / 2, Double(box.y0 + box.y1) / 2)
                let f = CutoutVision.features(of: [m, whole], image: image, at: centre).map(CutoutVision.orderScore)
                mask = f[1] > f[0] ? whole : m
            } else {
                mask = whole
            }
        } else {
            mask = try found.get()
        }
        return try CutoutVision.matte(image: image, mask: mask,
                                      band: CutoutVision.matteBand(width: image.width, height: image.height,
                                                                   factor: CutoutVision.workingFactor(box: box, image: image)))
    }

    /// Each box of the set (tight and 20% out) read the old way and the
    /// new, side by side (IoU after the matte, CPU seconds), with which
    /// candidate was taken; the means. Only with WOBBLE_BOXFIT_BENCH set
    /// (`Scripts/bench-select.sh` with WOBBLE_SELECT_BOXFIT=1).
    func testBenchmarkTheBoxesBeforeAndAfter() throws {
        let env = ProcessInfo.processInfo.environment
        guard env["WOBBLE_BOXFIT_BENCH"] != nil else { throw XCTSkip("with WOBBLE_BOXFIT_BENCH=1") }
        let only = env["WOBBLE_SELECT_ONLY"].map { $0.split(separator: ",").map(String.init) }
        var sums = [0.0, 0.0, 0.0, 0.0], times = [0.0, 0.0], n = 0.0
        func cpu() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
        for o in try SelectSet.load(only: only, half: env["WOBBLE_BOXFIT_HALF"] != nil) {
            var line = String(format: "bench-boxfit: %-22@", o.label as NSString)
            for (g, grow) in [0.0, 0.2].enumerated() {
                let (box, region) = Self.box(o, grow: grow)
                let t0 = cpu()
                let before = (try? Self.twoReadings(image: o.image, box: box, region: region)).map { CutoutVision.intersectionOverUnion($0, o.truth) } ?? 0
                let t1 = cpu()
                let after = (try? CutoutVision.objectMask(image: o.image, box: box, region: region)).map { CutoutVision.intersectionOverUnion($0, o.truth) } ?? 0
                let t2 = cpu()
                let reading = try? CutoutVision.boxReading(image: o.image, box: box, region: region)
                let how: String
                if let r = reading, let group = r.group {
                    let raw = CutoutVision.intersectionOverUnion(group, o.truth)
                    let refined = r.refinement.map { String(format: "%.3f agrees %.2f", CutoutVision.intersectionOverUnion($0, o.truth),
                                                             CutoutVision.intersectionOverUnion($0, group)) } ?? "none"
                    how = String(format: "group %d %.3f, refined %@", r.chosen, raw, refined)
                } else {
                    how = reading.map { $0.chosen == 0 ? "GrabCut (region)" : "GrabCut (rectangle)" } ?? "none"
                }
                line += String(format: " %@ %.3f -> %.3f (%.2f s -> %.2f s; %@)", g == 0 ? "tight" : "loose", before, after, t1 - t0, t2 - t1, how)
                sums[2 * g] += before; sums[2 * g + 1] += after
                times[0] += t1 - t0; times[1] += t2 - t1
            }
            n += 1
            print(line)
        }
        print(String(format: "bench-boxfit: %.0f objects: tight %.3f -> %.3f, loose %.3f -> %.3f; CPU %.2f s -> %.2f s (%.2fx)",
                     n, sums[0] / n, sums[1] / n, sums[2] / n, sums[3] / n, times[0], times[1], times[1] / max(times[0], 1e-9)))
    }
}

extension BoxFitTests {
    /// The candidates of `"auto"`'s composites (CutoutMatteTests: an object
    /// pasted on a textured photo, boxes 8, 24 and 40 px larger than it)
    /// with their features, IoU and the mask pixels beyond 12 px of the
    /// object: the score's constraint (none may leak). With WOBBLE_BOXFIT_DUMP.
    func testDumpTheCompositesCandidates() throws {
        guard ProcessInfo.processInfo.environment["WOBBLE_BOXFIT_DUMP"] != nil else { throw XCTSkip("with WOBBLE_BOXFIT_DUMP=1") }
        for c in try CutoutMatteTests.cases() {
            let far = CutoutMatteTests.beyond(c, margin: 12)
            for margin in [8, 24, 40] {
                let box = c.box(margin: margin)
                let region = CutoutMatteTests.Composite.rect(box)
                let env = ProcessInfo.processInfo.environment
                let grid = env["WOBBLE_BOXFIT_GRID"].flatMap { Int($0) } ?? CutoutVision.boxGridSide
                let ks = env["WOBBLE_BOXFIT_KS"].map { $0.split(separator: ",").compactMap { Double($0) } } ?? CutoutVision.boxScales
                let found = try CutoutVision.boxCandidates(image: c.image, box: box, region: region, gridSide: grid, ks: ks, refineTop: env["WOBBLE_BOXFIT_REFINE"].flatMap { Int($0) } ?? 0,
                                                           measuresAgreement: true)
                for cand in found.candidates {
                    let m = cand.mask ?? found.frame.mask(cand.inside, width: c.image.width, height: c.image.height, box: box)
                    let leaked = (0 ..< far.count).filter { far[$0] && m.pixels[$0] != 0 }.count
                    let label = "composite/" + c.name.split(separator: " ").joined(separator: "-")
                    print("boxfit-leak: \(label) m\(margin) \(cand.source) \(String(format: "%.4f", CutoutVision.intersectionOverUnion(m, c.truth))) \(leaked) "
                          + cand.features.vector.map { String(format: "%.4f", $0) }.joined(separator: " "))
                }
            }
        }
    }
}
