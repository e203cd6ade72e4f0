// Placing images in a window: RGBA images drawn as textured quads into the
// default framebuffer of the current context (a window's back buffer), with
// the project's shaders (`Shaders/quad.vert`, `Shaders/present.frag`) and
// the renderer's GL objects. The window keeps its events and its swap; the
// GL drawing of a surface is here, beside the renderer that draws frames
// into the same back buffer (`GLESTarget`).
internal import CGLES
import WobbleCore

/// Draws images into the current context's default framebuffer: the
/// studio window's frame (scaled, over a checkerboard when it has
/// transparent pixels), chrome and inspector column (1:1), solid boxes and
/// the clear. Coordinates are window pixels from the top-left; the back
/// buffer may have more pixels than the window (display scaling).
///
/// Made while the window's context is current; its GL names are deleted
/// with that context current, so release it before the context goes.
public final class WindowPainter {
    /// How a quad shows its image's alpha.
    public enum Backdrop: Int32, Sendable {
        /// The colour as opaque.
        case opaque = 0
        /// Transparent pixels over a grey checkerboard of 8-pixel squares.
        case checkerboard = 1
    }

    /// A texture an image is uploaded into, and its size.
    public final class Texture {
        let object: GLObject
        public fileprivate(set) var width = 0
        public fileprivate(set) var height = 0
        init(_ object: GLObject) { self.object = object }
    }

    private let context: GLContext
    private let program: GLProgram
    private let vertexArray: GLObject
    private let rectLocation: GLint
    /// The largest back buffer this context draws (`GL_MAX_TEXTURE_SIZE`,
    /// as the chrome is a texture as wide as the window, and
    /// `GL_MAX_VIEWPORT_DIMS`).
    public let maxDrawable: (width: Int, height: Int)
    /// Whether the back buffer keeps its pixels across a swap
    /// (`EGL_BUFFER_PRESERVED`): then a frame may redraw only what changed.
    public let preservesBackBuffer: Bool
    /// The back buffer's and the window's size of the frame begun.
    private var drawable = (width: 1, height: 1)
    private var window = (width: 1, height: 1)

    /// A painter in the context current on this thread. `preserve` asks
    /// EGL for a back buffer that keeps its pixels across a swap
    /// (`preservesBackBuffer` says whether it does).
    /// - Throws: `GLESError` when no context is current or the program does
    ///   not build (the shader's log and lines in the message).
    public init(preserve: Bool) throws {
        context = try GLContext(adoptingCurrent: ())
        program = try GLProgram(vertex: "quad.vert", fragment: "present.frag", in: context)
        vertexArray = try GLObject(.vertexArray, in: context)
        rectLocation = try program.location("u_rect")
        glUseProgram(program.name)
        glUniform1i(try program.location("u_image"), 0)
        _ = try program.location("u_place")
        _ = try program.location("u_viewport")
        _ = try program.location("u_backdrop")
        let texture = Resources.integer(GL_MAX_TEXTURE_SIZE)
        var viewport: [GLint] = [0, 0]
        glGetIntegerv(GLenum(GL_MAX_VIEWPORT_DIMS), &viewport)
        if texture > 0, viewport[0] > 0, viewport[1] > 0 {
            maxDrawable = (min(texture, Int(viewport[0])), min(texture, Int(viewport[1])))
        } else {
            maxDrawable = (Int.max, Int.max)
        }
        try glCheck("building the window's program")
        preservesBackBuffer = preserve && context.preserveSwaps()
    }

    /// A texture for `upload`.
    public func makeTexture() throws -> Texture {
        Texture(try GLObject(.texture, in: context))
    }

