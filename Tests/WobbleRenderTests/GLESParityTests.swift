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
            frames.append(frameState(regions, time: t, overlap: .first))
        }
        XCTAssertEqual(frames[0].regions.count, 7)
        try assertParity(source: source, frames: frames, label: "overlap")
    }

    func testSumOfOverlappingAndSeparateRegions() throws {
        // Two regions that overlap (summed through the offset pass) and one
        // apart (drawn directly), spring and classic, in one frame.
        let source = testImage(width: 90, height: 50, seed: 29)
        let a = rect(4, 4, 40, 40), b = rect(20, 10, 30, 30, center: Point(35.2, 25.1)), c = rect(60, 8, 26, 36)
        let frames = [0.1, 0.3, 0.55].map { t in
            frameState([regionFrame(a, kicks: [Impulse(start: 0, direction: Point(1, 0), amplitude: 1)], t: t, parameters: .spring),
                        regionFrame(b, direction: Point(0, 1), amplitude: 2, t: t),
                        regionFrame(c, direction: Point(-1, 1), amplitude: 2, t: t)], time: t)
        }
        XCTAssertTrue(frames.allSatisfy { $0.regions.count == 3 })
        try assertParity(source: source, frames: frames, label: "sum-mixed")
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
        // Offsets that sample outside the image are mirrored back into it,
        // or clamp to the edge.
        let source = testImage(width: 48, height: 32, seed: 5)
        let shape = RegionShape(lt: Point(-10, -6), rt: Point(30, -2), rb: Point(36, 40), lb: Point(-4, 38), center: Point(10, 16))
        let frames = [0.15, 0.3, 0.9].flatMap { t in
            [EdgeMode.mirror, .clamp].map { frameState([regionFrame(shape, direction: Point(-1, -1), amplitude: 3, t: t)], edges: $0) }
        }
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

    func testCycleBoundariesWithDecayingAmplitude() throws {
        // Frames at and just around the cycle boundaries, where the amplitude
        // decays (a new peak M: what used to recompute every field), with
        // the original parameters and with a shorter, faster-decaying cycle
        // (the shader's τ and D differ per region).
        let source = testImage(width: 72, height: 56, seed: 11)
        let a = RegionShape(lt: Point(4, 3), rt: Point(40, 6), rb: Point(37, 38), lb: Point(2, 35), center: Point(20.5, 20.5))
        let b = rect(30, 18, 38, 34)
        let fast = WobbleParameters(duration: 0.5, decay: 0.5, threshold: 0.05)
        var frames: [FrameState] = []
        var peaks = Set<Double>()
        for n in 1...3 {
            for dt in [-1e-7, 0, 1e-9, 1e-4, 0.02, 0.3] {
                let t = Double(n) * 1.2 + dt
                let ra = regionFrame(a, direction: Point(1, 0.4), amplitude: 2.5, t: t)
                let rb = regionFrame(b, direction: Point(-0.5, 1), amplitude: 3, t0: 0.1, t: t, parameters: fast)
                for r in [ra, rb].compactMap({ $0 }) { peaks.insert(r.peak) }
                frames.append(frameState([ra, rb], time: t))
            }
        }
        XCTAssertGreaterThanOrEqual(peaks.count, 5, "the amplitude changes across the boundaries")
        XCTAssertGreaterThan(frames.filter { $0.regions.count == 2 }.count, 6)
        try assertParity(source: source, frames: frames, label: "cycle-boundaries")
    }

    func testPixelExactlyAtTheCenter() throws {
        // The centre lies on a pixel centre, 2.5 px from the left edge, with
        // M (4.8 px) larger than R there: the centre pixel moves by M itself,
        // its neighbours by less (M limited to R).
        let source = testImage(width: 48, height: 40, seed: 13)
        let shape = rect(10, 10, 30, 20, center: Point(12.5, 20.5))
        XCTAssertTrue(shape.canMove)
        let frames = [0.3, 0.9, 0.15].map { t in
            frameState([regionFrame(shape, direction: Point(1, 0.3), amplitude: 3, t: t)], time: t)
        }
        XCTAssertEqual(frames[0].regions.first?.peak ?? 0, 4.8, accuracy: 1e-9)
        try assertParity(source: source, frames: frames, label: "center-pixel")
        // The centre pixel itself, channel by channel.
        let gles = try makeGLES(source)
        let cpu = CPURenderer(source: source)
        for frame in frames {
            let g = try gles.render(frame), c = try cpu.render(frame)
            let k = (20 * 48 + 12) * 4
            for ch in 0 ..< 4 { XCTAssertLessThanOrEqual(abs(Int(g.pixels[k + ch]) - Int(c.pixels[k + ch])), 2) }
            XCTAssertNotEqual(Array(c.pixels[k ..< k + 4]), Array(source.pixels[k ..< k + 4]), "the centre moves")
        }
    }

    func testFirstWinsOnPixelCentresExactlyOnABoundary() throws {
        // A's edges run through pixel centres (x = 3.5, 23.5; y = 2.5, 16.5);
        // B lies under it and moves a lot. On A's boundary the reference's m
        // is 0 or a few ulps depending on A's peak, so whether A or B takes
        // such a pixel depends on the amplitude: both backends must agree,
        // pixel for pixel.
        let source = testImage(width: 40, height: 28, seed: 17)
        let a = rect(3.5, 2.5, 20, 14, center: Point(10.5, 8.5))
        let b = rect(0, 0, 40, 28, center: Point(20.2, 14.1))
        let mapping = OutputMapping(sourceWidth: 40, sourceHeight: 28, outputWidth: 40, outputHeight: 28)
        let geometry = RegionGeometry(shape: a, mapping: mapping)
        let amplitudes = [0.2, 1, 6, 12, 0.3]
        let frames = amplitudes.map { amplitude in
            frameState([regionFrame(a, direction: Point(1, 0), amplitude: amplitude, t: 0.3),
                        regionFrame(b, direction: Point(0, 1), amplitude: 3, t0: 0.6, t: 0.9)], time: 0.3, overlap: .first)
        }
        // Some borderline pixel changes hands between these amplitudes.
        let flips = geometry.borderline.filter { bl in
            Set(frames.map { RegionGeometry.moves(bl, peak: $0.regions[0].peak) }).count == 2
        }
        XCTAssertFalse(flips.isEmpty, "the scene exercises a borderline pixel")
        try assertParity(source: source, frames: frames, label: "boundary-first-wins")
        let gles = try makeGLES(source)
        let cpu = CPURenderer(source: source)
        for frame in frames {
            let g = try gles.render(frame), c = try cpu.render(frame)
            for bl in geometry.borderline {
                let i = geometry.x0 + bl.index % geometry.width, j = geometry.y0 + bl.index / geometry.width
                let k = (j * 40 + i) * 4
                for ch in 0 ..< 4 {
                    XCTAssertLessThanOrEqual(abs(Int(g.pixels[k + ch]) - Int(c.pixels[k + ch])), 2,
                                             "borderline pixel \(i),\(j), peak \(frame.regions[0].peak)")
                }
            }
        }
    }

    func testRegionGeometryMatchesTheReferenceExactly() throws {
        let shape = rect(3.5, 2.5, 20, 14, center: Point(10.5, 8.5))
        let mapping = OutputMapping(sourceWidth: 32, sourceHeight: 24, outputWidth: 32, outputHeight: 24)
        let geometry = RegionGeometry(shape: shape, mapping: mapping)
        XCTAssertFalse(geometry.isEmpty)
        var borderlineCount = 0
        for j in 0 ..< 24 {
            for i in 0 ..< 32 {
                let p = mapping.sourcePoint(i, j)
                let inBox = i >= geometry.x0 && i < geometry.x0 + geometry.width
                    && j >= geometry.y0 && j < geometry.y0 + geometry.height
                let n = RegionGeometry.channels
                let k = ((j - geometry.y0) * geometry.width + (i - geometry.x0)) * n
                let (ratio, r, theta) = inBox ? (geometry.values[k], geometry.values[k + 1], geometry.values[k + 2]) : (0, 0, 0)
                let borderline = inBox ? geometry.borderline.first { $0.index == k / n } : nil
                if borderline != nil { borderlineCount += 1 }
                // Membership: exactly the pixels the reference moves, for any
                // peak (borderline pixels settled per peak).
                for peak in [0.01, 0.5, 2.4, 4, 9, 1000] {
                    let moves = borderline.map { RegionGeometry.moves($0, peak: peak) } ?? (r > 0)
                    XCTAssertEqual(moves, shape.displacement(at: p, peak: peak) > 0, "pixel \(i),\(j) peak \(peak)")
                }
                guard r > 0, let (d, rr) = shape.polar(at: p) else { continue }
                if d == 0 {
                    XCTAssertEqual(ratio, 0)
                } else {
                    XCTAssertGreaterThan(ratio, 0)
                    XCTAssertEqual(Double(ratio), d / rr, accuracy: 1e-6)
                    XCTAssertEqual(Double(r), rr, accuracy: 1e-5 * rr)
                    XCTAssertEqual(Double(theta), acos(d / rr), accuracy: 1e-6)
                }
            }
        }
        XCTAssertGreaterThan(borderlineCount, 0, "pixel centres on the boundary")
        print("region geometry: \(geometry.width)x\(geometry.height), \(borderlineCount) borderline pixels")
        // The pixel at the centre carries the centre marker.
        let k = ((8 - geometry.y0) * geometry.width + (10 - geometry.x0)) * RegionGeometry.channels
        XCTAssertEqual(geometry.values[k], 0)
        XCTAssertGreaterThan(geometry.values[k + 1], 0)
        // A degenerate shape has no geometry.
        let flat = RegionShape(lt: Point(4, 4), rt: Point(20, 4), rb: Point(20, 4), lb: Point(4, 4), center: Point(12, 4))
        XCTAssertTrue(RegionGeometry(shape: flat, mapping: mapping).isEmpty)
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
