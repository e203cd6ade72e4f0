import WobbleCore
@testable import WobbleRender
import XCTest

/// Region-only frames (`RegionFrames`): each frame rendered, read back and
/// handed on only where regions move, composited onto the still frame, is
/// byte for byte the whole-frame render, on both backends; the boxes it
/// hands on hold every pixel that changed since the frame before.
final class RegionFramesTests: XCTestCase {
    let source = testImage(width: 64, height: 48, seed: 7)

    /// A clip of 14 frames: `a` moves in frames 2–7, `b` (overlapping `a`'s
    /// box) in 4–10, `edge` (over the image's top-left corner: mirror
    /// sampling reads outside its box) in 6–12 on a transparent-edged image;
    /// nothing moves in frames 0–1 and 13. Kicks go in different directions
    /// with growing then falling peaks.
    func clip(overlap: OverlapMode = .sum, edges: EdgeMode = .mirror, overlay: Bool = false) -> [FrameState] {
        let a = rect(8, 10, 22, 18), b = rect(22, 16, 26, 20, center: Point(34, 27))
        let edge = RegionShape(lt: Point(-6, -4), rt: Point(18, -2), rb: Point(20, 16), lb: Point(-4, 14), center: Point(6, 5))
        let right = rect(46, 4, 18, 14)   // at the right edge, into the transparent patch
        let schedule: [(RegionShape, ClosedRange<Int>, Point)] = [(a, 2...7, Point(1, 0.3)), (b, 4...10, Point(-0.4, 1)),
                                                                  (edge, 6...12, Point(-1, -0.6)), (right, 9...11, Point(1, 0))]
        return (0 ..< 14).map { k in
            var regions: [RegionFrame] = []
            for (shape, frames, direction) in schedule where frames.contains(k) {
                let progress = Double(k - frames.lowerBound + 1) / Double(frames.count + 1)
                regions.append(RegionFrame(shape: shape, direction: direction / direction.length,
                                           peak: 2 + 5 * sin(progress * .pi), progress: sin(progress * 2 * .pi) * 0.9 + 0.05))
            }
            var s = frameState(regions, index: k, time: Double(k) / 30, overlap: overlap, edges: edges)
            if overlay {
                s.overlayOn = true
                s.overlay = [a]
                // A live model appears in frame 5 and goes in frame 9: the overlay changes then.
                if (5...8).contains(k) { s.overlayModels = [OverlayModel(shape: b, index: 1, line: 3)] }
            }
            return s
        }
    }

    /// Renders `states` whole and region-only with fresh renderers from
    /// `make`, asserting equal bytes, and that outside the handed-on boxes
    /// each frame equals the one before. Returns the region-only run.
    @discardableResult
    func assertSame(_ states: [FrameState], _ what: String, make: () throws -> FrameRenderer,
                    file: StaticString = #filePath, line: UInt = #line) throws -> (frames: RegionFrames, changed: [[PixelRect]?]) {
        let whole = RegionFrames(renderer: try make(), wholeFrames: true)
        let regions = RegionFrames(renderer: try make(), wholeFrames: false)
        var previous: RGBAImage?
        var changedLists: [[PixelRect]?] = []
        for s in states {
            let w = try whole.next(s), r = try regions.next(s)
            XCTAssertNil(w.changed, "\(what): a whole frame hands on no boxes", file: file, line: line)
            XCTAssertTrue(w.image == r.image, "\(what) frame \(s.index): region-only differs from the whole frame: "
                          + "\(ImageDifference(w.image, r.image))", file: file, line: line)
            if let previous, let changed = r.changed {
                var outside = previous
                for b in changed { outside.copy(b, from: r.image) }
                XCTAssertTrue(outside == r.image, "\(what) frame \(s.index): a pixel changed outside \(changed)", file: file, line: line)
            }
            changedLists.append(r.changed)
            previous = r.image
        }
        return (regions, changedLists)
    }

