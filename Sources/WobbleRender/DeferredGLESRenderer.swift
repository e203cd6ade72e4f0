import Foundation
import WobbleCore
import WobbleSystem

/// The GLES backend as the renderer factory hands it out: EGL, Mesa and
/// llvmpipe's LLVM are started when a frame first needs a shader, not
/// before. Starting them is most of a short render's time (loading and
/// linking the driver and LLVM: about 0.1 s of a one-frame still's 0.14 s
/// on llvmpipe, against 0.03 s for the whole run on the CPU backend), and a
/// frame where nothing moves needs none of it.
///
/// A frame where nothing moves is the still image, which is the image
/// itself, or for a smaller output the image area-averaged to the output
/// size (`AreaFilter`): the GLES copy pass samples exactly that image at its
/// own pixel centres, so its bytes are these (tested for sizes, partial and
/// zero alpha). A larger output's still is a bilinear enlargement, drawn by
/// the GLES pass: there the context starts at once.
///
/// Nothing is lost by waiting: what the context would refuse (no EGL
/// display, a size over `GL_MAX_TEXTURE_SIZE`, too little memory) is
/// refused at the first frame that moves, before any output is kept (the
/// sinks commit their files at the end); the host memory every GLES render
/// needs is checked here, up front.
public final class DeferredGLESRenderer: FrameRenderer {
    public let source: RGBAImage
    public let mapping: OutputMapping
    private let verbose: Bool
    /// The GLES renderer, once a frame has needed it.
    public private(set) var started: GLESRenderer?
    private var stillImage: RGBAImage?

    /// A renderer of `source` at `outputWidth`×`outputHeight` (default: the
    /// source's size); `verbose`: name the EGL platform and GL renderer
    /// when they start. Throws what `GLESRenderer.init` throws, now for an
    /// enlarged output, at the first moving frame otherwise.
    public init(source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil, verbose: Bool = false) throws {
        let m = OutputMapping(sourceWidth: source.width, sourceHeight: source.height,
                              outputWidth: outputWidth ?? source.width, outputHeight: outputHeight ?? source.height)
        guard source.width > 0, source.height > 0 else { throw GLESError.emptyImage(width: source.width, height: source.height) }
        guard m.outputWidth > 0, m.outputHeight > 0 else { throw GLESError.emptyImage(width: m.outputWidth, height: m.outputHeight) }
        self.source = source
        mapping = m
        self.verbose = verbose
        // The host's share, whatever the GL turns out to be.
        try RenderMemory.require(.gles, m, software: false)
        if !DeferredGLESRenderer.stillNeedsNoShader(m) { _ = try gles() }
    }

    /// Whether the still image of `m` is the (area-averaged) image itself,
    /// pixel for pixel: the output is nowhere larger than the image.
    public static func stillNeedsNoShader(_ m: OutputMapping) -> Bool {
        let s = AreaFilter.size(m)
        return s.width == m.outputWidth && s.height == m.outputHeight
    }

    /// Whether a region of `frame` moves pixels (`RegionFrame.movesPixels`,
    /// the test `GLESRenderer` draws regions by).
    static func moves(_ frame: FrameState) -> Bool {
        frame.regions.contains(where: \.movesPixels)
    }

    /// The GLES renderer, started now if it is not yet.
    public func gles() throws -> GLESRenderer {
        if let started { return started }
        let r = try GLESRenderer(source: source, outputWidth: mapping.outputWidth, outputHeight: mapping.outputHeight,
                                 verbose: verbose, filtered: stillImage)
        started = r
        return r
    }

    /// The still image, made on the CPU side (once).
    private func still() -> RGBAImage {
        if let stillImage { return stillImage }
        let s = AreaFilter.downscale(source, width: mapping.outputWidth, height: mapping.outputHeight)
        stillImage = s
        return s
    }

    public func render(_ frame: FrameState) throws -> RGBAImage {
        if started == nil && !DeferredGLESRenderer.moves(frame) { return still() }
        return try gles().render(frame)
    }

    public func render(_ frame: FrameState, boxes: [PixelRect], into image: inout RGBAImage) throws {
        guard started == nil && !DeferredGLESRenderer.moves(frame) else {
            try gles().render(frame, boxes: boxes, into: &image)
            return
        }
        let m = mapping
        guard image.width == m.outputWidth, image.height == m.outputHeight else { return }
        let s = still()
        for b in boxes { image.copy(b.clipped(width: m.outputWidth, height: m.outputHeight), from: s) }
    }

    /// One line for `--verbose` when the render ends: what drew the frames.
    public var startedDescription: String {
        started.map { "GLES backend: \($0.platformDescription)" }
            ?? "GLES backend: not started (no frame moved: the still image needs no shader)"
    }
}
