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


    private let context: GLContext
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
    private var geometries: [GeometryKey: (geometry: GeometryTexture?, lastUsed: Int)] = [:]
    private var geometryBytes = 0
    var frameNumber = 0
    /// What `present` drew into the window last: the boxes it drew regions
    /// in, and where.
    var presented: (geometries: [GeometryTexture], placement: DrawTarget, overlay: Bool)?

    /// Geometry textures are kept while their total size stays under this;
    /// beyond it the least recently used ones not needed by the current
    /// frame are dropped (shapes live as long as their model, which may
    /// rest for a while and move again).
    private static let geometryBudget = 256 << 20

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
    fileprivate static func makeRenderTarget(_ label: String, _ m: OutputMapping, unit: Int32,
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

    /// The regions of `frame` that move a pixel, with their geometry.
    func moving(_ frame: FrameState, now: Int) throws -> [(geometry: GeometryTexture, region: RegionFrame)] {
        var draws: [(geometry: GeometryTexture, region: RegionFrame)] = []
        for region in frame.regions {
            // As the reference: no peak or no swing, no offset, and the
            // pixel goes to the next region (decided here, exactly).
            guard region.movesPixels, let geometry = try geometry(for: region.shape, pin: region.pin, frame: now) else { continue }
            draws.append((geometry, region))
        }
        return draws
    }

    /// Draws the moving regions over the still image in `target`: directly,
    /// or, for a smaller output, into `full`'s frame at the image's size and
    /// from there area-averaged over each region's box (`target`'s
    /// framebuffer is bound again afterwards). With `boxes` (output pixels,
    /// `FrameDamage`), the frame at the image's size is made afresh only
    /// over their footprints, all the area filter reads there.
    func drawMoving(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], frame: FrameState,
                    into target: Placement, boxes: [PixelRect]? = nil) throws {
        guard let full, !draws.isEmpty else {
            try drawRegions(draws, overlap: frame.overlap, into: target, using: gl)
            return
        }
        full.beginFrame(full.ownPlacement)
        full.setEdges(frame.edges)
        if let boxes {
            for b in boxes { full.blitStill(FrameDamage.footprint(of: b, mapping: mapping)) }
        } else {
            full.blitStill()
        }
        try drawRegions(draws, overlap: frame.overlap, into: full.ownPlacement, using: full)
        gl.beginFrame(target)
        try gl.downscale(from: full.targetTexture, boxes: draws.map { outputBox($0.geometry) }, into: target)
    }

    /// The output pixels covering a geometry's box (the box itself unless
    /// the regions are drawn at the image's size).
    func outputBox(_ g: GeometryTexture) -> (x0: Int, y0: Int, x1: Int, y1: Int) {
        guard full != nil else { return (g.x0, g.y0, g.x0 + g.width, g.y0 + g.height) }
        let m = mapping
        return (max(0, Int(Double(g.x0) / m.scaleX)), max(0, Int(Double(g.y0) / m.scaleY)),
                min(m.outputWidth, Int((Double(g.x0 + g.width) / m.scaleX).rounded(.up))),
                min(m.outputHeight, Int((Double(g.y0 + g.height) / m.scaleY).rounded(.up))))
    }

    /// Draws the moving regions over the still image in `target` with the
    /// passes of `gl`.
    func drawRegions(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], overlap: OverlapMode,
                     into target: Placement, using gl: Resources) throws {
        // Cutouts are drawn over the other regions, each with its own
        // offset (as CPURenderer: the first cutout that moves a pixel
        // draws it); the other regions sum or win among themselves.
        let plain = draws.filter { $0.region.cutout == nil }
        var direct = plain
        if overlap == .sum {
            // Regions whose box meets another's are summed; the others
            // are drawn directly (alone on their pixels, that is the sum).
            let meets = GLESRenderer.meetingOthers(plain.map(\.geometry))
            let summed = plain.indices.filter { meets[$0] }.map { plain[$0] }
            direct = plain.indices.filter { !meets[$0] }.map { plain[$0] }
            if !summed.isEmpty { try gl.drawSummed(summed, into: target) }
        }
        // First wins: drawn last to first.
        for d in direct.reversed() { try gl.drawRegion(d.geometry, region: d.region, into: target) }
        for d in draws.reversed() where d.region.cutout != nil { try gl.drawRegion(d.geometry, region: d.region, into: target) }
    }

    /// For each box, whether it meets another one (then summing needs the
    /// offset pass there).
    private static func meetingOthers(_ boxes: [GeometryTexture]) -> [Bool] {
        var meets = [Bool](repeating: false, count: boxes.count)
        for (k, a) in boxes.enumerated() {
            for l in (k + 1) ..< boxes.count {
                let b = boxes[l]
                if a.x0 < b.x0 + b.width && b.x0 < a.x0 + a.width && a.y0 < b.y0 + b.height && b.y0 < a.y0 + a.height {
                    meets[k] = true
                    meets[l] = true
                }
            }
        }
        return meets
    }

    /// A plain full-image copy pass: the source drawn over the whole output
    /// by a texture-sampling shader (`Shaders/copy.frag`), into the same FBO,
    /// read back the same way as `render`. The baseline of
    /// `Scripts/bench-render.sh`; `render` itself starts each frame from a
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

    /// The geometry texture of `shape` (with `pin`'s coordinate), computed
    /// and uploaded on first use.
    func geometry(for shape: RegionShape, pin: PinSide?, frame: Int) throws -> GeometryTexture? {
        let key = GeometryKey(shape: shape, pin: pin)
        if let cached = geometries[key] {
            geometries[key] = (cached.geometry, frame)
            return cached.geometry
        }
        try DisplacementProfile.requireMemory(shape, mapping: wobbleMapping)
        let profile = DisplacementProfile(shape: shape, mapping: wobbleMapping, pin: pin)
        let texture = profile.isEmpty ? nil : try GeometryTexture(profile, context: context)
        geometries[key] = (texture, frame)
        geometryBytes += texture?.byteCount ?? 0
        return texture
    }

    /// Drops least recently used geometry while over the budget, never one
    /// used by frame `now`. Called with the context not current: the
    /// textures delete themselves in their own `withCurrent`.
    func evictGeometries(keeping now: Int) {
        guard geometryBytes > GLESRenderer.geometryBudget else { return }
        for (key, entry) in geometries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            guard geometryBytes > GLESRenderer.geometryBudget, entry.lastUsed < now else { break }
            geometryBytes -= entry.geometry?.byteCount ?? 0
            geometries[key] = nil
        }
    }
}

