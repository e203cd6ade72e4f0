import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// A live session's rendering: the frame at a time, its state, rendered through the cached renderer (the window's own when it gives one).
extension LiveSession {
    // MARK: Frames

    /// The frame index shown at time `t` (the latest frame at or before it).
    public func frameIndex(at t: Double) -> Int {
        clip?.frameIndex(at: t) ?? 0
    }

    /// The state of frame `k` of the clip (frames past the end go on in
    /// closed form: the models keep moving as their impulses say).
    public func frameState(_ k: Int) -> FrameState? {
        clip?.frame(Swift.max(0, k))
    }

    /// Renders `state` exactly as a headless render does (`--overlay` off
    /// unless the scene's `overlay(true)` asks), then paints `extra`
    /// shapes on it (handles), all through `Compositor`.
    public func render(_ state: FrameState, extra: [RegionShape] = []) throws -> RGBAImage {
        let r = try currentRenderer()
        return try Compositor.frame(state, renderer: r, extra: extra)
    }

    /// How source pixels map to the frames `render` makes, once an image is loaded.
    public var mapping: OutputMapping? {
        guard let img = image else { return nil }
        let size = outputSize ?? (img.width, img.height)
        return OutputMapping(sourceWidth: img.width, sourceHeight: img.height, outputWidth: size.width, outputHeight: size.height)
    }

    /// Forgets the renderer (the next frame makes one again): its GL names
    /// go while their context is still alive.
    public func dropRenderer() {
        renderer = nil
        rendererImagePath = nil
        rendererStamp = nil
    }

    /// The renderer for the current image and output size (made on first
    /// use, and again when either changed).
    public func frameRenderer() throws -> FrameRenderer { try currentRenderer() }

    /// The renderer for the current image and output size, made again when
    /// either changed.
    func currentRenderer() throws -> FrameRenderer {
        guard let img = image, let path = imagePathInUse, let m = mapping else { throw SessionError("no image loaded") }
        if let r = renderer, rendererImagePath == path, rendererStamp == imageStamp, r.mapping == m {
            return r
        }
        renderer = nil
        let r: FrameRenderer
        if let make = makeRenderer {
            r = try make(img, m)
        } else {
            r = try FrameRenderers.make(options.backend, source: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight,
                                        verbose: options.verbose)
        }
        renderer = r
        rendererImagePath = path
        rendererStamp = imageStamp
        return r
    }
}

/// A live session's frames as a window puts them on screen, and nothing
/// else of the session: a frame state rendered through the session's
/// cached renderer (`render`), that renderer itself (a window drawing
/// straight into its back buffer checks that it is its own), how source
/// pixels map to the frames, and the two hooks a window sets (the
/// renderer made in its GL context, the size frames are rendered at). The
/// studio core hands it out (`StudioCore.frames`); what a frame shows
/// (its state, the handles, the run) a surface reads from the core.
public struct LiveFrames {
    private let session: LiveSession

    public init(_ session: LiveSession) { self.session = session }

    /// Renders `state` as a headless render does (`LiveSession.render`).
    public func render(_ state: FrameState) throws -> RGBAImage { try session.render(state) }

    /// The renderer the frames are rendered with now (made on first use,
    /// and again when the image or the output size changed).
    public func renderer() throws -> FrameRenderer { try session.frameRenderer() }

    /// How source pixels map to the frames, once an image is loaded.
    public var mapping: OutputMapping? { session.mapping }

    /// The size frames are rendered at (nil: the source image's).
    public var outputSize: (width: Int, height: Int)? {
        get { session.outputSize }
        nonmutating set { session.outputSize = newValue }
    }

    /// Makes the renderer instead of the session's backend (setting it
    /// drops the current one: its GL names go while their context lives).
    public var makeRenderer: ((_ source: RGBAImage, _ mapping: OutputMapping) throws -> FrameRenderer)? {
        get { session.makeRenderer }
        nonmutating set { session.makeRenderer = newValue }
    }
}

extension Clip {
    /// The frame index shown at time `t` (the latest frame at or before it).
    public func frameIndex(at t: Double) -> Int {
        let k = (t * fps + 1e-6).rounded(.down)
        guard k.isFinite, k >= 0 else { return 0 }
        return Int(Swift.min(k, 1e12))
    }
}