    /// Uploads `image` into `texture` (filtered linearly when `linear`,
    /// else nearest), reusing its storage when the size is the same.
    public func upload(_ image: RGBAImage, into texture: Texture, linear: Bool) {
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.object.name)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        let filter = linear ? GL_LINEAR : GL_NEAREST
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), filter)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), filter)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
        image.pixels.withUnsafeBufferPointer { px in
            if (texture.width, texture.height) == (image.width, image.height) {
                glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(image.width), GLsizei(image.height),
                                GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
            } else {
                glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(image.width), GLsizei(image.height), 0,
                             GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
                (texture.width, texture.height) = (image.width, image.height)
            }
        }
    }

    /// Uploads the pixels of `box` of `image` into `texture`, which holds
    /// an image of `image`'s size (a box outside it uploads nothing).
    public func upload(_ image: RGBAImage, box: PixelRect, into texture: Texture) {
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.object.name)
        guard !box.isEmpty, box.x0 >= 0, box.y0 >= 0, box.x1 <= image.width, box.y1 <= image.height,
              (texture.width, texture.height) == (image.width, image.height) else { return }
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(image.width))
        image.pixels.withUnsafeBufferPointer { px in
            glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, GLint(box.x0), GLint(box.y0), GLsizei(box.width), GLsizei(box.height),
                            GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress.map { $0 + (box.y0 * image.width + box.x0) * 4 })
        }
        glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0)
    }

    /// Starts a frame in the default framebuffer: `drawable` pixels showing
    /// a window of `window` pixels; clears it (dark grey) when `clear`.
    public func begin(drawable: (width: Int, height: Int), window: (width: Int, height: Int), clear: Bool) {
        self.drawable = (max(1, drawable.width), max(1, drawable.height))
        self.window = (max(1, window.width), max(1, window.height))
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), 0)
        glViewport(0, 0, GLsizei(drawable.width), GLsizei(drawable.height))
        glDisable(GLenum(GL_BLEND))
        glDisable(GLenum(GL_SCISSOR_TEST))
        // Window pixels (top-left origin) from back-buffer pixels
        // (bottom-left origin): see quad.vert's u_place.
        let (dw, dh) = (Float(self.drawable.width), Float(self.drawable.height))
        let (ww, wh) = (Float(self.window.width), Float(self.window.height))
        glUseProgram(program.name)
        glUniform2f(program.optionalLocation("u_viewport"), dw, dh)
        glUniform4f(program.optionalLocation("u_place"), ww / dw, 0, -wh / dh, wh)
        if clear {
            glClearColor(0.12, 0.12, 0.12, 1)
            glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        }
    }

    /// The back-buffer rectangle (x, y from the bottom-left, w, h) of the
    /// window pixels `x, y, w, h`.
    private func scissor(_ x: Int, _ y: Int, _ w: Int, _ h: Int) {
        let sx = Double(drawable.width) / Double(window.width), sy = Double(drawable.height) / Double(window.height)
        glScissor(GLint((Double(x) * sx).rounded()), GLint((Double(drawable.height) - Double(y + h) * sy).rounded()),
                  GLsizei((Double(w) * sx).rounded()), GLsizei((Double(h) * sy).rounded()))
    }

    /// A solid box of colour `r, g, b` (0–255) over the window pixels `x, y, w, h`.
    public func fill(x: Int, y: Int, w: Int, h: Int, r: UInt8, g: UInt8, b: UInt8) {
        guard w > 0, h > 0 else { return }
        glEnable(GLenum(GL_SCISSOR_TEST))
        scissor(x, y, w, h)
        glClearColor(Float(r) / 255, Float(g) / 255, Float(b) / 255, 1)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glDisable(GLenum(GL_SCISSOR_TEST))
    }

    /// `texture` over the window pixels `x, y, w, h` (scaled by its filter
    /// when the sizes differ), shown with `backdrop`; with `only`, just the
    /// pixels of those boxes of the texture (the texture 1:1 in the window).
    public func draw(_ texture: Texture, x: Int, y: Int, w: Int, h: Int, backdrop: Backdrop, only boxes: [PixelRect]? = nil) {
        glUseProgram(program.name)
        glBindVertexArray(vertexArray.name)
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.object.name)
        glUniform1i(program.optionalLocation("u_backdrop"), backdrop.rawValue)
        glUniform4f(rectLocation, Float(x), Float(y), Float(x + w), Float(y + h))
        guard let boxes else {
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
            return
        }
        glEnable(GLenum(GL_SCISSOR_TEST))
        for b in boxes where !b.isEmpty {
            scissor(x + b.x0, y + b.y0, b.width, b.height)
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
    }

    /// Waits until GL has drawn everything asked so far (profiling).
    public func finish() { glFinish() }

    /// Throws `GLESError.gl` when GL recorded an error since the last check.
    public func check(_ what: String) throws { try glCheck(what) }
}