/// What a geometry texture depends on: the shape and the pinned side.
struct GeometryKey: Hashable {
    var shape: RegionShape
    var pin: PinSide?
}

/// A region's `DisplacementProfile` on the GPU: its magnitude field for
/// the peak last drawn, as an R32F texture over the region's box (uploaded
/// again only when the peak changes: once per cycle for a classic model).
final class GeometryTexture {
    let texture: GLObject
    let x0: Int, y0: Int, width: Int, height: Int
    /// The texture's bytes and the profile's (kept on the host).
    var byteCount: Int { width * height * 4 + profile.byteCount }
    /// The pinned side of the profile (how far its samples may reach).
    let pin: PinSide?
    let profile: DisplacementProfile
    private var uploadedPeak: Double?
    /// Times a field was uploaded (tests).
    private(set) var uploads = 0

    /// Makes the texture (its field comes with the first `settle`); the
    /// context must be current.
    init(_ profile: DisplacementProfile, context: GLContext) throws {
        texture = try GLObject(.texture, in: context)
        self.profile = profile
        x0 = profile.x0
        y0 = profile.y0
        width = profile.width
        height = profile.height
        pin = profile.geometry.pin
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.name)
        // Float textures need not be filterable: NEAREST keeps the texture
        // complete (the shader uses texelFetch anyway).
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(GL_R32F), GLsizei(width), GLsizei(height))
        try glCheck("glTexStorage2D(region profile \(width)x\(height))")
    }

    /// Uploads the field for `peak` unless it is the one uploaded last; the
    /// texture must be bound on the active unit and the context current.
    func settle(peak: Double) {
        guard peak != uploadedPeak else { return }
        uploadedPeak = peak
        uploads += 1
        let field = profile.magnitudes(peak: peak)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 4)
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RED), GLenum(GL_FLOAT),
                        field.values.baseAddress)
        withExtendedLifetime(field) {}
    }
}

