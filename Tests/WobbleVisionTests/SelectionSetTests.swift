import Foundation
import WobbleCore
@testable import WobbleVision
import XCTest

/// Selection on the hand-masked set (SelectSet): the clicks a person needs.
final class SelectionSetTests: XCTestCase {
    /// The objects the test measures (the benchmark, Scripts/bench-select.sh,
    /// measures all of them): a few of each kind, to keep the test short.
    static let subset = ["astronaut/patch", "camera/camera", "chelsea/left-eye"]

    /// NoC@85 (see `SelectSet`) over the subset: on average at most
    /// `SelectSet.nocThreshold` clicks, and the set's masks are what the
    /// file says (20 objects, none empty).
    func testClicksToReachIoU085OverTheHandMaskedSet() throws {
        let all = try SelectSet.load()
        XCTAssertGreaterThanOrEqual(all.count, 20)
        for o in all { XCTAssertFalse(o.truth.isAllBackground, o.label) }
        // At half size (the test stays short; the benchmark measures full size).
        let objects = try SelectSet.load(only: Self.subset, half: true)
        XCTAssertEqual(objects.count, Self.subset.count)
        var total = 0
        for o in objects {
            let r = try SelectSet.measure(o, maxClicks: 6, box: false)
            print("select \(o.label) (half size): first candidate IoU \(String(format: "%.3f", r.firstIoU)), NoC@85 \(r.clicks), candidates \(String(format: "%.2f", r.candidateSeconds)) s")
            total += r.clicks
        }
        let mean = Double(total) / Double(objects.count)
        print("select: mean NoC@85 \(String(format: "%.2f", mean)) over \(objects.count) objects")
        XCTAssertLessThanOrEqual(mean, SelectSet.nocThreshold)
    }

    /// The order of a click's candidates and a box's two readings, each on
    /// an object of the set (full size) where it decides: the right eye's
    /// first candidate (0.713 when the order was where a candidate came
    /// from; 0.806 with the score) and GrabCut from the helmet's own box
    /// (0.089 with the region's sure background alone: its curves cut the
    /// box's corners; 0.913 with rectangle mode beside it).
    func testTheFirstCandidateAndABoxOnTheObject() throws {
        let eye = try XCTUnwrap(SelectSet.load(only: ["chelsea/right-eye"]).first)
        let truth = eye.truth.pixels.map { $0 > 127 }
        let click = try XCTUnwrap(SelectSet.middle(of: truth, width: eye.image.width, height: eye.image.height))
        let first = try XCTUnwrap(CutoutVision.clickCandidates(image: eye.image, at: click).first)
        let eyeIoU = CutoutVision.intersectionOverUnion(first, eye.truth)
        let helmet = try XCTUnwrap(SelectSet.load(only: ["astronaut/helmet"]).first)
        let b = helmet.truth.objectBox
        let region = SketchPoints(lt: Point(Double(b.x0), Double(b.y0)), rt: Point(Double(b.x1), Double(b.y0)),
                                  rb: Point(Double(b.x1), Double(b.y1)), lb: Point(Double(b.x0), Double(b.y1))).shape
        let boxIoU = CutoutVision.intersectionOverUnion(try CutoutVision.objectMask(image: helmet.image, box: b, region: region), helmet.truth)
        print(String(format: "select: the right eye's first candidate IoU %.3f; the helmet from its box IoU %.3f", eyeIoU, boxIoU))
        XCTAssertGreaterThanOrEqual(eyeIoU, 0.8)
        XCTAssertGreaterThanOrEqual(boxIoU, 0.9)
    }

