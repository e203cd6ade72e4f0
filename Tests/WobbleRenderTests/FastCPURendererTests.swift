import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// The CPU backend (`FastCPURenderer`, static profiles) against the CPU
/// reference on every motion feature: pins, springs and loops, overlap sum
/// and first, mirror and clamp edges, alpha, scaled outputs. Each frame
/// must be ≥ 50 dB from the reference, with at most 0.1% of channel values
/// more than 2 apart and none more than 8; and the C row kernel, at every
/// level this CPU runs (baseline, AVX2, AVX-512), must give the Swift
/// kernel's bytes.
final class FastCPURendererTests: XCTestCase {
    private func assertClose(source: RGBAImage, frames: [FrameState], outputWidth: Int? = nil, outputHeight: Int? = nil,
                             label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let fast = FastCPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        fast.rowKernel = .swift
        // The C kernel at each level this CPU runs must give the Swift
        // kernel's bytes.
        let kernels = CPULevel.runnable.map { level in
            let renderer = FastCPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
            renderer.rowKernel = .c(level)
            return (level, renderer)
        }
        let cpu = CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        let still = try cpu.render(frameState([]))
        var moved = 0
        for (n, frame) in frames.enumerated() {
            let f = try fast.render(frame), c = try cpu.render(frame)
            for (level, renderer) in kernels {
                let k = try renderer.render(frame)
                XCTAssertTrue(k == f, "\(label) frame \(n): the C kernel (\(level)) differs from the Swift kernel: \(ImageDifference(k, f))",
                              file: file, line: line)
            }
            let diff = ImageDifference(f, c)
            let db = Reference.psnr(f, c)
            if c != still { moved += 1 }
            XCTAssertGreaterThanOrEqual(db, 50, "\(label) frame \(n): \(diff)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(diff.fractionWithin2, 0.999, "\(label) frame \(n): \(diff)", file: file, line: line)
            XCTAssertEqual(diff.over8, 0, "\(label) frame \(n): \(diff)", file: file, line: line)
            // Region-only rendering into a frame gives the same bytes.
            var partial = still
            try fast.render(frame, boxes: FrameDamage.boxes(frame, mapping: fast.mapping), into: &partial)
            XCTAssertEqual(partial, f, "\(label) frame \(n): boxes", file: file, line: line)
        }
        XCTAssertGreaterThan(moved, 0, "\(label): no frame moved", file: file, line: line)
    }

    func testStillFrameIsTheReferenceStill() throws {
        let source = testImage(width: 64, height: 48)
        XCTAssertEqual(try FastCPURenderer(source: source).render(frameState([])), source)
        XCTAssertEqual(try FastCPURenderer(source: source, outputWidth: 40, outputHeight: 30).render(frameState([])),
                       try CPURenderer(source: source, outputWidth: 40, outputHeight: 30).render(frameState([])))
    }

    func testClassicCycleWithAlphaAndDecay() throws {
        // testImage has a transparent patch and a band of partial alpha.
        let source = testImage(width: 64, height: 48)
        let shape = rect(12, 8, 40, 36)
        let times = [0.0, 0.15, 0.3, 0.45, 0.6, 0.9, 1.2, 1.5, 2.4, 3.0]
        try assertClose(source: source, frames: times.map { frameState([regionFrame(shape, direction: Point(1, 0.4), t: $0)], time: $0) },
                        label: "classic")
    }

    func testOpaqueSource() throws {
        var source = testImage(width: 64, height: 48, seed: 4)
        for k in stride(from: 3, to: source.pixels.count, by: 4) { source.pixels[k] = 255 }
        let shape = RegionShape(lt: Point(5.3, 4.1), rt: Point(58.7, 7.9), rb: Point(55.2, 44.4), lb: Point(2.6, 40.8), center: Point(30, 24))
        try assertClose(source: source, frames: [0.1, 0.2, 0.35, 0.7].map { frameState([regionFrame(shape, direction: Point(-1, 1), amplitude: 2, t: $0)]) },
                        label: "opaque")
    }

    func testPinsAndSprings() throws {
        let source = testImage(width: 80, height: 60, seed: 9)
        let a = rect(4, 4, 36, 50), b = rect(40, 6, 36, 50)
        var spring = WobbleParameters.spring
        spring.pin = .left
        let frames = [0.1, 0.25, 0.4, 0.8, 1.3].map { t -> FrameState in
            var pinned = regionFrame(a, direction: Point(1, 0), t: t)
            pinned?.pin = .bottom
            var sp = regionFrame(b, kicks: [Impulse(start: 0, direction: Point(0, 1), amplitude: 1.5)], t: t, parameters: spring)
            sp?.pin = .left
            return frameState([pinned, sp], time: t)
        }
        try assertClose(source: source, frames: frames, label: "pins")
    }

    func testOverlapSumAndFirstWithBothEdges() throws {
        let source = testImage(width: 90, height: 50, seed: 29)
        let a = rect(-6, -4, 50, 44), b = rect(20, 10, 30, 30, center: Point(35.2, 25.1)), c = rect(60, 8, 34, 46)
        var frames: [FrameState] = []
        for t in [0.1, 0.3, 0.55] {
            for overlap in [OverlapMode.sum, .first] {
                for edges in [EdgeMode.mirror, .clamp] {
                    frames.append(frameState([regionFrame(a, kicks: [Impulse(start: 0, direction: Point(-1, 0), amplitude: 3)], t: t, parameters: .spring),
                                              regionFrame(b, direction: Point(0, 1), amplitude: 2, t: t),
                                              regionFrame(c, direction: Point(1, 1), amplitude: 3, t: t)],
                                             time: t, overlap: overlap, edges: edges))
                }
            }
        }
        try assertClose(source: source, frames: frames, label: "overlap")
    }

    func testScaledOutputs() throws {
        let source = testImage(width: 64, height: 48, seed: 3)
        let shapes = [rect(8, 6, 30, 26), RegionShape(lt: Point(30, 10), rt: Point(60, 14), rb: Point(56, 44), lb: Point(28, 40),
                                                      center: Point(44, 27))]
        let frames = [0.2, 0.45, 0.8].map { t in
            frameState([regionFrame(shapes[0], direction: Point(1, 1), t: t),
                        regionFrame(shapes[1], direction: Point(-1, 0.5), amplitude: 2, t: t)], time: t)
        }
        try assertClose(source: source, frames: frames, outputWidth: 96, outputHeight: 30, label: "scale-up")
        try assertClose(source: source, frames: frames, outputWidth: 40, outputHeight: 30, label: "scale-down")
        try assertClose(source: source, frames: frames, outputWidth: 21, outputHeight: 16, label: "third")
    }

    /// A region alone on its rows takes the eight-pixels-at-a-time rows
    /// even where it runs off the picture: a pixel sampling outside it
    /// (mirrored or clamped there) is the per-pixel sample's, on every side,
    /// alpha and opaque, at the image's size and downscaled.
    func testRowsRunningOffThePictureMatchTheReference() throws {
        let alpha = testImage(width: 67, height: 45, seed: 41)
        var opaque = alpha
        for k in stride(from: 3, to: opaque.pixels.count, by: 4) { opaque.pixels[k] = 255 }
        let whole = rect(-9, -7, 85, 59, center: Point(30.4, 21.7))
        var frames: [FrameState] = []
        for t in [0.15, 0.35, 0.7] {
            for edges in [EdgeMode.mirror, .clamp] {
                for d in [Point(1, 0.4), Point(-0.6, -1)] {
                    frames.append(frameState([regionFrame(whole, direction: d, amplitude: 4, t: t)], time: t, edges: edges))
                }
            }
        }
        for (name, source) in [("alpha", alpha), ("opaque", opaque)] {
            try assertClose(source: source, frames: frames, label: "off-\(name)")
            try assertClose(source: source, frames: frames, outputWidth: 33, outputHeight: 22, label: "off-\(name)-down")
        }
    }

    /// Regions well inside a larger picture take the eight-pixels-at-a-time
    /// rows: side by side in the same
    /// rows, odd widths (a tail of fewer than eight), alpha and opaque,
    /// at the image's size and downscaled; one overlapping pair keeps the
    /// per-pixel path on its shared columns.
    func testInteriorRowsMatchTheReference() throws {
        let alpha = testImage(width: 203, height: 121, seed: 31)
        var opaque = alpha
        for k in stride(from: 3, to: opaque.pixels.count, by: 4) { opaque.pixels[k] = 255 }
        let a = rect(20, 20, 61, 57), b = rect(110, 30, 53, 47, center: Point(140.3, 50.2)), c = rect(130, 60, 40, 40)
        let frames = [0.1, 0.25, 0.4, 0.9].map { t in
            frameState([regionFrame(a, direction: Point(1, 0.3), t: t), regionFrame(b, direction: Point(-0.5, 1), t: t),
                        regionFrame(c, direction: Point(0, -1), t: t)], time: t)
        }
        for (name, source) in [("alpha", alpha), ("opaque", opaque)] {
            try assertClose(source: source, frames: frames, label: "interior-\(name)")
            try assertClose(source: source, frames: frames, outputWidth: 101, outputHeight: 60, label: "interior-\(name)-down")
        }
    }

    func testLoopedClipThroughTheScene() throws {
        // A looping clip (loop(): the steady state of springs and a
        // classic region) rendered frame by frame through Clip.frame, as a
        // render does.
        let scene = Scene()
        scene.imageSize = (80, 50)
        try scene.setLoop()
        scene.addSketch(lt: Point(6, 6), rt: Point(46, 6), rb: Point(46, 36), lb: Point(6, 36), center: Point(26, 21), parameters: .spring)
        scene.addSketch(lt: Point(30, 14), rt: Point(70, 14), rb: Point(70, 44), lb: Point(30, 44), center: Point(50, 29), parameters: .original)
        let models = scene.prepare()
        try scene.wait(0.1)
        try scene.impulse(models[0], dx: 1, dy: 0, amplitude: 1)
        try scene.wait(0.2)
        try scene.impulse(models[1], dx: 0, dy: -1, amplitude: 1)
        try scene.wait(0.7)
        let clip = try scene.finish()
        XCTAssertNotNil(clip.loop)
        let source = testImage(width: 80, height: 50, seed: 12)
        try assertClose(source: source, frames: (0 ..< clip.frameCount).map { clip.frame($0) }, label: "loop")
    }
}