    func testCPURegionOnlyIsTheWholeFrameAndRestingRegionsCostNothing() throws {
        let states = clip()
        let run = try assertSame(states, "cpu") { CPURenderer(source: source) }
        XCTAssertNil(run.changed[0], "the first frame comes whole")
        XCTAssertTrue(run.changed.dropFirst().allSatisfy { $0 != nil }, "every later frame comes as boxes")
        // Nothing moves in frames 0-1: no box; frame 13: the boxes of frame 12 go back to the still.
        XCTAssertEqual(run.changed[1], [])
        XCTAssertEqual(run.changed[13]?.isEmpty, false)
        // Only the moving boxes were rendered: far fewer pixels than 14 whole frames.
        XCTAssertGreaterThan(run.frames.pixelsRendered, 0)
        XCTAssertLessThan(run.frames.pixelsRendered, 14 * 64 * 48 / 2)
        try assertSame(clip(overlap: .first, edges: .clamp), "cpu first/clamp") { CPURenderer(source: source) }
    }

    /// The CPU backend draws over the boxes that keep moving (they are not
    /// first restored from the still image): its region-only frames are
    /// still the whole frames, at the image's size and smaller.
    func testFastCPURegionOnlyIsTheWholeFrame() throws {
        let src = source
        try assertSame(clip(), "fast cpu") { FastCPURenderer(source: src) }
        try assertSame(clip(overlap: .first, edges: .clamp), "fast cpu first/clamp") { FastCPURenderer(source: src) }
        try assertSame(clip(overlay: true), "fast cpu overlay") { FastCPURenderer(source: src) }
        try assertSame(clip(), "fast cpu 23x17") { FastCPURenderer(source: src, outputWidth: 23, outputHeight: 17) }
    }

    /// What goes back to the still image: a kept box less this frame's
    /// boxes, every pixel once.
    func testOutsideTheNewBoxes() {
        let r = PixelRect(x0: 0, y0: 0, x1: 10, y1: 8)
        func pixels(_ rects: [PixelRect]) -> [Int] {
            rects.flatMap { b in (b.y0 ..< b.y1).flatMap { y in (b.x0 ..< b.x1).map { y * 100 + $0 } } }.sorted()
        }
        XCTAssertEqual(RegionFrames.outside(r, [r]), [], "the same box: nothing to restore")
        XCTAssertEqual(RegionFrames.outside(r, [PixelRect(x0: -2, y0: -1, x1: 12, y1: 9)]), [])
        XCTAssertEqual(RegionFrames.outside(r, []), [r])
        XCTAssertEqual(RegionFrames.outside(r, [PixelRect(x0: 10, y0: 0, x1: 20, y1: 8)]), [r], "touching is not covering")
        let cuts = [[PixelRect(x0: 3, y0: 2, x1: 6, y1: 5)], [PixelRect(x0: -5, y0: 4, x1: 4, y1: 20)],
                    [PixelRect(x0: 2, y0: -3, x1: 8, y1: 3), PixelRect(x0: 5, y0: 1, x1: 15, y1: 6)], [PixelRect(x0: 4, y0: 4, x1: 4, y1: 9)]]
        for boxes in cuts {
            let parts = RegionFrames.outside(r, boxes)
            let expected = pixels([r]).filter { p in !boxes.contains { b in (b.x0 ..< b.x1).contains(p % 100) && (b.y0 ..< b.y1).contains(p / 100) } }
            XCTAssertEqual(pixels(parts), expected, "\(boxes)")
        }
    }

    func testCPUDownscaledAndEnlarged() throws {
        // --width: the boxes grow by the area filter's footprint.
        try assertSame(clip(), "cpu 40x30") { CPURenderer(source: source, outputWidth: 40, outputHeight: 30) }
        try assertSame(clip(), "cpu 23x17") { CPURenderer(source: source, outputWidth: 23, outputHeight: 17) }
        try assertSame(clip(overlap: .first), "cpu 96x72") { CPURenderer(source: source, outputWidth: 96, outputHeight: 72) }
    }

