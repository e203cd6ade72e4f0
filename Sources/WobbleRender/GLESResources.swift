// The GL objects of one GLES renderer: textures, framebuffers, programs,
// and the state a pass starts from (the passes themselves: GLESPasses.swift).
internal import CGLES
import Foundation
import WobbleCore

/// Where a pass draws: a framebuffer, its viewport, and how its pixels map
/// to output pixels (`u_place` of the shaders: output = (ax·x + bx, ay·y + by)).
struct Placement: Equatable {
    var framebuffer: GLuint
    var viewportWidth: Int
    var viewportHeight: Int
    var ax: Float = 1, bx: Float = 0, ay: Float = 1, by: Float = 0
    /// Whether the overlay texture is blended over what the passes draw.
    var overlay = false
}

/// The GL objects of one renderer, created while its context is current.
final class Resources {
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
    /// The context the programs below are compiled in, when first needed.
    let context: GLContext
    /// `Shaders/wobble.frag` compiled per set of switches, as draws need
    /// them (`WobbleVariant`).
    private var wobbles: [WobbleVariant: GLProgram] = [:]
    /// The wobble.frag variants compiled so far.
    var compiledVariants: Set<WobbleVariant> { Set(wobbles.keys) }
    /// Whether the overlay, mirror, interior and opaque switches are
    /// compiled into the wobble.frag programs (the default); false leaves
    /// the first two uniforms tested per fragment and the others off, as the
    /// shader was before its variants (the tests compare the two).
    var fixedSwitches = true
    /// Cutout layers' textures, by layer (`bind`).
    var cutoutTextures: [ObjectIdentifier: CutoutTextures] = [:]
    /// `Shaders/resolve.frag` (overlap("sum") of boxes that meet), compiled
    /// when first needed.
    private var resolveProgram: GLProgram?
    /// The size of the source texture (the image, or the image
    /// area-averaged to a smaller output).
    let sampledWidth: Int, sampledHeight: Int
    /// Whether every texel of the source texture has alpha 255 (the OPAQUE
    /// switch of the wobble.frag variants).
    let opaqueSource: Bool
    /// A straight-alpha layer of the output size that the passes blend
    /// over what they draw (texture unit 3) in placements with `overlay`.
    let overlayTexture: GLObject
    /// The placement each program's `u_viewport` and `u_place` are set for.
    private var placed: [GLuint: Placement] = [:]
    /// The renderer's own framebuffer: output pixels 1:1, row 0 the top.
    var ownPlacement: Placement {
        Placement(framebuffer: framebuffer.name, viewportWidth: mapping.outputWidth, viewportHeight: mapping.outputHeight)
    }
    /// The area-averaging pass of a smaller output (nil when the output is
    /// not smaller than the image), and its `u_rect`.
    let downscaleProgram: GLProgram?
    let rectDownscale: GLint
    let rectCopy: GLint
    /// The summed offsets of overlapping regions (RG float, output size),
    /// nil where the GL has no blendable float render target (then
    /// `overlap("sum")` of overlapping regions is an error naming what is
    /// missing).
    let offsetTexture: GLObject?
    let offsetFramebuffer: GLObject?
    let offsetUnsupported: String?
    /// The source's wrap mode now.
    var edges: EdgeMode = .clamp

    static func integer(_ name: Int32) -> Int {
        var v: GLint = 0
        glGetIntegerv(GLenum(name), &v)
        return Int(v)
    }