/// The compile-time switches of one `Shaders/wobble.frag` program: a
/// pinned profile (only for how far its samples reach: the shader text is
/// the same), offsets only (the sum's first pass), the overlay blended
/// in, mirror sampling (else clamped), sampling known to stay inside the
/// source texture (`Resources.samplesInside`), and an opaque source texture
/// (the filtered alpha is then 1 within rounding: the branch for a filtered
/// alpha under half a level is dead). A switch fixed when compiling
/// takes the branch its uniform would, so the values are the same; the
/// fragments skip the tests and the other branch's code.
struct WobbleVariant: Hashable {
    var pinned: Bool
    var offsetOnly: Bool
    var overlay: Bool
    var mirror: Bool
    var interior: Bool
    var opaque: Bool
    /// Overlay and mirror left to their uniforms (`Resources.fixedSwitches`
    /// off).
    var uniforms = false
    /// A cutout region: its object over its plate (`CUTOUT`; defined only
    /// when on).
    var cutout = false

    var defines: [(name: String, value: Int)] {
        let switches = [("OFFSET_ONLY", offsetOnly), ("INTERIOR", interior), ("OPAQUE", opaque)]
            + (uniforms ? [] : [("OVERLAY", overlay), ("MIRROR", mirror)]) + (cutout ? [("CUTOUT", true)] : [])
        return switches.map { ($0.0, $0.1 ? 1 : 0) }
    }
}

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

/// A `CutoutLayer`'s object and plate as RGBA8 textures of its box
/// (texelFetch only: nearest filtering).
final class CutoutTextures {
    let layer: CutoutLayer
    let object: GLObject
    let plate: GLObject

    /// Uploads `layer`; the context must be current.
    init(_ layer: CutoutLayer, context: GLContext) throws {
        self.layer = layer
        let b = layer.box
        let w = max(1, b.width), h = max(1, b.height)
        func upload(_ bytes: [UInt8], _ label: String) throws -> GLObject {
            let t = try GLObject(.texture, in: context)
            glActiveTexture(GLenum(GL_TEXTURE5))
            glBindTexture(GLenum(GL_TEXTURE_2D), t.name)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
            let data = bytes.isEmpty ? [UInt8](repeating: 0, count: 4) : bytes
            data.withUnsafeBufferPointer { px in
                glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(w), GLsizei(h), 0,
                             GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
            }
            try glCheck("glTexImage2D(cutout \(label) \(w)x\(h))")
            return t
        }
        object = try upload(layer.object, "object")
        plate = try upload(layer.plate, "plate")
        glActiveTexture(GLenum(GL_TEXTURE1))
    }
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
    private let context: GLContext
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
    private var cutoutTextures: [ObjectIdentifier: CutoutTextures] = [:]
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

