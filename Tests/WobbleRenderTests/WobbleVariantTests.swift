import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// `Shaders/wobble.frag` is compiled per set of switches a draw needs
/// (`WobbleVariant`): its frames must be byte for byte those of the shader
/// that tests the overlay and mirror switches per fragment and never skips
/// the mirroring and clamping (`fixedSwitches` off), over regions inside the
/// image (the interior variant) and at its edges, pinned, overlapping
/// (summed and first-wins), clamped and mirrored, downscaled and upscaled, on a source
/// with transparency and on an opaque one (the opaque variant).
final class WobbleVariantTests: XCTestCase {
    func testVariantsDrawTheSameBytesAsTheUniformSwitches() throws {
        // Transparent and partly transparent pixels (testImage has both).
        let transparent = testImage(width: 96, height: 64, seed: 7)
        var opaque = transparent
        for i in stride(from: 3, to: opaque.pixels.count, by: 4) { opaque.pixels[i] = 255 }
        let inside = rect(30, 20, 28, 22), edge = RegionShape(lt: Point(-8, -6), rt: Point(40, -4), rb: Point(44, 36),
                                                             lb: Point(-4, 34), center: Point(18, 14))
        let right = rect(60, 24, 30, 34), meets = rect(48, 30, 24, 20)
        var frames: [FrameState] = []
        for (k, t) in [0.1, 0.25, 0.5, 0.85].enumerated() {
            let swing = [0.9, -0.7, 0.4, -1][k]
            for edges in [EdgeMode.mirror, .clamp] {
                frames.append(frameState([regionFrame(inside, direction: Point(1, 0.6), amplitude: 2, t: t),
                                          regionFrame(edge, direction: Point(-1, -1), amplitude: 3, t: t)],
                                         overlap: .first, edges: edges))
                frames.append(frameState([RegionFrame(shape: inside, peak: 4, direction: Point(0, 1), swing: swing, pin: .bottom),
                                          RegionFrame(shape: edge, peak: 5, direction: Point(-0.6, -0.8), swing: swing, pin: .left)],
                                         overlap: .first, edges: edges))
                for overlap in [OverlapMode.sum, .first] {
                    frames.append(frameState([regionFrame(right, direction: Point(1, 1), amplitude: 2, t: t),
                                              regionFrame(meets, direction: Point(-1, 0.3), amplitude: 2, t: t)],
                                             overlap: overlap, edges: edges))
                }
            }
        }
        XCTAssertEqual(frames.filter { !$0.regions.isEmpty }.count, frames.count)
        for (source, (w, h)) in [transparent, opaque].flatMap({ s in [(96, 64), (41, 29), (130, 87)].map { (s, $0) } }) {
            let isOpaque = source == opaque
            let fixed = try makeGLES(source, outputWidth: w, outputHeight: h)
            let uniform = try makeGLES(source, outputWidth: w, outputHeight: h)
            uniform.fixedSwitches = false
            var moved = 0
            for (n, frame) in frames.enumerated() {
                let a = try fixed.render(frame), b = try uniform.render(frame)
                XCTAssertEqual(a, b, "\(w)x\(h) frame \(n)")
                if a != (try fixed.render(frameState([]))) { moved += 1 }
            }
            XCTAssertEqual(moved, frames.count, "\(w)x\(h): every frame moves something")
            // Both kinds of draw happened: inside (interior) and at the edge,
            // pinned and not, and the sum's offset pass.
            let drawn = (fixed.full ?? fixed.gl).compiledVariants
            XCTAssertTrue(drawn.contains { $0.interior && !$0.pinned }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue(drawn.contains { $0.interior && $0.pinned }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue(drawn.contains { !$0.interior && !$0.offsetOnly && $0.mirror }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue(drawn.contains { !$0.interior && !$0.offsetOnly && !$0.mirror }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue(drawn.contains { $0.offsetOnly }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue(drawn.allSatisfy { $0.opaque == (isOpaque && !$0.offsetOnly) }, "\(w)x\(h): \(drawn)")
            XCTAssertTrue((uniform.full ?? uniform.gl).compiledVariants.allSatisfy { $0.uniforms && !$0.interior && !$0.opaque })
        }
    }

    func testInteriorNeedsTwoTexelsOfMarginBeyondTheLargestOffset() {
        let m = OutputMapping(sourceWidth: 100, sourceHeight: 80, outputWidth: 100, outputHeight: 80)
        let texels = (width: 100, height: 80)
        // Pixel centres 10.5 ... 29.5: an offset of up to 5 (reach
        // 5 · 1.001 + 1) gets to 4.495, inside; 9 (reach 10.009) to 0.491,
        // not.
        let box = PixelRect(x0: 10, y0: 30, x1: 30, y1: 50)
        XCTAssertTrue(Resources.samplesInside(box, peak: 5, swing: 1, pinned: false, mapping: m, texels: texels))
        XCTAssertTrue(Resources.samplesInside(box, peak: 10, swing: -0.5, pinned: false, mapping: m, texels: texels))
        XCTAssertFalse(Resources.samplesInside(box, peak: 10, swing: 0.9, pinned: false, mapping: m, texels: texels))
        // The pinned profile reaches up to M / 0.32768.
        XCTAssertTrue(Resources.samplesInside(box, peak: 2, swing: 1, pinned: true, mapping: m, texels: texels))
        XCTAssertFalse(Resources.samplesInside(box, peak: 3, swing: 1, pinned: true, mapping: m, texels: texels))
        // The far edges: pixel 95's centre 95.5 + 1.4 ≤ 98, pixel 97's
        // 97.5 + 1.4 > 98.
        XCTAssertTrue(Resources.samplesInside(PixelRect(x0: 50, y0: 30, x1: 96, y1: 50), peak: 0.4, swing: 1, pinned: false,
                                              mapping: m, texels: texels))
        XCTAssertFalse(Resources.samplesInside(PixelRect(x0: 50, y0: 30, x1: 98, y1: 50), peak: 0.4, swing: 1, pinned: false,
                                               mapping: m, texels: texels))
        XCTAssertFalse(Resources.samplesInside(PixelRect(x0: 20, y0: 70, x1: 40, y1: 79), peak: 0.4, swing: 1, pinned: false,
                                               mapping: m, texels: texels))
        // A smaller source texture (a downscaled output) scales positions.
        let half = OutputMapping(sourceWidth: 100, sourceHeight: 80, outputWidth: 50, outputHeight: 40)
        XCTAssertTrue(Resources.samplesInside(PixelRect(x0: 5, y0: 5, x1: 20, y1: 20), peak: 2, swing: 1, pinned: false,
                                              mapping: half, texels: (50, 40)))
        XCTAssertFalse(Resources.samplesInside(PixelRect(x0: 1, y0: 5, x1: 20, y1: 20), peak: 2, swing: 1, pinned: false,
                                               mapping: half, texels: (50, 40)))
        // No reach can be trusted when it is not finite.
        XCTAssertFalse(Resources.samplesInside(box, peak: .infinity, swing: 1, pinned: false, mapping: m, texels: texels))
        XCTAssertFalse(Resources.samplesInside(box, peak: .nan, swing: 1, pinned: false, mapping: m, texels: texels))
    }

    func testDefinesGoRightAfterTheVersionLine() {
        XCTAssertEqual(GLProgram.defining([("A", 1), ("B", 0)], in: "#version 300 es\nprecision highp float;\nvoid main() {}"),
                       "#version 300 es\n#define A 1\n#define B 0\nprecision highp float;\nvoid main() {}")
        XCTAssertEqual(GLProgram.defining([], in: "#version 300 es\nx"), "#version 300 es\nx")
    }
}