    /// `filtered`: the source area-averaged to the mapping's `AreaFilter`
    /// size, when the caller has it (else it is made here).
    init(source: RGBAImage, mapping m: OutputMapping, context: GLContext, filtered: RGBAImage? = nil) throws {
        mapping = m
        self.context = context
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
        // Downscaled output samples the area-averaged source (as the CPU
        // reference does); texture coordinates stay normalised to the image.
        let size = AreaFilter.size(m)
        let sampled = filtered.flatMap { $0.width == size.width && $0.height == size.height ? $0 : nil }
            ?? AreaFilter.downscale(source, width: size.width, height: size.height)
        sampled.pixels.withUnsafeBufferPointer { px in
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(sampled.width), GLsizei(sampled.height), 0,
                         GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
        }
        try glCheck("glTexImage2D(source \(sampled.width)x\(sampled.height))")
        (sampledWidth, sampledHeight) = (sampled.width, sampled.height)
        opaqueSource = !sampled.hasTransparentPixels

        // The render target: framebuffer row 0 is output row 0 (the top), so
        // glReadPixels hands back rows top to bottom.
        (targetTexture, framebuffer) = try GLESRenderer.makeRenderTarget("target", m, unit: GL_TEXTURE1, in: context)
        (stillTexture, stillFramebuffer) = try GLESRenderer.makeRenderTarget("still", m, unit: GL_TEXTURE1, in: context)
        vertexArray = try GLObject(.vertexArray, in: context)
        (offsetTexture, offsetFramebuffer, offsetUnsupported) = try Resources.makeOffsetTarget(m, in: context)

        copy = try GLProgram(vertex: "quad.vert", fragment: "copy.frag", in: context)
        overlayTexture = try GLObject(.texture, in: context)
        glActiveTexture(GLenum(GL_TEXTURE3))
        glBindTexture(GLenum(GL_TEXTURE_2D), overlayTexture.name)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glActiveTexture(GLenum(GL_TEXTURE1))
        // Set by `use` for each placement (looked up here: a missing one is an error now).
        for name in ["u_viewport", "u_place", "u_withOverlay", "u_mirror"] { _ = try copy.location(name) }
        if m.filtersWobbledFrame {
            let program = try GLProgram(vertex: "quad.vert", fragment: "downscale.frag", in: context)
            glUseProgram(program.name)
            glUniform1i(try program.location("u_frame"), 4)
            glUniform1i(try program.location("u_overlay"), 3)
            glUniform2f(try program.location("u_scale"), Float(m.scaleX), Float(m.scaleY))
            rectDownscale = try program.location("u_rect")
            downscaleProgram = program
        } else {
            downscaleProgram = nil
            rectDownscale = -1
        }
        rectCopy = try copy.location("u_rect")
        setFixedUniforms(copy)
        // Draw the still image once.
        let still = Placement(framebuffer: stillFramebuffer.name, viewportWidth: m.outputWidth, viewportHeight: m.outputHeight)
        beginFrame(still)
        drawStill(into: still)
        try glCheck("glDrawArrays(still)")
    }

    /// Sets the uniforms of `program` that never change (the texture units,
    /// the scale, the source size) and its `u_mirror` for `edges`; those it
    /// does not use (a switch compiled in) are skipped. Leaves it current.
    private func setFixedUniforms(_ program: GLProgram) {
        glUseProgram(program.name)
        for (name, unit) in [("u_source", 0), ("u_geometry", 1), ("u_offset", 2), ("u_overlay", 3)] {
            glUniform1i(program.optionalLocation(name), GLint(unit))
        }
        glUniform1i(program.optionalLocation("u_mirror"), edges == .mirror ? 1 : 0)
        glUniform2f(program.optionalLocation("u_scale"), Float(mapping.scaleX), Float(mapping.scaleY))
        glUniform2f(program.optionalLocation("u_invSourceSize"), 1 / Float(mapping.sourceWidth), 1 / Float(mapping.sourceHeight))
    }

    /// `Shaders/wobble.frag` with the switches of `variant`, compiled on
    /// first use (the context must be current).
    func wobble(_ variant: WobbleVariant) throws -> GLProgram {
        if let program = wobbles[variant] { return program }
        let program = try GLProgram(vertex: "quad.vert", fragment: "wobble.frag", defines: variant.defines, in: context)
        for name in ["u_viewport", "u_place", "u_rect", "u_geometryOrigin", "u_direction", "u_swing"] {
            _ = try program.location(name)
        }
        setFixedUniforms(program)
        wobbles[variant] = program
        return program
    }

    /// `Shaders/resolve.frag`, compiled on first use (the context must be
    /// current).
    func resolve() throws -> GLProgram {
        if let resolveProgram { return resolveProgram }
        let program = try GLProgram(vertex: "quad.vert", fragment: "resolve.frag", in: context)
        for name in ["u_viewport", "u_place", "u_withOverlay", "u_rect"] { _ = try program.location(name) }
        setFixedUniforms(program)
        resolveProgram = program
        return program
    }

    /// Makes `program` current with its placement uniforms set for `p`.
    func use(_ program: GLProgram, _ p: Placement) {
        glUseProgram(program.name)
        guard placed[program.name] != p else { return }
        placed[program.name] = p
        // (Checked when the program was made; a wobble.frag variant has
        // its overlay switch compiled in, no u_withOverlay.)
        glUniform2f(program.optionalLocation("u_viewport"), Float(p.viewportWidth), Float(p.viewportHeight))
        glUniform4f(program.optionalLocation("u_place"), p.ax, p.bx, p.ay, p.by)
        glUniform1i(program.optionalLocation("u_withOverlay"), p.overlay ? 1 : 0)
    }

