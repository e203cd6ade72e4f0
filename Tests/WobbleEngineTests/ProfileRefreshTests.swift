import Foundation
import XCTest
import WobbleCore
import WobbleMedia
@testable import WobbleEngine
@testable import WobbleRender

/// Static displacement profiles are made per shape: a studio drag, a
/// `prepare()` of new sketches or a `reset()` gives frames drawn from the
/// new shapes (exactly a fresh renderer's), never from a stale profile,
/// and an unchanged shape keeps its profile.
final class ProfileRefreshTests: SessionTestCase {
    static let text = """
        image("img.png")
        local body = addSketch{x = 4, y = 4, w = 24, h = 20}
        prepare()
        impulse(body, 1, 0.5)
        wait(0.5)
        """

    /// A drag of two corners in a live session, then its undo, on both
    /// backends: the renderer (and its profiles) is kept between runs.
    func testADragRedrawsFromTheNewShape() throws {
        let path = try scene(Self.text)
        for backend in [Backend.cpu, .gles] {
            var o = SessionOptions(scenePath: path)
            o.backend = backend
            let s = LiveSession(options: o)
            XCTAssertTrue(s.run())
            let k = 6
            let before = try s.render(XCTUnwrap(s.frameState(k)))
            let renderer = try s.frameRenderer()
            var p = s.sketchCalls[0].points
            p.rt = Point(36, 2)
            p.rb = Point(36, 28)
            s.sketchOverrides[0] = p
            XCTAssertTrue(s.run())
            let state = try XCTUnwrap(s.frameState(k))
            let after = try s.render(state)
            XCTAssertTrue(renderer === (try s.frameRenderer()), "\(backend): the renderer is kept")
            XCTAssertNotEqual(after, before, "\(backend)")
            let fresh = try FrameRenderers.make(backend, source: image()).render(state)
            XCTAssertEqual(after, fresh, "\(backend): the dragged shape's frame")
            // Undone: the first shape's frame, byte for byte.
            s.sketchOverrides[0] = nil
            XCTAssertTrue(s.run())
            XCTAssertEqual(try s.render(XCTUnwrap(s.frameState(k))), before, "\(backend): undone")
        }
    }

    /// `prepare()` of a new shape and `reset()` in one clip: one profile per
    /// shape, each frame as a fresh renderer draws it; a peak's field is
    /// computed once (two grid fields), however many frames use it.
    func testPrepareAndResetMakeNewProfiles() throws {
        let scene = Scene()
        scene.imageSize = (40, 30)
        scene.addSketch(lt: Point(4, 4), rt: Point(28, 4), rb: Point(28, 24), lb: Point(4, 24), center: Point(16, 14), parameters: .original)
        let first = scene.prepare()
        try scene.impulse(first[0], dx: 1, dy: 0, amplitude: 1)
        try scene.wait(0.5)
        scene.addSketch(lt: Point(10, 6), rt: Point(36, 6), rb: Point(36, 28), lb: Point(10, 28), center: Point(23, 17), parameters: .original)
        let second = scene.prepare()
        try scene.impulse(second[0], dx: 0, dy: 1, amplitude: 1)
        try scene.wait(0.5)
        scene.reset()
        try scene.wait(0.2)
        let clip = try scene.finish()
        let source = image()
        let fast = FastCPURenderer(source: source)
        let cpu = CPURenderer(source: source)
        var shapes = Set<RegionShape>(), peaks = Set<Double>()
        for k in 0 ..< clip.frameCount {
            let f = clip.frame(k)
            for r in f.regions { shapes.insert(r.shape); peaks.insert(r.peak) }
            let drawn = try fast.render(f)
            XCTAssertEqual(drawn, try FastCPURenderer(source: source).render(f), "frame \(k)")
            XCTAssertGreaterThanOrEqual(Reference.psnr(drawn, try cpu.render(f)), 50, "frame \(k)")
            if f.regions.isEmpty { XCTAssertEqual(drawn, source, "frame \(k): after reset, the still image") }
        }
        XCTAssertEqual(shapes.count, 2)
        XCTAssertEqual(fast.profiles.computed, 2, "one profile per shape")
        XCTAssertEqual(peaks.count, 2, "a classic cycle keeps its peak")
        for shape in shapes {
            // The exact fields of the two grid peaks around its one peak.
            XCTAssertEqual(try fast.profiles.profile(shape, pin: nil, frame: 0).fieldsComputed, 2, "two grid fields for one peak")
        }
        XCTAssertEqual(fast.profiles.computed, 2, "looked up, not made again")
    }
}

enum Reference {
    static func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        PSNR.of(a, b, channels: .rgba)
    }
}
