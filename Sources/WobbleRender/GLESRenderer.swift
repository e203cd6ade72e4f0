internal import CGLES
import Foundation
import WobbleCore

/// The GLES renderer (`--backend gles`, the default): OpenGL ES 3 through
/// EGL, headless (EGL_KHR_surfaceless_context, an FBO, `glReadPixels`).
/// Its frames match `CPURenderer` to within a couple of levels per channel.
///
/// A frame is drawn in two steps:
/// 1. the still image: drawn once at init by a full-output pass sampling the
///    source texture at each output pixel's source point
///    (`Shaders/copy.frag`), then copied into the frame's FBO with
///    glBlitFramebuffer (a memory copy) at the start of every frame;
/// 2. each moving region, last to first, as a quad over its bounding box
///    (`Shaders/wobble.frag`) that samples the source at
///    `p + m(p)·progress·direction` and discards where `m(p) = 0`, so the
///    first region in `prepare` order whose displacement is non-zero wins.
///
/// `m(p)` comes from a per-region field texture (`DisplacementField`),
/// computed once per shape and peak and kept while they last: the peak
/// changes only at cycle boundaries, so most frames cost one texel fetch and
/// one bilinear sample per region pixel over the plain copy.
///
/// The EGL platform is chosen at run time (a hardware device through
/// EGL_PLATFORM_DEVICE_EXT, else Mesa's surfaceless platform, else the
/// default display); the environment variable `WOBBLE_EGL_PLATFORM`
/// (`device`, `surfaceless`, `default`, `auto`) overrides the choice.
///
/// A renderer may be used from any thread, one call at a time; its context
/// is current only during a call.
public final class GLESRenderer: FrameRenderer {
    /// The source image (uploaded to a texture once, at init).
    public let source: RGBAImage
    /// Output pixel centres in source-image coordinates.
    public let mapping: OutputMapping
    /// One line naming the EGL platform, EGL vendor and version, and the GL
    /// renderer and version (`--verbose`).
    public let platformDescription: String

    public var outputWidth: Int { mapping.outputWidth }
    public var outputHeight: Int { mapping.outputHeight }

    private let context: GLContext
    private let gl: Resources
    /// Field textures by shape and peak, with the last frame that used them.
    private var fields: [FieldKey: (field: FieldTexture?, lastUsed: Int)] = [:]
    private var frameNumber = 0

    /// Fields unused for this many frames are dropped (a region leaves
    /// `FrameState.regions` for single frames where its progress is 0).
    private static let fieldLifetime = 8

    /// Opens an EGL display and GLES 3 context, uploads `source` and builds
    /// the shaders.
    ///
    /// - Parameters:
    ///   - outputWidth, outputHeight: the output size (default: the source's).
    ///   - verbose: print the EGL vendor and version and the GL renderer to
    ///     stderr.
    /// - Throws: `GLESError`: no EGL display (the message suggests
    ///   `--backend cpu`), an image larger than `GL_MAX_TEXTURE_SIZE`, or any
    ///   failed EGL/GL call, named.
    public init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil, verbose: Bool = false) throws {
        let ow = outputWidth ?? source.width, oh = outputHeight ?? source.height
        guard source.width > 0, source.height > 0 else { throw GLESError.emptyImage(width: source.width, height: source.height) }
        guard ow > 0, oh > 0 else { throw GLESError.emptyImage(width: ow, height: oh) }
        self.source = source
        mapping = OutputMapping(sourceWidth: source.width, sourceHeight: source.height, outputWidth: ow, outputHeight: oh)
        let context = try GLContext()
        self.context = context
        let m = mapping
        let (gl, info) = try context.withCurrent { () throws -> (Resources, String) in
            let info = "EGL \(context.eglVersion) (\(context.eglVendor)) on \(context.platform); "
                + "\(glString(GL_VERSION)); renderer \(glString(GL_RENDERER))"
            return (try Resources(source: source, mapping: m, context: context), info)
        }
        self.gl = gl
        platformDescription = info
        if verbose {
            FileHandle.standardError.write(Data("wobble-run: GLES backend: \(info)\n".utf8))
        }
    }

    /// Opens a context without rendering anything and describes it: the EGL
    /// platform, vendor and version, GL version and renderer. Throws as
    /// `init` does when no EGL display can be had.
    public static func probe() throws -> String {
        let context = try GLContext()
        return try context.withCurrent {
            "EGL \(context.eglVersion) (\(context.eglVendor)) on \(context.platform); "
                + "\(glString(GL_VERSION)); renderer \(glString(GL_RENDERER)); "
                + "GL_MAX_TEXTURE_SIZE \(Resources.integer(GL_MAX_TEXTURE_SIZE))"
        }
    }

    /// Renders `frame`: straight-alpha RGBA, rows top to bottom.
    public func render(_ frame: FrameState) throws -> RGBAImage {
        frameNumber += 1
        let now = frameNumber
        let image = try context.withCurrent { () throws -> RGBAImage in
            gl.beginFrame()
            gl.blitStill()
            for region in frame.regions.reversed() {
                guard let field = try field(for: region, frame: now) else { continue }
                gl.drawRegion(field, shift: region.direction * region.progress)
            }
            return try gl.readBack()
        }
        fields = fields.filter { now - $0.value.lastUsed < GLESRenderer.fieldLifetime }
        return image
    }

    /// A plain full-image copy pass: the source drawn over the whole output
    /// by a texture-sampling shader (`Shaders/copy.frag`), into the same FBO,
    /// read back the same way as `render`. The baseline of
    /// `Scripts/bench-render.sh`; `render` itself starts each frame from a
    /// still image drawn once at init and copied with glBlitFramebuffer.
    public func renderStill() throws -> RGBAImage {
        try context.withCurrent { () throws -> RGBAImage in
            gl.beginFrame()
            gl.drawStill()
            return try gl.readBack()
        }
    }

    private func field(for region: RegionFrame, frame: Int) throws -> FieldTexture? {
        let key = FieldKey(shape: region.shape, peak: region.peak)
        if let cached = fields[key] {
            fields[key] = (cached.field, frame)
            return cached.field
        }
        let field = DisplacementField(shape: region.shape, peak: region.peak, mapping: mapping)
        let texture = field.isEmpty ? nil : try FieldTexture(field, context: context)
        fields[key] = (texture, frame)
        return texture
    }
}

