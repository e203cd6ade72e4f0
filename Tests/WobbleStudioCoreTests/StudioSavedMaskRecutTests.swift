import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// A region whose cutout is a mask the studio saved (`<scene>-masks`),
/// in the studio core on a manual clock: its handles moved, the mask is
/// cleared outside the new curves when the drag ends (before the recut
/// in the background lands) and after it; the save writes the region's
/// one mask file, inside the region, with the saved strokes.
final class StudioSavedMaskRecutTests: StudioCoreTestCase {
    typealias Pic = StudioDeleteRegionTests

    /// The mask's pixels outside `shape` that are not 0, and those inside.
    func split(_ m: GreyMask, _ shape: RegionShape) -> (outside: Int, inside: Int) {
        var out = 0, inside = 0
        for y in 0..<m.height {
            for x in 0..<m.width where m.pixels[y * m.width + x] != 0 {
                if shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)) { inside += 1 } else { out += 1 }
            }
        }
        return (out, inside)
    }

    func testASavedMasksRegionMovedIsClearedOutsideAtOnceAndRecut() throws {
        // The disc painted on the picture, its mask saved with a stroke.
        let img = Pic.discPicture
        let mask = Pic.discMask
        try box.writeImage("img.png", img)
        try FileManager.default.createDirectory(atPath: box.path("s-masks"), withIntermediateDirectories: true)
        try box.writeImage("s-masks/disc.png", mask)
        let strokes = [CutoutStroke(points: [Point(100, 75), Point(104, 75)], radius: 6, object: true)]
        try box.write("s-masks/disc.strokes", CutoutStrokesFile.text(strokes))
        let text = """
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
        prepare()
        touch(100, 75, 112, 75)
        wait(0.5)

        """
        try box.write("s.lua", text)
        let core = startedCore()
        XCTAssertNil(core.session.error.map { "\($0)" })

        // rt dragged left to x 100: a sliver of the disc's right is outside now.
        core.perform(.grab(at: Point(135, 40), radius: 10))
        core.perform(.dragTo(Point(100, 40)))
        core.perform(.dragEnd)
        let moved = try XCTUnwrap(core.session.currentState(.call(0)))
        XCTAssertEqual(moved.points.rt, Point(100, 40))
        guard case .memory(let atOnce)? = moved.parameters.cutout?.source else {
            return XCTFail("the saved mask, cleared outside the region at once: \(String(describing: moved.parameters.cutout?.source))")
        }
        XCTAssertTrue(core.cutouts.isComputing, "the recut runs in the background")
        XCTAssertEqual(atOnce.strokes, strokes, "with the saved strokes")
        let saved = try CutoutTools.readMask(box.path("s-masks/disc.png"), width: Pic.w, height: Pic.h)
        XCTAssertGreaterThan(split(saved, moved.points.shape).outside, 50, "the saved mask reaches past the moved region")
        XCTAssertEqual(split(atOnce.mask, moved.points.shape).outside, 0, "not past the region at the drag's end")
        XCTAssertEqual(atOnce.mask.pixels[75 * Pic.w + 95], 255, "the part inside stays")
        XCTAssertTrue(core.cutouts.waitForJob(upTo: 60))
        settle(core)

        // rb to x 100 too: the region is x 65 to 100, the disc's left half.
        core.perform(.grab(at: Point(135, 110), radius: 10))
        core.perform(.dragTo(Point(100, 110)))
        core.perform(.dragEnd)
        let second = try XCTUnwrap(core.session.currentState(.call(0)))
        guard case .memory(let cleared)? = second.parameters.cutout?.source else { return XCTFail("the cutout, in memory") }
        XCTAssertEqual(split(cleared.mask, second.points.shape).outside, 0, "not past the region at the second drag's end")
        XCTAssertTrue(core.cutouts.waitForJob(upTo: 60))
        settle(core)
        let recut = try XCTUnwrap(core.session.currentState(.call(0)))
        guard case .memory(let m)? = recut.parameters.cutout?.source else { return XCTFail("the recut, in memory") }
        XCTAssertEqual(core.cutouts.jobsRun, 2, "one recut a drag")
        XCTAssertEqual(m.strokes, strokes)
        let parts = split(m.mask, recut.points.shape)
        XCTAssertEqual(parts.outside, 0, "nor after the recut")
        XCTAssertGreaterThan(parts.inside, 500, "the disc's half inside the region")

        core.perform(.save)
        settle(core)
        XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"], "the region's one mask file, replaced")
        let written = try CutoutTools.readMask(box.path("s-masks/disc.png"), width: Pic.w, height: Pic.h)
        XCTAssertEqual(written.pixels, m.mask.pixels)
        XCTAssertEqual(try String(contentsOfFile: box.path("s.lua"), encoding: .utf8),
                       text.replacingOccurrences(of: "w = 70, h = 70", with: "w = 35, h = 70"))
        core.finish()
    }
}