    func testGLESRegionOnlyIsTheWholeFrame() throws {
        let src = source
        let run = try assertSame(clip(), "gles") { try makeGLES(src) }
        XCTAssertEqual(run.changed[0], nil)
        XCTAssertEqual(run.changed[1], [])
        // Read back: only the boxes (whole frames read everything).
        let gles = try XCTUnwrap(run.frames.renderer as? GLESRenderer)
        XCTAssertEqual(gles.bytesReadBack, 64 * 48 * 4 + run.frames.pixelsRendered * 4, "the still once, then the boxes")
        try assertSame(clip(overlap: .first, edges: .clamp), "gles first/clamp") { try makeGLES(src) }
    }

    func testGLESDownscaled() throws {
        let src = source
        try assertSame(clip(), "gles 40x30") { try makeGLES(src, outputWidth: 40, outputHeight: 30) }
        try assertSame(clip(overlap: .first), "gles 23x17") { try makeGLES(src, outputWidth: 23, outputHeight: 17) }
    }

    func testOverlayOnBothBackends() throws {
        let src = source
        for (name, make) in [("cpu", { CPURenderer(source: src) as FrameRenderer }), ("gles", { try makeGLES(src) as FrameRenderer })] {
            let run = try assertSame(clip(overlay: true), "\(name) overlay", make: make)
            // The model appears in frame 5 and goes in frame 9: those frames come whole.
            XCTAssertNil(run.changed[5], name)
            XCTAssertNil(run.changed[9], name)
            XCTAssertNotNil(run.changed[6], name)
        }
    }

    func testMergedBoxes() {
        let a = PixelRect(x0: 0, y0: 0, x1: 10, y1: 10), b = PixelRect(x0: 5, y0: 5, x1: 20, y1: 12)
        let c = PixelRect(x0: 30, y0: 0, x1: 40, y1: 4), d = PixelRect(x0: 18, y0: 2, x1: 32, y1: 3)
        // a and b overlap; d joins their union to c.
        XCTAssertEqual(PixelRect.merged([a, c]), [a, c])
        XCTAssertEqual(PixelRect.merged([a, b, c]), [PixelRect(x0: 0, y0: 0, x1: 20, y1: 12), c])
        XCTAssertEqual(PixelRect.merged([c, a, b, d]), [PixelRect(x0: 0, y0: 0, x1: 40, y1: 12)])
        XCTAssertEqual(PixelRect.merged([PixelRect(x0: 3, y0: 3, x1: 3, y1: 9)]), [], "empty boxes go")
        // Touching is not overlapping.
        XCTAssertEqual(PixelRect.merged([a, PixelRect(x0: 10, y0: 0, x1: 12, y1: 10)]).count, 2)
    }

    func testDamageBoxes() {
        let m = OutputMapping(sourceWidth: 64, sourceHeight: 48, outputWidth: 64, outputHeight: 48)
        let s = frameState([RegionFrame(shape: rect(8, 10, 22, 18), direction: Point(1, 0), peak: 3, progress: 0.5),
                            RegionFrame(shape: rect(20, 14, 8, 10), direction: Point(1, 0), peak: 3, progress: 0.5)])
        // The bbox [8, 30] x [10, 28], bounded as both renderers bound it
        // (a pixel more on each side than the centres inside): columns
        // 7...30, rows 9...28; the second region lies inside.
        XCTAssertEqual(FrameDamage.boxes(s, mapping: m), [PixelRect(x0: 7, y0: 9, x1: 31, y1: 29)])
        // Off the image: clipped to it.
        let off = frameState([RegionFrame(shape: rect(-10, -10, 14, 12), direction: Point(1, 0), peak: 3, progress: 0.5)])
        XCTAssertEqual(FrameDamage.boxes(off, mapping: m), [PixelRect(x0: 0, y0: 0, x1: 5, y1: 3)])
        // Half size: image columns 7...30 lie in the footprints of output
        // columns 3...15, rows 9...28 in those of rows 4...14.
        let half = OutputMapping(sourceWidth: 64, sourceHeight: 48, outputWidth: 32, outputHeight: 24)
        XCTAssertEqual(FrameDamage.boxes(frameState([s.regions[0]]), mapping: half), [PixelRect(x0: 3, y0: 4, x1: 16, y1: 15)])
        XCTAssertEqual(FrameDamage.boxes(frameState([]), mapping: m), [])
    }
}
