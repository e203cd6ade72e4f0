import WobbleCore
@testable import WobbleRender
import XCTest

/// The GLES backend starts EGL at the first frame that moves
/// (`DeferredGLESRenderer`): the still image it makes without a shader is
/// the GLES copy pass's byte for byte, and frames are the always-started
/// renderer's.
final class DeferredGLESTests: XCTestCase {
    /// The (area-averaged) image is what the GLES copy pass draws as the
    /// still, for the image's size and smaller outputs on either or both
    /// axes, odd sizes, one pixel, over transparent pixels (whose colour
    /// is kept) and partial alpha.
    func testTheStillWithoutAShaderIsTheGLESStill() throws {
        for (w, h, seed) in [(64, 48, UInt64(1)), (61, 47, 2), (101, 75, 3), (37, 91, 4)] {
            let src = testImage(width: w, height: h, seed: seed)
            let sizes = [(w, h), (w / 2, h / 2), (w * 2 / 3 + 1, h / 3), (w, h / 2), (w / 3, h), (w - 1, h - 1), (7, 5), (1, 1)]
            for (ow, oh) in sizes {
                let what = "\(w)x\(h) to \(ow)x\(oh)"
                let m = OutputMapping(sourceWidth: w, sourceHeight: h, outputWidth: ow, outputHeight: oh)
                XCTAssertTrue(DeferredGLESRenderer.stillNeedsNoShader(m), what)
                let shader = try makeGLES(src, outputWidth: ow, outputHeight: oh).render(frameState([]))
                let deferred = try DeferredGLESRenderer(source: src, outputWidth: ow, outputHeight: oh)
                let still = try deferred.render(frameState([]))
                XCTAssertNil(deferred.started, "\(what): nothing moved, no context")
                XCTAssertTrue(still == shader, "\(what): \(ImageDifference(still, shader))")
            }
        }
    }

    /// A larger output's still is a bilinear enlargement, a GLES pass: the
    /// context starts with the renderer.
    func testAnEnlargedOutputStartsAtOnce() throws {
        let src = testImage(width: 40, height: 30)
        for (ow, oh) in [(80, 60), (41, 30), (40, 31), (20, 45)] {
            let m = OutputMapping(sourceWidth: 40, sourceHeight: 30, outputWidth: ow, outputHeight: oh)
            XCTAssertFalse(DeferredGLESRenderer.stillNeedsNoShader(m), "\(ow)x\(oh)")
            let deferred = try DeferredGLESRenderer(source: src, outputWidth: ow, outputHeight: oh)
            XCTAssertNotNil(deferred.started, "\(ow)x\(oh)")
            let frame = try deferred.render(frameState([]))
            XCTAssertTrue(frame == (try makeGLES(src, outputWidth: ow, outputHeight: oh).render(frameState([]))), "\(ow)x\(oh)")
        }
    }

    /// Frames where nothing moves, or a region has no swing or no peak,
    /// start nothing; the first frame that moves starts the context, and
    /// every frame, region-only or whole, is the always-started renderer's.
    func testStartsAtTheFirstFrameThatMoves() throws {
        for (ow, oh) in [(64, 48), (40, 30)] {
            let src = testImage(width: 64, height: 48, seed: 9)
            let deferred = try DeferredGLESRenderer(source: src, outputWidth: ow, outputHeight: oh)
            let eager = try makeGLES(src, outputWidth: ow, outputHeight: oh)
            let frames = RegionFrames(renderer: deferred, wholeFrames: false)
            let shape = rect(8, 10, 22, 18)
            let kick = RegionFrame(shape: shape, peak: 4, direction: Point(0.6, 0.8), swing: 0.7)
            var noSwing = kick, noPeak = kick
            noSwing.swing = 0
            noPeak.peak = 0
            let states = [frameState([], index: 0), frameState([noSwing], index: 1), frameState([noPeak], index: 2),
                          frameState([kick], index: 3), frameState([], index: 4)]
            for (k, s) in states.enumerated() {
                let f = try frames.next(s)
                XCTAssertEqual(deferred.started == nil, k < 3, "\(ow)x\(oh) frame \(k)")
                let expected = try eager.render(s)
                XCTAssertTrue(f.image == expected, "\(ow)x\(oh) frame \(k): \(ImageDifference(f.image, expected))")
                XCTAssertTrue((try deferred.render(s)) == expected, "\(ow)x\(oh) frame \(k), whole")
            }
            // The still was never read back from the GL: only frame 3's
            // boxes (frames 1 and 2 copied the still into theirs, frame 4
            // has none) and the whole frames 3 and 4 asked for above.
            let gles = try XCTUnwrap(deferred.started)
            let boxes = FrameDamage.boxes(states[3], mapping: deferred.mapping)
            XCTAssertFalse(boxes.isEmpty)
            XCTAssertEqual(gles.bytesReadBack, boxes.reduce(0) { $0 + $1.area * 4 } + 2 * ow * oh * 4)
        }
    }
}
