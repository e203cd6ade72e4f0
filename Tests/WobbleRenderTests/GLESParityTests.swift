import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// The GLES renderer against the CPU reference: the same FrameStates through
/// both, at most 0.1% of channel values more than 2 apart and none more
/// than 8.
final class GLESParityTests: XCTestCase {
    /// Renders every frame with both backends and checks the tolerance.
    private func assertParity(source: RGBAImage, frames: [FrameState], outputWidth: Int? = nil, outputHeight: Int? = nil,
                              label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let gles = try makeGLES(source, outputWidth: outputWidth, outputHeight: outputHeight)
        let cpu = CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        XCTAssertEqual(gles.outputWidth, cpu.outputWidth, file: file, line: line)
        XCTAssertEqual(gles.outputHeight, cpu.outputHeight, file: file, line: line)
        let still = try cpu.render(frameState([]))
        for (n, frame) in frames.enumerated() {
            let g = try gles.render(frame)
            let c = try cpu.render(frame)
            let diff = ImageDifference(g, c)
            let moved = ImageDifference(c, still).channels - ImageDifference(c, still).within2
            print("parity \(label) frame \(n) (\(frame.regions.count) regions, \(g.width)x\(g.height)): \(diff); "
                  + "\(moved) channels moved by the wobble")
            XCTAssertGreaterThanOrEqual(diff.fractionWithin2, 0.999, "\(label) frame \(n): \(diff)", file: file, line: line)
            XCTAssertEqual(diff.over8, 0, "\(label) frame \(n): \(diff)", file: file, line: line)
            if n == 0 {
                dumpPNG(g, name: "\(label)-gles")
                dumpPNG(c, name: "\(label)-cpu")
                dumpPNG(still, name: "\(label)-still")
            }
        }
    }

    func testStillFrameIsTheSourceExactly() throws {
        let source = testImage(width: 64, height: 48)
        let gles = try makeGLES(source)
        let out = try gles.render(frameState([]))
        XCTAssertEqual(out, source)
        XCTAssertEqual(try gles.renderStill(), source)
    }

    func testOneRegionThroughACycle() throws {
        let source = testImage(width: 64, height: 48)
        let shape = rect(12, 8, 36, 30)
        // Times at and around the cycle boundaries (D = 1.2 s): τ = 0, D/2, D.
        let times = [0.0, 1e-9, 0.01, 0.15, 0.3, 0.45, 0.5999999, 0.6, 0.6000001, 0.9, 1.1999999, 1.2, 1.2000001, 1.5, 2.4, 3.0]
        let frames = times.map { frameState([regionFrame(shape, direction: Point(1, 0.4), t: $0)], time: $0) }
        XCTAssertGreaterThan(frames.filter { !$0.regions.isEmpty }.count, 10)
        try assertParity(source: source, frames: frames, label: "one-region")
    }

    func testShapesOverlapAndManyRegionsOnANonSquareImage() throws {
        let source = testImage(width: 80, height: 44, seed: 7)
        let skewed = RegionShape(lt: Point(5.3, 4.1), rt: Point(38.7, 7.9), rb: Point(35.2, 37.4), lb: Point(2.6, 30.8),
                                 center: Point(21, 20))
        let diamond = RegionShape(lt: Point(40, 2), rt: Point(62, 22), rb: Point(40, 42), lb: Point(18, 22),
                                  center: Point(40, 22))
        let offCenter = rect(30, 10, 40, 28, center: Point(58.5, 16.5))   // centre on a pixel centre
        let tall = rect(60, 0, 18, 44)
        let small = rect(10, 20, 12, 10)
        let tiny = rect(70.2, 30.1, 6, 5)
        let wide = rect(0, 30, 80, 14)
        let shapes = [skewed, diamond, offCenter, tall, small, tiny, wide]
        XCTAssertTrue(shapes.allSatisfy(\.canMove))
        let directions = [Point(1, 0), Point(0, 1), Point(-1, 1), Point(0.3, -1), Point(1, 1), Point(-1, 0), Point(1, -0.2)]
        var frames: [FrameState] = []
        for t in [0.1, 0.33, 0.7, 1.0, 1.25] {
            let regions = shapes.enumerated().map { k, s in
                regionFrame(s, direction: directions[k], amplitude: 1 + Double(k) * 0.3, t0: -Double(k) * 0.05, t: t)
            }
            frames.append(frameState(regions, time: t))
        }
        XCTAssertEqual(frames[0].regions.count, 7)
        try assertParity(source: source, frames: frames, label: "overlap")
    }