/// What a displacement field depends on (the mapping is the renderer's).
private struct FieldKey: Hashable {
    var shape: RegionShape
    var peak: Double
}

/// A `DisplacementField` uploaded as an R32F texture.
private final class FieldTexture {
    let texture: GLObject
    let x0: Int, y0: Int, width: Int, height: Int

    /// Uploads `field`; the context must be current.
    init(_ field: DisplacementField, context: GLContext) throws {
        texture = try GLObject(.texture, in: context)
        x0 = field.x0
        y0 = field.y0
        width = field.width
        height = field.height
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.name)
        // R32F cannot be filtered: NEAREST keeps the texture complete (the
        // shader uses texelFetch anyway).
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        field.values.withUnsafeBufferPointer { v in
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_R32F, GLsizei(width), GLsizei(height), 0,
                         GLenum(GL_RED), GLenum(GL_FLOAT), v.baseAddress)
        }
        try glCheck("glTexImage2D(displacement field \(width)x\(height))")
    }
}

/// The GL objects of one renderer, created while its context is current.
private final class Resources {
    let mapping: OutputMapping
    let sourceTexture: GLObject
    let targetTexture: GLObject
    let framebuffer: GLObject
    /// The still image at output size, drawn once; each frame starts as a
    /// copy of it (glBlitFramebuffer: a memory copy, not a shading pass).
    let stillTexture: GLObject
    let stillFramebuffer: GLObject
    let vertexArray: GLObject
    let copy: GLProgram
    let wobble: GLProgram
    let rectCopy: GLint
    let rectWobble: GLint
    let fieldOrigin: GLint
    let shift: GLint

    static func integer(_ name: Int32) -> Int {
        var v: GLint = 0
        glGetIntegerv(GLenum(name), &v)
        return Int(v)
    }

    init(source: RGBAImage, mapping m: OutputMapping, context: GLContext) throws {
        mapping = m
        let maxTexture = Resources.integer(GL_MAX_TEXTURE_SIZE)
        var viewport: [GLint] = [0, 0]
        glGetIntegerv(GLenum(GL_MAX_VIEWPORT_DIMS), &viewport)
        try glCheck("glGetIntegerv(GL_MAX_TEXTURE_SIZE)")
        if source.width > maxTexture || source.height > maxTexture {
            throw GLESError.imageTooLarge(what: "source image", width: source.width, height: source.height,
                                          limit: "GL_MAX_TEXTURE_SIZE", max: maxTexture)
        }
        if m.outputWidth > maxTexture || m.outputHeight > maxTexture {
            throw GLESError.imageTooLarge(what: "output", width: m.outputWidth, height: m.outputHeight,
                                          limit: "GL_MAX_TEXTURE_SIZE", max: maxTexture)
        }
        if m.outputWidth > Int(viewport[0]) || m.outputHeight > Int(viewport[1]) {
            throw GLESError.imageTooLarge(what: "output", width: m.outputWidth, height: m.outputHeight,
                                          limit: "GL_MAX_VIEWPORT_DIMS", max: Int(min(viewport[0], viewport[1])))
        }

        glDisable(GLenum(GL_DITHER))
        glDisable(GLenum(GL_BLEND))
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)