    /// overlap("sum") of regions whose boxes meet: every region adds its
    /// offset into the float target (additive blending), then each box
    /// samples the source at p + the sum.
    func drawSummed(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], into target: Placement) throws {
        guard let offsetFramebuffer, let offsetTexture else {
            throw GLESError.gl(call: "overlap(\"sum\")", error: offsetUnsupported ?? "no offset target")
        }
        var x0 = Int.max, y0 = Int.max, x1 = Int.min, y1 = Int.min
        for d in draws {
            x0 = min(x0, d.geometry.x0); y0 = min(y0, d.geometry.y0)
            x1 = max(x1, d.geometry.x0 + d.geometry.width); y1 = max(y1, d.geometry.y0 + d.geometry.height)
        }
        // The offsets live in output pixels 1:1, whatever the target.
        let offsets = Placement(framebuffer: offsetFramebuffer.name, viewportWidth: mapping.outputWidth,
                                viewportHeight: mapping.outputHeight)
        self.target(offsets)
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(GLint(x0), GLint(y0), GLsizei(x1 - x0), GLsizei(y1 - y0))
        glClearColor(0, 0, 0, 0)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glDisable(GLenum(GL_SCISSOR_TEST))
        glEnable(GLenum(GL_BLEND))
        glBlendEquation(GLenum(GL_FUNC_ADD))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE))
        for d in draws { try drawRegion(d.geometry, region: d.region, into: offsets, offsetOnly: true) }
        glDisable(GLenum(GL_BLEND))
        self.target(target)
        let resolve = try resolve()
        use(resolve, target)
        glActiveTexture(GLenum(GL_TEXTURE2))
        glBindTexture(GLenum(GL_TEXTURE_2D), offsetTexture.name)
        let rectResolve = try resolve.location("u_rect")
        for d in draws {
            let g = d.geometry
            glUniform4f(rectResolve, Float(g.x0), Float(g.y0), Float(g.x0 + g.width), Float(g.y0 + g.height))
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
        try glCheck("overlap(\"sum\") passes")
    }

    /// One region over its geometry's box: sampling the source (direct), or
    /// writing its offset (`offsetOnly`, for the sum), with the wobble.frag
    /// variant that fits it.
    func drawRegion(_ geometry: GeometryTexture, region: RegionFrame, into p: Placement, offsetOnly only: Bool = false) throws {
        let samples = !only && fixedSwitches
        let cutout = only ? nil : region.cutout
        let wobble = try wobble(WobbleVariant(pinned: geometry.pin != nil, offsetOnly: only, overlay: samples && p.overlay,
                                              mirror: samples && edges == .mirror,
                                              interior: samples && cutout == nil && samplesInside(geometry, region: region),
                                              opaque: samples && opaqueSource, uniforms: !fixedSwitches, cutout: cutout != nil))
        use(wobble, p)
        if let cutout { try bind(cutout, for: wobble) }
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), geometry.texture.name)
        geometry.settle(peak: region.peak)
        glUniform4f(wobble.optionalLocation("u_rect"), Float(geometry.x0), Float(geometry.y0),
                    Float(geometry.x0 + geometry.width), Float(geometry.y0 + geometry.height))
        glUniform2i(wobble.optionalLocation("u_geometryOrigin"), GLint(geometry.x0), GLint(geometry.y0))
        glUniform2f(wobble.optionalLocation("u_direction"), Float(region.direction.x), Float(region.direction.y))
        glUniform1f(wobble.optionalLocation("u_swing"), Float(region.swing))
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    /// Binds `layer`'s object and plate (texture units 5 and 6, uploaded on
    /// first use and kept while the layer lives) and sets `program`'s
    /// cutout uniforms.
    func bind(_ layer: CutoutLayer, for program: GLProgram) throws {
        let key = ObjectIdentifier(layer)
        let textures: CutoutTextures
        if let t = cutoutTextures[key], t.layer === layer {
            textures = t
        } else {
            textures = try CutoutTextures(layer, context: context)
            cutoutTextures[key] = textures
        }
        glActiveTexture(GLenum(GL_TEXTURE5))
        glBindTexture(GLenum(GL_TEXTURE_2D), textures.object.name)
        glActiveTexture(GLenum(GL_TEXTURE6))
        glBindTexture(GLenum(GL_TEXTURE_2D), textures.plate.name)
        glActiveTexture(GLenum(GL_TEXTURE1))
        let b = layer.box
        glUniform1i(program.optionalLocation("u_object"), 5)
        glUniform1i(program.optionalLocation("u_plate"), 6)
        glUniform4i(program.optionalLocation("u_cutoutBox"), GLint(b.x0), GLint(b.y0), GLint(b.width), GLint(b.height))
        glUniform2f(program.optionalLocation("u_imageSize"), Float(layer.imageWidth), Float(layer.imageHeight))
    }

    /// Whether every position at which wobble.frag samples the source for
    /// `region` over `geometry`'s box lies at least 1.5 texels inside the
    /// source texture (the INTERIOR switch: there mirroring and clamping,
    /// and the limit of the next texel to the last one, leave the position
    /// and texels as they are). A fragment samples at its pixel's source
    /// point plus an offset of length m·|swing| (a unit direction), and m is
    /// at most the peak M (the hemisphere, whose m grows towards the centre,
    /// where it is M) or M / 0.32768 (the pinned profile); the bound here adds
    /// 0.1% and a texel for float rounding, and the margin is 2 texels.
    func samplesInside(_ geometry: GeometryTexture, region: RegionFrame) -> Bool {
        Resources.samplesInside(PixelRect(x0: geometry.x0, y0: geometry.y0, x1: geometry.x0 + geometry.width,
                                          y1: geometry.y0 + geometry.height),
                                peak: region.peak, swing: region.swing, pinned: geometry.pin != nil, mapping: mapping,
                                texels: (sampledWidth, sampledHeight))
    }

    /// `samplesInside` for the pixels of `box` (of `mapping`'s output) and
    /// a source texture of `texels`.
    static func samplesInside(_ box: PixelRect, peak: Double, swing: Double, pinned: Bool, mapping m: OutputMapping,
                              texels: (width: Int, height: Int)) -> Bool {
        let reach = peak * abs(swing) * (pinned ? 1 / 0.32768 : 1) * 1.001 + 1
        guard reach.isFinite, !box.isEmpty else { return false }
        // Source points of the first and last pixel centres, ± the reach,
        // in texels of the source texture.
        func inside(_ first: Int, _ end: Int, scale: Double, texels: Int, image: Int) -> Bool {
            let toTexels = Double(texels) / Double(image)
            let low = ((Double(first) + 0.5) * scale - reach) * toTexels
            let high = ((Double(end) - 0.5) * scale + reach) * toTexels
            return low >= 2 && high <= Double(texels) - 2
        }
        return inside(box.x0, box.x1, scale: m.scaleX, texels: texels.width, image: m.sourceWidth)
            && inside(box.y0, box.y1, scale: m.scaleY, texels: texels.height, image: m.sourceHeight)
    }

    /// Output pixels `boxes` (x0, y0, x1, y1) of `p` as `frame` (a texture
    /// of the image's size: the wobbled frame) area-averaged.
    func downscale(from frame: GLObject, boxes: [(x0: Int, y0: Int, x1: Int, y1: Int)], into p: Placement) throws {
        guard let program = downscaleProgram else { throw GLESError.gl(call: "downscale", error: "the output is not smaller than the image") }
        use(program, p)
        glActiveTexture(GLenum(GL_TEXTURE4))
        glBindTexture(GLenum(GL_TEXTURE_2D), frame.name)
        for b in boxes where b.x0 < b.x1 && b.y0 < b.y1 {
            glUniform4f(rectDownscale, Float(b.x0), Float(b.y0), Float(b.x1), Float(b.y1))
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
        glActiveTexture(GLenum(GL_TEXTURE0))
        try glCheck("glDrawArrays(downscale)")
    }

    /// The pixels of `boxes` (inside the output) read from the framebuffer
    /// straight into their places in `image` (of the output size).
    func readBack(_ boxes: [PixelRect], into image: inout RGBAImage) throws {
        let w = mapping.outputWidth
        glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), GLint(w))
        image.pixels.withUnsafeMutableBufferPointer { px in
            for b in boxes where !b.isEmpty {
                glReadPixels(GLint(b.x0), GLint(b.y0), GLsizei(b.width), GLsizei(b.height), GLenum(GL_RGBA),
                             GLenum(GL_UNSIGNED_BYTE), px.baseAddress! + (b.y0 * w + b.x0) * 4)
            }
        }
        glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
        try glCheck("glReadPixels(boxes)")
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