    /// From a box (`CutoutVision.objectMask`, as `"auto"` reads a region),
    /// the subset's objects at half size: the region's corners on the
    /// object's box and 20% out, the mean IoU (after the matte) at least
    /// what the box read through candidates reaches (`boxMeanThreshold`;
    /// before, GrabCut's two readings: the camera found nothing).
    func testABoxOverTheHandMaskedSet() throws {
        var sum = 0.0, n = 0.0
        for o in try SelectSet.load(only: Self.subset, half: true) {
            let w = o.image.width, h = o.image.height, b = o.truth.objectBox
            for grow in [0.0, 0.2] {
                let dx = Int((grow * Double(b.width)).rounded()), dy = Int((grow * Double(b.height)).rounded())
                let g = PixelRect(x0: max(0, b.x0 - dx), y0: max(0, b.y0 - dy), x1: min(w, b.x1 + dx), y1: min(h, b.y1 + dy))
                let region = SketchPoints(lt: Point(Double(g.x0), Double(g.y0)), rt: Point(Double(g.x1), Double(g.y0)),
                                          rb: Point(Double(g.x1), Double(g.y1)), lb: Point(Double(g.x0), Double(g.y1))).shape
                let iou = (try? CutoutVision.objectMask(image: o.image, box: g, region: region)).map { CutoutVision.intersectionOverUnion($0, o.truth) } ?? 0
                print(String(format: "select: %@ (half size) from its box%@: IoU %.3f", o.label, grow == 0 ? "" : " 20% out", iou))
                sum += iou
                n += 1
            }
        }
        print(String(format: "select: from a box, mean IoU %.3f over %.0f boxes", sum / n, n))
        XCTAssertGreaterThanOrEqual(sum / n, Self.boxMeanThreshold)
    }

    /// The mean box IoU the test above reaches now (0.741: the patch
    /// 0.956 and 0.957, the camera 0.605 and 0.351, the left eye 0.791 and
    /// 0.789), less 0.005; before, GrabCut's two readings: 0.583 (the
    /// camera 0 both ways).
    static let boxMeanThreshold = 0.736

    /// A background click takes back the band it lands on: the helmet's
    /// first candidate (0.745) runs into the white suit above it; with
    /// 6-pixel dots that only took their own pixels it needed 18 clicks,
    /// now `SelectSet.helmetClicks` (full size, as the benchmark).
    func testABackgroundClickTakesBackTheBandItLandsOn() throws {
        let helmet = try XCTUnwrap(SelectSet.load(only: ["astronaut/helmet"]).first)
        let r = try SelectSet.measure(helmet, maxClicks: 20, box: false)
        print(String(format: "select: the helmet's first candidate IoU %.3f, NoC@85 %d", r.firstIoU, r.clicks))
        XCTAssertLessThanOrEqual(r.clicks, SelectSet.helmetClicks)
    }