        // The source, on texture unit 0 for the renderer's lifetime. Row 0
        // of the texture is the top row of the image.
        sourceTexture = try GLObject(.texture, in: context)
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), sourceTexture.name)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
        source.pixels.withUnsafeBufferPointer { px in
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(source.width), GLsizei(source.height), 0,
                         GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
        }
        try glCheck("glTexImage2D(source \(source.width)x\(source.height))")

        // The render target: framebuffer row 0 is output row 0 (the top), so
        // glReadPixels hands back rows top to bottom.
        targetTexture = try GLObject(.texture, in: context)
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), targetTexture.name)
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(GL_RGBA8), GLsizei(m.outputWidth), GLsizei(m.outputHeight))
        try glCheck("glTexStorage2D(target \(m.outputWidth)x\(m.outputHeight))")
        framebuffer = try GLObject(.framebuffer, in: context)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer.name)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D),
                               targetTexture.name, 0)
        try glCheck("glFramebufferTexture2D")
        let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            throw GLESError.framebufferIncomplete(status: Resources.framebufferStatusName(status))
        }
        stillTexture = try GLObject(.texture, in: context)
        glBindTexture(GLenum(GL_TEXTURE_2D), stillTexture.name)
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(GL_RGBA8), GLsizei(m.outputWidth), GLsizei(m.outputHeight))
        try glCheck("glTexStorage2D(still \(m.outputWidth)x\(m.outputHeight))")
        stillFramebuffer = try GLObject(.framebuffer, in: context)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), stillFramebuffer.name)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D),
                               stillTexture.name, 0)
        try glCheck("glFramebufferTexture2D(still)")
        let stillStatus = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard stillStatus == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            throw GLESError.framebufferIncomplete(status: Resources.framebufferStatusName(stillStatus))
        }
        vertexArray = try GLObject(.vertexArray, in: context)

        copy = try GLProgram(vertex: "quad.vert", fragment: "copy.frag", in: context)
        wobble = try GLProgram(vertex: "quad.vert", fragment: "wobble.frag", in: context)
        // Uniforms that never change.
        let invSource = (1 / Float(source.width), 1 / Float(source.height))
        for (program, usesField) in [(copy, false), (wobble, true)] {
            glUseProgram(program.name)
            glUniform1i(try program.location("u_source"), 0)
            if usesField { glUniform1i(try program.location("u_field"), 1) }
            glUniform2f(try program.location("u_viewport"), Float(m.outputWidth), Float(m.outputHeight))
            glUniform2f(try program.location("u_scale"), Float(m.scaleX), Float(m.scaleY))
            glUniform2f(try program.location("u_invSourceSize"), invSource.0, invSource.1)
        }
        rectCopy = try copy.location("u_rect")
        rectWobble = try wobble.location("u_rect")
        fieldOrigin = try wobble.location("u_fieldOrigin")
        shift = try wobble.location("u_shift")
        glUseProgram(copy.name)
        glUniform4f(rectCopy, 0, 0, Float(m.outputWidth), Float(m.outputHeight))
        try glCheck("glUniform")
        // Draw the still image once.
        glViewport(0, 0, GLsizei(m.outputWidth), GLsizei(m.outputHeight))
        glBindVertexArray(vertexArray.name)
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        try glCheck("glDrawArrays(still)")
    }

    static func framebufferStatusName(_ status: GLenum) -> String {
        switch Int32(status) {
        case GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT: "GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT"
        case GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT: "GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT"
        case GL_FRAMEBUFFER_INCOMPLETE_DIMENSIONS: "GL_FRAMEBUFFER_INCOMPLETE_DIMENSIONS"
        case GL_FRAMEBUFFER_UNSUPPORTED: "GL_FRAMEBUFFER_UNSUPPORTED"
        case GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE: "GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE"
        default: "status 0x" + String(status, radix: 16)
        }
    }

    /// Binds the framebuffer and state for a frame (another renderer may
    /// have used the thread's GL state in between: each has its own context,
    /// but bindings are cheap to restate).
    func beginFrame() {
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer.name)
        glViewport(0, 0, GLsizei(mapping.outputWidth), GLsizei(mapping.outputHeight))
        glBindVertexArray(vertexArray.name)
    }

    /// The still image over the whole output.
    func drawStill() {
        glUseProgram(copy.name)
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    /// The still image over the whole output, copied from the still texture.
    func blitStill() {
        let w = GLint(mapping.outputWidth), h = GLint(mapping.outputHeight)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), stillFramebuffer.name)
        glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, GLbitfield(GL_COLOR_BUFFER_BIT), GLenum(GL_NEAREST))
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), framebuffer.name)
    }

    /// One region over its field's box.
    func drawRegion(_ field: FieldTexture, shift s: Point) {
        glUseProgram(wobble.name)
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), field.texture.name)
        glUniform4f(rectWobble, Float(field.x0), Float(field.y0),
                    Float(field.x0 + field.width), Float(field.y0 + field.height))
        glUniform2i(fieldOrigin, GLint(field.x0), GLint(field.y0))
        glUniform2f(shift, Float(s.x), Float(s.y))
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    /// The framebuffer as RGBA rows, top to bottom.
    func readBack() throws -> RGBAImage {
        let w = mapping.outputWidth, h = mapping.outputHeight
        let pixels = [UInt8](unsafeUninitializedCapacity: w * h * 4) { buffer, count in
            glReadPixels(0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), buffer.baseAddress)
            count = w * h * 4
        }
        try glCheck("glReadPixels")
        return RGBAImage(width: w, height: h, pixels: pixels)
    }
}