    /// Uploads `layer` (of the output size) as the overlay texture.
    func setOverlay(_ layer: RGBAImage) throws {
        glActiveTexture(GLenum(GL_TEXTURE3))
        glBindTexture(GLenum(GL_TEXTURE_2D), overlayTexture.name)
        layer.pixels.withUnsafeBufferPointer { px in
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(layer.width), GLsizei(layer.height), 0,
                         GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
        }
        glActiveTexture(GLenum(GL_TEXTURE0))
        try glCheck("glTexImage2D(overlay \(layer.width)x\(layer.height))")
    }

    /// Binds `p`'s framebuffer and viewport.
    func target(_ p: Placement) {
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), p.framebuffer)
        glViewport(0, 0, GLsizei(p.viewportWidth), GLsizei(p.viewportHeight))
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
    /// have used the thread's GL state in between, and a window sharing
    /// the context changes texture unit 0: bindings are cheap to restate).
    func beginFrame(_ p: Placement) {
        target(p)
        glBindVertexArray(vertexArray.name)
        glDisable(GLenum(GL_BLEND))
        glDisable(GLenum(GL_SCISSOR_TEST))
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), sourceTexture.name)
    }

    /// The still image over the whole output.
    func drawStill(into p: Placement) {
        drawStill(x0: 0, y0: 0, x1: mapping.outputWidth, y1: mapping.outputHeight, into: p)
    }

    /// The still image over the output pixels `x0 ..< x1`, `y0 ..< y1`.
    func drawStill(x0: Int, y0: Int, x1: Int, y1: Int, into p: Placement) {
        use(copy, p)
        glUniform4f(rectCopy, Float(x0), Float(y0), Float(x1), Float(y1))
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    /// The still image over the whole output, copied from the still texture.
    func blitStill() {
        blitStill(PixelRect(width: mapping.outputWidth, height: mapping.outputHeight))
    }

    /// The still image over the output pixels of `b`, copied from the still
    /// texture (a memory copy: the same bytes as the whole-frame copy).
    func blitStill(_ b: PixelRect) {
        guard !b.isEmpty else { return }
        let x0 = GLint(b.x0), y0 = GLint(b.y0), x1 = GLint(b.x1), y1 = GLint(b.y1)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), stillFramebuffer.name)
        glBlitFramebuffer(x0, y0, x1, y1, x0, y0, x1, y1, GLbitfield(GL_COLOR_BUFFER_BIT), GLenum(GL_NEAREST))
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), framebuffer.name)
    }

    /// The RG32F offset target, when the GL can render and blend it
    /// (EXT_color_buffer_float and EXT_float_blend; GLES 3.2 drivers such as
    /// llvmpipe and NVIDIA's have both); else why not.
    static func makeOffsetTarget(_ m: OutputMapping, in context: GLContext) throws
        -> (GLObject?, GLObject?, String?) {
        var count: GLint = 0
        glGetIntegerv(GLenum(GL_NUM_EXTENSIONS), &count)
        var extensions = Set<String>()
        for i in 0 ..< max(0, Int(count)) {
            if let s = glGetStringi(GLenum(GL_EXTENSIONS), GLuint(i)) {
                extensions.insert(String(cString: UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self)))
            }
        }
        let missing = ["GL_EXT_color_buffer_float", "GL_EXT_float_blend"].filter { !extensions.contains($0) }
        guard missing.isEmpty else {
            return (nil, nil, "the GL lacks \(missing.joined(separator: " and ")) (use overlap(\"first\") or --backend cpu)")
        }
        let target: (GLObject, GLObject)
        do {
            target = try GLESRenderer.makeRenderTarget("offsets RG32F", m, unit: GL_TEXTURE2, format: GL_RG32F,
                                                       nearest: true, in: context)
        } catch GLESError.framebufferIncomplete(let status) {
            glActiveTexture(GLenum(GL_TEXTURE1))
            return (nil, nil, "the RG32F offset target is incomplete (\(status))")
        }
        glActiveTexture(GLenum(GL_TEXTURE1))
        return (target.0, target.1, nil)
    }

    /// Sets how the shaders read a sample position outside the image for
    /// `edges` (`u_mirror`, or the MIRROR switch of the wobble.frag variant
    /// drawn: they fetch and weight the texels themselves, see
    /// `sampleSource` in `Shaders/common.glsl`).
    func setEdges(_ mode: EdgeMode) {
        guard mode != edges else { return }
        edges = mode
        for program in [copy] + (resolveProgram.map { [$0] } ?? []) + wobbles.values {
            glUseProgram(program.name)
            glUniform1i(program.optionalLocation("u_mirror"), mode == .mirror ? 1 : 0)
        }
    }
}
