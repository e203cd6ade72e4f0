import CEGL
import CGLES
import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// `GLESRenderer.draw(_:into:overlay:full:)` draws frames straight into
/// the current context's default framebuffer (the studio's window),
/// redrawing only what changed. Here the target is an EGL pbuffer on Mesa's surfaceless display, larger than the image and with the
/// image area off its corner (so the flip and the offset are exercised); its
/// pixels, read back after each frame of a sequence that moves, rests and
/// overlaps regions and switches an overlay on, must be `render`'s frame
/// (with the overlay blended "over" it on the CPU).
final class WindowPresentTests: XCTestCase {
    /// A pbuffer context made current on this thread, standing in for a window.
    private final class Pbuffer {
        let display: EGLDisplay
        let context: EGLContext
        let surface: EGLSurface
        let width: Int, height: Int

        init(width: Int, height: Int) throws {
            self.width = width
            self.height = height
            guard let proc = eglGetProcAddress("eglGetPlatformDisplayEXT") else { throw XCTSkip("no eglGetPlatformDisplayEXT") }
            let getPlatformDisplay = unsafeBitCast(proc, to: PFNEGLGETPLATFORMDISPLAYEXTPROC.self)
            // EGL_PLATFORM_SURFACELESS_MESA
            guard let d = getPlatformDisplay(0x31DD, nil, nil), eglInitialize(d, nil, nil) == EGLBoolean(EGL_TRUE) else {
                throw XCTSkip("no surfaceless EGL display")
            }
            display = d
            eglBindAPI(EGLenum(EGL_OPENGL_ES_API))
            let attributes: [EGLint] = [
                EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_NONE,
            ]
            var config: EGLConfig?
            var count: EGLint = 0
            guard eglChooseConfig(d, attributes, &config, 1, &count) == EGLBoolean(EGL_TRUE), count > 0 else {
                throw XCTSkip("no RGBA8 pbuffer config")
            }
            let size: [EGLint] = [EGL_WIDTH, EGLint(width), EGL_HEIGHT, EGLint(height), EGL_NONE]
            guard let s = eglCreatePbufferSurface(d, config, size) else { throw XCTSkip("no pbuffer surface") }
            let contextAttributes: [EGLint] = [EGL_CONTEXT_CLIENT_VERSION, 3, EGL_NONE]
            guard let c = eglCreateContext(d, config, nil, contextAttributes) else { throw XCTSkip("no GLES 3 context") }
            surface = s
            context = c
            XCTAssertEqual(eglMakeCurrent(d, s, s, c), EGLBoolean(EGL_TRUE))
            // A pbuffer's pixels are undefined until drawn: start from a known colour.
            glClearColor(0, 0, 1, 1)
            glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        }