    func testOutputScaling() throws {
        let source = testImage(width: 64, height: 48, seed: 3)
        let shapes = [rect(8, 6, 30, 26), RegionShape(lt: Point(30, 10), rt: Point(60, 14), rb: Point(56, 44), lb: Point(28, 40),
                                                      center: Point(44, 27))]
        let frames = [0.2, 0.45, 0.8].map { t in
            frameState([regionFrame(shapes[0], direction: Point(1, 1), t: t),
                        regionFrame(shapes[1], direction: Point(-1, 0.5), amplitude: 2, t: t)], time: t)
        }
        try assertParity(source: source, frames: frames + [frameState([])], outputWidth: 96, outputHeight: 30, label: "scale-up")
        try assertParity(source: source, frames: frames, outputWidth: 40, outputHeight: 60, label: "scale-down")
    }

    func testRegionReachingTheImageEdge() throws {
        // Offsets that sample outside the image clamp to the edge.
        let source = testImage(width: 48, height: 32, seed: 5)
        let shape = RegionShape(lt: Point(-10, -6), rt: Point(30, -2), rb: Point(36, 40), lb: Point(-4, 38), center: Point(10, 16))
        let frames = [0.15, 0.3, 0.9].map { frameState([regionFrame(shape, direction: Point(-1, -1), amplitude: 3, t: $0)]) }
        try assertParity(source: source, frames: frames, label: "edge")
    }

    func testDegenerateRegionDrawsNothing() throws {
        // FrameState never holds such regions; the renderer still copes.
        let source = testImage(width: 32, height: 24)
        let flat = RegionShape(lt: Point(4, 4), rt: Point(20, 4), rb: Point(20, 4), lb: Point(4, 4), center: Point(12, 4))
        XCTAssertFalse(flat.canMove)
        let gles = try makeGLES(source)
        let frame = frameState([RegionFrame(shape: flat, direction: Point(1, 0), peak: 3, progress: 0.5)])
        XCTAssertEqual(try gles.render(frame), source)
    }

    func testDisplacementFieldMatchesTheReferenceExactly() {
        let shape = rect(3.5, 2.5, 20, 14, center: Point(10.5, 8.5))
        let mapping = OutputMapping(sourceWidth: 32, sourceHeight: 24, outputWidth: 32, outputHeight: 24)
        let field = DisplacementField(shape: shape, peak: 2.4, mapping: mapping)
        XCTAssertFalse(field.isEmpty)
        for j in 0 ..< 24 {
            for i in 0 ..< 32 {
                let m = shape.displacement(at: mapping.sourcePoint(i, j), peak: 2.4)
                let inBox = i >= field.x0 && i < field.x0 + field.width && j >= field.y0 && j < field.y0 + field.height
                let f = inBox ? field.values[(j - field.y0) * field.width + (i - field.x0)] : 0
                XCTAssertEqual(f != 0, m > 0, "pixel \(i),\(j)")
                XCTAssertEqual(Double(f), m, accuracy: 1e-5)
            }
        }
        // The pixel at the centre gets the peak.
        XCTAssertEqual(field.values[(8 - field.y0) * field.width + (10 - field.x0)], 2.4, accuracy: 1e-6)
    }

    func testTooLargeImageIsAClearError() throws {
        let source = testImage(width: 8, height: 8)
        _ = try makeGLES(source)   // skips or fails first when there is no EGL
        XCTAssertThrowsError(try GLESRenderer(source: source, outputWidth: 1 << 20, outputHeight: 4)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("too large") && message.contains("GL_MAX_"), message)
        }
    }

    func testProbeNamesThePlatform() throws {
        _ = try makeGLES(testImage(width: 4, height: 4))
        let description = try GLESRenderer.probe()
        print("GLES probe: \(description)")
        XCTAssertTrue(description.contains("EGL"), description)
        XCTAssertTrue(description.contains("OpenGL ES"), description)
    }

    func testShaderErrorShowsTheOffendingLines() {
        let source = "#version 300 es\nprecision highp float;\nvoid main() {\n  x = 1;\n}\n"
        let mesa = offendingLines(log: "0:4(3): error: `x' undeclared\n", source: source)
        XCTAssertTrue(mesa.contains(">   4|   x = 1;"), mesa)
        XCTAssertTrue(mesa.contains("    3| void main() {"), mesa)
        let nvidia = offendingLines(log: "0(4) : error C1008: undefined variable \"x\"\n", source: source)
        XCTAssertTrue(nvidia.contains(">   4|"), nvidia)
        XCTAssertEqual(GLESError.egl(call: "eglInitialize", error: "EGL_NOT_INITIALIZED").description,
                       "eglInitialize failed: EGL_NOT_INITIALIZED")
        XCTAssertTrue(GLESError.noDisplay(attempts: ["surfaceless: x"]).description.contains("--backend cpu"))
    }
}
