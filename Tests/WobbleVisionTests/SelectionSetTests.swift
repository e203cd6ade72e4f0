import Foundation
import WobbleCore
import WobbleVision
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
            print(String(format: "bench-select: %-24@ first %.3f (best %.3f, %d of %d)  NoC@85 %2d  box %.3f  loose box %.3f  candidates %.3f s",
                         o.label as NSString, r.firstIoU, r.bestIoU, r.bestRank, r.count, r.clicks, r.boxIoU, r.looseBoxIoU, r.candidateSeconds))
        }
        func median(_ v: [Double]) -> Double {
            let s = v.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        let n = Double(results.count)
        print(String(format: "bench-select: %d objects: first-candidate IoU median %.3f mean %.3f; NoC@85 mean %.2f (beyond %d clicks counted as %d); box IoU mean %.3f, loose %.3f; candidates median %.3f s",
                     results.count, median(results.map(\.1.firstIoU)), results.map(\.1.firstIoU).reduce(0, +) / n,
                     Double(results.map(\.1.clicks).reduce(0, +)) / n, maxClicks, maxClicks + 1, results.map(\.1.boxIoU).reduce(0, +) / n, results.map(\.1.looseBoxIoU).reduce(0, +) / n,
                     median(results.map(\.1.candidateSeconds))))
    }
}