        /// The `w`×`h` area at `(x, y)` (from the top-left), rows top to bottom.
        func read(x: Int, y: Int, w: Int, h: Int) -> RGBAImage {
            eglMakeCurrent(display, surface, surface, context)
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), 0)
            glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
            var rows = [UInt8](repeating: 0, count: w * h * 4)
            glReadPixels(GLint(x), GLint(height - y - h), GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &rows)
            var out = RGBAImage(width: w, height: h)
            for j in 0 ..< h {   // GL rows go bottom to top
                let src = (h - 1 - j) * w * 4
                out.pixels.replaceSubrange(j * w * 4 ..< (j + 1) * w * 4, with: rows[src ..< src + w * 4])
            }
            return out
        }

        deinit {
            eglMakeCurrent(display, nil, nil, nil)
            eglDestroyContext(display, context)
            eglDestroySurface(display, surface)
        }
    }

    /// `layer` (straight alpha, the frame's size) blended "over" `img`,
    /// rounded to 8 bits: the reference for the overlay drawn on the GPU.
    private func over(_ layer: RGBAImage, _ img: inout RGBAImage) {
        for i in stride(from: 0, to: img.pixels.count, by: 4) where layer.pixels[i + 3] != 0 {
            let a = Int(layer.pixels[i + 3])
            for c in 0..<3 { img.pixels[i + c] = UInt8((Int(layer.pixels[i + c]) * a + Int(img.pixels[i + c]) * (255 - a) + 127) / 255) }
            img.pixels[i + 3] = UInt8(max(a, Int(img.pixels[i + 3])))
        }
    }

    private func maxDifference(_ a: RGBAImage, _ b: RGBAImage, _ label: String) -> Int {
        XCTAssertEqual(a.width, b.width, label)
        XCTAssertEqual(a.height, b.height, label)
        var worst = 0
        for i in 0 ..< min(a.pixels.count, b.pixels.count) where i % 4 != 3 {
            worst = max(worst, abs(Int(a.pixels[i]) - Int(b.pixels[i])))
        }
        return worst
    }

    func testPresentedFramesAreTheRenderedOnesThroughPartialRedraws() throws {
        if ProcessInfo.processInfo.environment["WOBBLE_SKIP_GLES"] == "1" { throw XCTSkip("WOBBLE_SKIP_GLES=1") }
        // An opaque picture (the studio draws only opaque ones this way).
        var source = testImage(width: 80, height: 60)
        for i in stride(from: 3, to: source.pixels.count, by: 4) { source.pixels[i] = 255 }
        let window = try Pbuffer(width: 120, height: 90)
        let place = DrawTarget(drawableWidth: 120, drawableHeight: 90, x: 13, y: 7)
        let renderer = try GLESRenderer(inCurrentContext: source)
        XCTAssertTrue(renderer.drawsInCurrentContext)
        // The same frames drawn with the overlay and mirror switches tested
        // per fragment (no wobble.frag variants) leave the same pixels.
        let plain = try GLESRenderer(inCurrentContext: source)
        plain.fixedSwitches = false
        let a = rect(6.5, 5.5, 30, 24), b = rect(40.5, 20.5, 30, 30), c = rect(25.5, 12.5, 30, 26)
        func region(_ s: RegionShape, _ swing: Double, _ dx: Double = 1, _ dy: Double = 0.4) -> RegionFrame {
            RegionFrame(shape: s, peak: 3, direction: Point(dx, dy), swing: swing)
        }
        // A light outline drawn over the regions (as the studio's handles).
        var layer = RGBAImage(width: 80, height: 60)
        OverlayPainter.draw([a, b], into: &layer, mapping: renderer.mapping)
        XCTAssertGreaterThan(stride(from: 3, to: layer.pixels.count, by: 4).filter { layer.pixels[$0] != 0 }.count, 100)
        let steps: [(String, FrameState, overlay: Bool, full: Bool)] = [
            ("both moving, whole", FrameState(index: 0, time: 0, regions: [region(a, 0.8), region(b, -0.6)]), false, true),
            ("both moving again", FrameState(index: 1, time: 0, regions: [region(a, -0.9), region(b, 0.7)]), false, false),
            ("a rests (swing 0)", FrameState(index: 2, time: 0, regions: [region(a, 0), region(b, 0.5)]), false, false),
            ("a left out, b moving", FrameState(index: 3, time: 0, regions: [region(b, -0.3)]), false, false),
            ("a moves again", FrameState(index: 4, time: 0, regions: [region(a, 0.4), region(b, 0.2)]), false, false),
            ("overlapping, summed", FrameState(index: 5, time: 0, regions: [region(a, 0.7), region(c, -0.8, 0, 1)], overlap: .sum), false, false),
            ("overlapping, first wins", FrameState(index: 6, time: 0, regions: [region(a, -0.5), region(c, 0.9, 0, 1)], overlap: .first), false, false),
            ("clamped edges", FrameState(index: 7, time: 0, regions: [region(b, 0.9, -1, 1)], edges: .clamp), false, false),
            ("with the overlay", FrameState(index: 8, time: 0, regions: [region(a, 0.6), region(b, 0.6)]), true, false),
            ("overlay, moving", FrameState(index: 9, time: 0, regions: [region(a, -0.6), region(b, 0.1)]), true, false),
            ("overlay, a rests", FrameState(index: 10, time: 0, regions: [region(b, -0.8)]), true, false),
            ("overlay off again", FrameState(index: 11, time: 0, regions: [region(a, 0.3)]), false, false),
        ]
        for (label, frame, withOverlay, full) in steps {
            try renderer.draw(frame, into: place, overlay: withOverlay ? layer : nil, full: full)
            var expected = try renderer.render(frame)
            if withOverlay { over(layer, &expected) }
            let shown = window.read(x: place.x, y: place.y, w: 80, h: 60)
            XCTAssertLessThanOrEqual(maxDifference(shown, expected, label), withOverlay ? 1 : 0, label)
            try plain.draw(frame, into: place, overlay: withOverlay ? layer : nil, full: full)
            XCTAssertEqual(window.read(x: place.x, y: place.y, w: 80, h: 60), shown, "\(label), switches per fragment")
        }
        // The rest of the window is left alone (nothing drawn outside the image area).
        let corner = window.read(x: 0, y: 0, w: 120, h: 7)
        XCTAssertTrue(stride(from: 0, to: corner.pixels.count, by: 4).allSatisfy {
            corner.pixels[$0] == 0 && corner.pixels[$0 + 1] == 0 && corner.pixels[$0 + 2] == 255
        }, "above the image area")
    }

    /// The window's own drawing (`WindowPainter`: `Shaders/quad.vert` and
    /// `Shaders/present.frag`): an image at 1:1 lands on its window pixels
    /// exactly; a transparent one shows the 8-pixel grey checkerboard under
    /// it; a solid box and a redraw of just some boxes touch only those
    /// pixels; a window with twice the pixels in its back buffer scales.
    func testThePainterPlacesImagesOnTheirWindowPixels() throws {
        if ProcessInfo.processInfo.environment["WOBBLE_SKIP_GLES"] == "1" { throw XCTSkip("WOBBLE_SKIP_GLES=1") }
        let window = try Pbuffer(width: 64, height: 48)
        let painter = try WindowPainter(preserve: false)
        XCTAssertGreaterThanOrEqual(painter.maxDrawable.width, 64)
        var image = testImage(width: 20, height: 10)
        for i in stride(from: 3, to: image.pixels.count, by: 4) { image.pixels[i] = 255 }
        let texture = try painter.makeTexture()
        painter.upload(image, into: texture, linear: false)
        XCTAssertEqual(texture.width, 20)
        painter.begin(drawable: (64, 48), window: (64, 48), clear: true)
        painter.draw(texture, x: 5, y: 3, w: 20, h: 10, backdrop: .opaque)
        painter.fill(x: 40, y: 30, w: 4, h: 2, r: 200, g: 10, b: 30)
        try painter.check("drawing")
        XCTAssertEqual(window.read(x: 5, y: 3, w: 20, h: 10), image, "the image at 1:1")
        let grey = UInt8((0.12 * 255).rounded())
        XCTAssertEqual(Array(window.read(x: 4, y: 3, w: 1, h: 1).pixels), [grey, grey, grey, 255], "cleared beside it")
        XCTAssertEqual(Array(window.read(x: 40, y: 30, w: 4, h: 2).pixels), Array(repeating: [200, 10, 30, 255], count: 8).flatMap { $0 })
        XCTAssertEqual(Array(window.read(x: 44, y: 30, w: 1, h: 1).pixels), [grey, grey, grey, 255], "the box ends")

        // Transparent pixels over the checkerboard (squares of 8 back-buffer
        // pixels from the bottom-left): 0.55 and 0.45 grey.
        var clear = RGBAImage(width: 16, height: 16)
        for i in stride(from: 0, to: clear.pixels.count, by: 4) { clear.pixels[i] = 255 }
        let see = try painter.makeTexture()
        painter.upload(clear, into: see, linear: false)
        painter.begin(drawable: (64, 48), window: (64, 48), clear: true)
        painter.draw(see, x: 0, y: 32, w: 16, h: 16, backdrop: .checkerboard)
        let board = window.read(x: 0, y: 32, w: 16, h: 16)
        let light = UInt8((0.55 * 255).rounded()), dark = UInt8((0.45 * 255).rounded())
        // Window row 47 is back-buffer row 0: square (0, 0) is light.
        XCTAssertEqual(Array(board.pixels[(15 * 16) * 4 ..< (15 * 16) * 4 + 4]), [light, light, light, 255])
        XCTAssertEqual(Array(board.pixels[(15 * 16 + 8) * 4 ..< (15 * 16 + 8) * 4 + 4]), [dark, dark, dark, 255])
        XCTAssertEqual(Array(board.pixels[0 ..< 4]), [dark, dark, dark, 255])

        // A changed image redrawn only in one box: the rest keeps the old pixels.
        painter.begin(drawable: (64, 48), window: (64, 48), clear: true)
        painter.draw(texture, x: 5, y: 3, w: 20, h: 10, backdrop: .opaque)
        var changed = image
        for j in 0 ..< 10 { for i in 0 ..< 20 { changed.pixels[(j * 20 + i) * 4] = 7 } }
        let box = PixelRect(x0: 2, y0: 1, x1: 9, y1: 6)
        painter.upload(changed, box: box, into: texture)
        painter.begin(drawable: (64, 48), window: (64, 48), clear: false)
        painter.draw(texture, x: 5, y: 3, w: 20, h: 10, backdrop: .opaque, only: [box])
        var expected = image
        for j in box.y0 ..< box.y1 { for i in box.x0 ..< box.x1 { expected.pixels[(j * 20 + i) * 4] = 7 } }
        XCTAssertEqual(window.read(x: 5, y: 3, w: 20, h: 10), expected, "only the box redrawn")

        // A 32×24 window on the 64×48 back buffer: each window pixel is 2×2
        // (the texture now holds `expected`).
        painter.begin(drawable: (64, 48), window: (32, 24), clear: true)
        painter.draw(texture, x: 1, y: 2, w: 20, h: 10, backdrop: .opaque)
        let scaled = window.read(x: 2, y: 4, w: 40, h: 20)
        for (x, y) in [(0, 0), (7, 3), (19, 9)] {
            let want = Array(expected.pixels[(y * 20 + x) * 4 ..< (y * 20 + x) * 4 + 4])
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let k = ((2 * y + dy) * 40 + 2 * x + dx) * 4
                XCTAssertEqual(Array(scaled.pixels[k ..< k + 4]), want, "window pixel (\(x), \(y))")
            }
        }
    }

    func testARendererOfItsOwnContextDoesNotPresent() throws {
        let renderer = try makeGLES(testImage(width: 8, height: 8))
        XCTAssertFalse(renderer.drawsInCurrentContext)
        XCTAssertThrowsError(try renderer.draw(FrameState(index: 0, time: 0, regions: []),
                                                  into: DrawTarget(drawableWidth: 8, drawableHeight: 8, x: 0, y: 0),
                                                  overlay: nil, full: true)) { error in
            XCTAssertEqual("\(error)", "\(GLESError.unsupported("this renderer draws only into its own framebuffer"))")
        }
    }
}
