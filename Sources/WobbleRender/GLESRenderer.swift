internal import CGLES
import Foundation
import WobbleCore
import WobbleSystem

/// The GLES renderer (`--backend gles`, the default): OpenGL ES 3 through
/// EGL, headless (EGL_KHR_surfaceless_context, an FBO, `glReadPixels`).
/// Its frames match `CPURenderer` to within a couple of levels per channel.
///
/// A frame is drawn in two steps:
/// 1. the still image: drawn once at init by a full-output pass sampling the
///    source texture at each output pixel's source point
///    (`Shaders/copy.frag`), then copied into the frame's FBO with
///    glBlitFramebuffer (a memory copy) at the start of every frame;
/// 2. the moving regions (`Shaders/quad.vert`, `Shaders/wobble.frag`), each
///    as a quad over its box that discards pixels outside the region:
///    - directly, last to first, sampling the source at
///      `p + m(p)·swing·direction`, for `overlap("first")` (the first region
///      in `prepare` order that moves a pixel wins) and, with
///      `overlap("sum")`, for every region whose box meets no other's;
///    - for `overlap("sum")` where boxes meet, in two passes: each region
///      adds its offset `m(p)·swing·direction` into an RG32F target
///      (additive blending), then each box samples the source at
///      `p + Σ offsets` (`Shaders/resolve.frag`).
///
/// The source texture is the image itself, or, for an output smaller than
/// it, the image area-averaged to the output size (`AreaFilter`, as the CPU
/// reference) for the still image, while the regions are drawn at the
/// image's size into a second set of targets (`full`) and area-averaged
/// from there (`Shaders/downscale.frag`). The shaders fetch its four texels around a sample position
/// and filter them on premultiplied values (colour × alpha), divided by alpha
/// again, mirroring or clamping the position themselves (`edges`), exactly
/// as the reference does: the texture unit's own filter works on straight
/// values and would let colour hidden under transparent pixels bleed.
///
/// The wobble math is split by what it depends on. Each region's static
/// profile (`DisplacementProfile`: the shape-only geometry once per shape,
/// in doubles, with `RegionShape.polar`, and from it the magnitude `m` per
/// output pixel of the box for a peak `M`) is computed on the CPU and kept
/// as an R32F texture while the shape is in use; it is uploaded again only
/// when the peak changes (a classic model: once per 1.2 s cycle). The
/// motion (the signed swing and the direction) comes from WobbleCore's
/// motion model as uniforms. Per pixel of a region's box: a texel fetch of
/// `m` (a discard where it is 0), then a multiply-add and a bilinear sample
/// (four texel fetches) over the plain copy.
///
/// `Shaders/wobble.frag` is compiled per set of switches a draw needs
/// (`WobbleVariant`: offsets only, overlay, mirror, interior,
/// opaque), each on first use, rather than branching per fragment on
/// uniforms: the same values, computed with fewer instructions (llvmpipe
/// runs the shader on the CPU, where each fragment pays for every test).
/// The interior variant (every sample of the draw at least 1.5 texels
/// inside the texture, decided per draw from the box and the largest
/// offset) skips the mirroring and clamping that cannot change its
/// positions there; the opaque one (a source without transparency) skips
/// the branch for a filtered alpha under half a level, which it never takes.
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

    let context: GLContext
    let gl: Resources
    /// For an output smaller than the image (`filtersWobbledFrame`): the
    /// passes at the image's own size, whose wobbled frame `gl` area-averages
    /// into the output (`Shaders/downscale.frag`); nil otherwise.
    let full: Resources?
    /// The mapping the regions are drawn at: the image's own size with
    /// `full`, else the output's.
    var wobbleMapping: OutputMapping { full?.mapping ?? mapping }
    /// Geometry textures by shape (the mapping is the renderer's), nil for
    /// a shape that moves no pixel, with the last frame that used them.
    var geometries: [GeometryKey: (geometry: GeometryTexture?, lastUsed: Int)] = [:]
    var geometryBytes = 0
    var frameNumber = 0
    /// What `present` drew into the window last: the boxes it drew regions
    /// in, and where.
    var presented: (geometries: [GeometryTexture], placement: DrawTarget, overlay: Bool)?

    /// Geometry textures are kept while their total size stays under this;
    /// beyond it the least recently used ones not needed by the current
    /// frame are dropped (shapes live as long as their model, which may
    /// rest for a while and move again).
    static let geometryBudget = 256 << 20

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
    ///   - filtered: the source area-averaged to the output size
    ///     (`AreaFilter.downscale`), when the caller has it already.
    public convenience init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil, verbose: Bool = false,
                            filtered: RGBAImage? = nil) throws {
        try self.init(source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose, context: nil,
                      filtered: filtered)
    }

    /// A renderer in the GLES 3 context current on this thread (the studio's
    /// window's), which must outlive it: `render` works as for any renderer,
    /// and `draw(_:into:overlay:full:)` draws frames straight into the
    /// context's default framebuffer.
    /// Throws as `init` does, or when no context is current.
    public convenience init(inCurrentContext source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil,
                            verbose: Bool = false) throws {
        try self.init(source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose,
                      context: try GLContext(adoptingCurrent: ()))
    }

    /// Whether this renderer lives in a context it was given (then
    /// `draw(_:into:overlay:full:)` works).
    public var drawsInCurrentContext: Bool { context.adopted }

    /// Runs `body` with the renderer's context current.
    func withContext<T>(_ body: () throws -> T) throws -> T { try context.withCurrent(body) }

    private init(source: RGBAImage, outputWidth: Int?, outputHeight: Int?, verbose: Bool, context given: GLContext?,
                 filtered: RGBAImage? = nil) throws {
        let ow = outputWidth ?? source.width, oh = outputHeight ?? source.height
        guard source.width > 0, source.height > 0 else { throw GLESError.emptyImage(width: source.width, height: source.height) }
        guard ow > 0, oh > 0 else { throw GLESError.emptyImage(width: ow, height: oh) }
        self.source = source
        mapping = OutputMapping(sourceWidth: source.width, sourceHeight: source.height, outputWidth: ow, outputHeight: oh)
        let context = try given ?? GLContext()
        self.context = context
        let m = mapping
        let (gl, full, info) = try context.withCurrent { () throws -> (Resources, Resources?, String) in
            // Before any texture: is there memory for them (`RenderMemory`)?
            try RenderMemory.require(.gles, m, software: GLESRenderer.isSoftware)
            let own = OutputMapping(sourceWidth: source.width, sourceHeight: source.height,
                                    outputWidth: source.width, outputHeight: source.height)
            return (try Resources(source: source, mapping: m, context: context, filtered: filtered),
                    m.filtersWobbledFrame ? try Resources(source: source, mapping: own, context: context) : nil,
                    GLESRenderer.describe(context))
        }
        self.gl = gl
        self.full = full
        platformDescription = info
        if verbose {
            printError("wobble-run: GLES backend: \(info)")
        }
    }

    /// Opens a context without rendering anything and describes it: the EGL
    /// platform, vendor and version, GL version and renderer. Throws as
    /// `init` does when no EGL display can be had.
    public static func probe() throws -> String {
        let context = try GLContext()
        return try context.withCurrent {
            describe(context) + "; GL_MAX_TEXTURE_SIZE \(Resources.integer(GL_MAX_TEXTURE_SIZE))"
        }
    }

    /// Whether the current context draws in software (Mesa's llvmpipe or
    /// softpipe: its textures are this process's memory).
    private static var isSoftware: Bool {
        let r = glString(GL_RENDERER).lowercased()
        return r.contains("llvmpipe") || r.contains("softpipe") || r.contains("swiftshader") || r == "?"
    }

    /// The EGL platform, vendor and version, GL version and renderer of
    /// `context`, which must be current.
    private static func describe(_ context: GLContext) -> String {
        "EGL \(context.eglVersion) (\(context.eglVendor)) on \(context.platform); "
            + "\(glString(GL_VERSION)); renderer \(glString(GL_RENDERER))"
    }

    /// A texture of the output size (RGBA8 unless `format` says otherwise;
    /// `nearest` for data such as offsets) attached to a new framebuffer,
    /// checked complete. `label` names it in errors.
    static func makeRenderTarget(_ label: String, _ m: OutputMapping, unit: Int32,
                                         format: Int32 = GL_RGBA8, nearest: Bool = false,
                                         in context: GLContext) throws -> (GLObject, GLObject) {
        let texture = try GLObject(.texture, in: context)
        glActiveTexture(GLenum(unit))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.name)
        if nearest {
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        }
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(format), GLsizei(m.outputWidth), GLsizei(m.outputHeight))
        try glCheck("glTexStorage2D(\(label) \(m.outputWidth)x\(m.outputHeight))")
        let framebuffer = try GLObject(.framebuffer, in: context)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer.name)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), texture.name, 0)
        try glCheck("glFramebufferTexture2D(\(label))")
        let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            throw GLESError.framebufferIncomplete(status: Resources.framebufferStatusName(status))
        }
        return (texture, framebuffer)
    }

    /// Renders `frame`: straight-alpha RGBA, rows top to bottom.
    public func render(_ frame: FrameState) throws -> RGBAImage {
        frameNumber += 1
        let now = frameNumber
        let image = try context.withCurrent { () throws -> RGBAImage in
            let target = gl.ownPlacement
            let draws = try moving(frame, now: now)
            gl.beginFrame(target)
            gl.setEdges(frame.edges)
            gl.blitStill()
            try drawMoving(draws, frame: frame, into: target)
            return try gl.readBack()
        }
        bytesReadBack += image.pixels.count
        evictGeometries(keeping: now)
        return image
    }

    /// Sets the pixels of `boxes` in `image` to `render(frame)`'s, drawing
    /// and reading back only those boxes (the still image copied into them,
    /// the regions drawn over it, `glReadPixels` of each box straight into
    /// `image`); the other pixels stay as they are.
    public func render(_ frame: FrameState, boxes: [PixelRect], into image: inout RGBAImage) throws {
        let m = mapping
        let boxes = boxes.map { $0.clipped(width: m.outputWidth, height: m.outputHeight) }.filter { !$0.isEmpty }
        guard !boxes.isEmpty, image.width == m.outputWidth, image.height == m.outputHeight else { return }
        frameNumber += 1
        let now = frameNumber
        try context.withCurrent {
            let target = gl.ownPlacement
            let draws = try moving(frame, now: now)
            gl.beginFrame(target)
            gl.setEdges(frame.edges)
            for b in boxes { gl.blitStill(b) }
            try drawMoving(draws, frame: frame, into: target, boxes: boxes)
            try gl.readBack(boxes, into: &image)
        }
        bytesReadBack += boxes.reduce(0) { $0 + $1.area * 4 }
        evictGeometries(keeping: now)
    }

    /// Whether the wobble.frag programs have their switches compiled in
    /// (the default; `Resources.fixedSwitches`): false draws with the
    /// shader as it was before its variants, for the tests and
    /// `wobble-render-bench --clip` to compare.
    public var fixedSwitches: Bool {
        get { gl.fixedSwitches }
        set { gl.fixedSwitches = newValue; full?.fixedSwitches = newValue }
    }

    /// The bytes `glReadPixels` has handed back so far (both `render`s).
    public private(set) var bytesReadBack = 0

    /// still image drawn once at init and copied with glBlitFramebuffer.
    public func renderStill() throws -> RGBAImage {
        try context.withCurrent { () throws -> RGBAImage in
            gl.beginFrame(gl.ownPlacement)
            gl.drawStill(into: gl.ownPlacement)
            return try gl.readBack()
        }
    }

    /// The floor of a region-only frame (`Scripts/bench-clip.sh`): each of
    /// `boxes` (output pixels) filled without any region, and read back into
    /// `image` as `render(_:boxes:into:)` reads them. `shaded` false: the
    /// still image copied in (glBlitFramebuffer, as every frame starts: no
    /// shading at all); true: drawn by the still pass (`Shaders/copy.frag`,
    /// the source's filtered sample per pixel, the cheapest pass that shades
    /// every pixel of the boxes the way the regions' pass does).
    public func renderFloor(boxes: [PixelRect], into image: inout RGBAImage, shaded: Bool) throws {
        let m = mapping
        let boxes = boxes.map { $0.clipped(width: m.outputWidth, height: m.outputHeight) }.filter { !$0.isEmpty }
        guard !boxes.isEmpty, image.width == m.outputWidth, image.height == m.outputHeight else { return }
        try context.withCurrent {
            gl.beginFrame(gl.ownPlacement)
            for b in boxes {
                if shaded {
                    gl.drawStill(x0: b.x0, y0: b.y0, x1: b.x1, y1: b.y1, into: gl.ownPlacement)
                } else {
                    gl.blitStill(b)
                }
            }
            try gl.readBack(boxes, into: &image)
        }
    }
}