    /// The whole set, each measure per object and the summary (what
    /// Scripts/bench-select.sh prints); only with WOBBLE_SELECT_BENCH set.
    func testBenchmarkTheWholeSet() throws {
        guard ProcessInfo.processInfo.environment["WOBBLE_SELECT_BENCH"] != nil else {
            throw XCTSkip("the selection benchmark runs with WOBBLE_SELECT_BENCH=1 (Scripts/bench-select.sh)")
        }
        var results: [(String, SelectSet.Result)] = []
        let env = ProcessInfo.processInfo.environment
        let maxClicks = env["WOBBLE_SELECT_MAX_CLICKS"].flatMap { Int($0) } ?? 20
        let only = env["WOBBLE_SELECT_ONLY"].map { $0.split(separator: ",").map(String.init) }
        for o in try SelectSet.load(only: only) {
            let r = try SelectSet.measure(o, maxClicks: maxClicks)
            results.append((o.label, r))
            print(String(format: "bench-select: %-24@ first %.3f (matted %.3f; best %.3f, %d of %d)  NoC@85 %2d  box %.3f  loose box %.3f  candidates %.3f s (CPU %.3f s, studio %.3f s)  a correction %.3f s  digest %016llx",
                         o.label as NSString, r.firstIoU, r.firstMattedIoU, r.bestIoU, r.bestRank, r.count, r.clicks, r.boxIoU, r.looseBoxIoU, r.candidateSeconds,
                         r.candidateCPUSeconds, r.studioSeconds, r.correctionSeconds, r.digest))
        }
        func median(_ v: [Double]) -> Double {
            let s = v.sorted()
            guard !s.isEmpty else { return 0 }
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        let n = Double(results.count)
        print(String(format: "bench-select: %d objects: first-candidate IoU median %.3f mean %.3f (matted, as the studio and `cutout --at` give it: median %.3f mean %.3f); NoC@85 mean %.2f (beyond %d clicks counted as %d); box IoU mean %.3f, loose %.3f; candidates median %.3f s (CPU %.3f s, studio %.3f s); a correction median %.3f s",
                     results.count, median(results.map(\.1.firstIoU)), results.map(\.1.firstIoU).reduce(0, +) / n,
                     median(results.map(\.1.firstMattedIoU)), results.map(\.1.firstMattedIoU).reduce(0, +) / n,
                     Double(results.map(\.1.clicks).reduce(0, +)) / n, maxClicks, maxClicks + 1, results.map(\.1.boxIoU).reduce(0, +) / n, results.map(\.1.looseBoxIoU).reduce(0, +) / n,
                     median(results.map(\.1.candidateSeconds)), median(results.map(\.1.candidateCPUSeconds)), median(results.map(\.1.studioSeconds)), median(results.map(\.1.correctionSeconds).filter { $0 > 0 })))
    }

    /// Why a box falls short: each object's box read by GrabCut several
    /// ways (IoU before the matte; "none" where it finds no object): ours
    /// (the region's sure background, `region`; rectangle mode cut to the
    /// piece under the centre, `rect`) and plain rectangle mode (the whole
    /// box probably object, nothing cleared after) at the working size of
    /// 256 pixels, 512 and full size; the corners on the box and 20% out.
    /// Only with WOBBLE_SELECT_BOXES set (`WOBBLE_SELECT_BOXES=1
    /// Scripts/bench-select.sh`).
    func testBenchmarkTheBoxReadings() throws {
        guard ProcessInfo.processInfo.environment["WOBBLE_SELECT_BOXES"] != nil else {
            throw XCTSkip("the box readings run with WOBBLE_SELECT_BOXES=1 (Scripts/bench-select.sh)")
        }
        let only = ProcessInfo.processInfo.environment["WOBBLE_SELECT_ONLY"].map { $0.split(separator: ",").map(String.init) }
        let readings = [("region", true, false, 256), ("rect", true, true, 256), ("plain", false, true, 256),
                        ("plain-512", false, true, 512), ("plain-full", false, true, Int.max / 4)]
        var sums = [Double](repeating: 0, count: 2 * readings.count), n = 0
        for o in try SelectSet.load(only: only) {
            let w = o.image.width, h = o.image.height, b = o.truth.objectBox
            var line = String(format: "bench-select: box %-24@", o.label as NSString)
            for (g, grow) in [0.0, 0.2].enumerated() {
                let dx = Int((grow * Double(b.width)).rounded()), dy = Int((grow * Double(b.height)).rounded())
                let box = PixelRect(x0: max(0, b.x0 - dx), y0: max(0, b.y0 - dy), x1: min(w, b.x1 + dx), y1: min(h, b.y1 + dy))
                let region = SketchPoints(lt: Point(Double(box.x0), Double(box.y0)), rt: Point(Double(box.x1), Double(box.y0)),
                                          rb: Point(Double(box.x1), Double(box.y1)), lb: Point(Double(box.x0), Double(box.y1))).shape
                for (k, (name, constrained, rectangle, side)) in readings.enumerated() {
                    let m = try? CutoutVision.objectMask(image: o.image, box: box, region: region, object: nil, background: nil,
                                                         workingSide: side, constrained: constrained, rectangle: rectangle)
                    let iou = m.map { CutoutVision.intersectionOverUnion($0, o.truth) }
                    sums[g * readings.count + k] += iou ?? 0
                    line += " \(g == 0 ? "" : "loose-")\(name) " + (iou.map { String(format: "%.3f", $0) } ?? "none")
                }
            }
            n += 1
            print(line)
        }
        print("bench-select: box readings, means over \(n): " + sums.enumerated().map { k, v in
            "\(k < readings.count ? "" : "loose-")\(readings[k % readings.count].0) \(String(format: "%.3f", v / Double(max(n, 1))))"
        }.joined(separator: " "))
    }
}
