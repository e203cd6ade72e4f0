// Frames drawn into a target they are given: the default framebuffer of
// the current GLES context (a window's back buffer, in the studio), with the
// same shaders and geometry as a headless frame, so a frame is never read
// back into memory nor uploaded again. Where that framebuffer comes from
// (a window, its placement, the chrome around it) is the caller's.
internal import CGLES
import Foundation
import WobbleCore

/// Where `GLESRenderer.draw(_:into:overlay:full:)` draws: the default
/// framebuffer of the current context, its size, and the top-left corner of
/// the output (the renderer's output size, 1:1) in pixels from the
/// framebuffer's top-left.
public struct DrawTarget: Equatable, Sendable {
    public var drawableWidth: Int
    public var drawableHeight: Int
    public var x: Int
    public var y: Int

    public init(drawableWidth: Int, drawableHeight: Int, x: Int, y: Int) {
        self.drawableWidth = drawableWidth
        self.drawableHeight = drawableHeight
        self.x = x
        self.y = y
    }
}

extension GLESRenderer {
    /// Draws `frame` into the default framebuffer of the context this
    /// renderer was made in (`init(inCurrentContext:)`), the output at
    /// `target`, with `overlay` (a straight-alpha layer of the output size)
    /// blended "over" it in the same passes. The pixels are those `render`
    /// returns (the same shaders, the same geometry), the overlay's as the
    /// "over" rule on 8-bit channels puts them (within a level).
    ///
    /// Only what changed is drawn when the target keeps its pixels (a back
    /// buffer preserved across swaps) and `full` is false: the pixels of the regions that move
    /// now, and the boxes of those that moved in the last frame and rest now
    /// (put back to the still image). Every other pixel, the overlay's
    /// included, is as the last frame left it. `full` draws the whole image
    /// area: after the target was cleared, and whenever the overlay, the
    /// scene or the target changed.
    public func draw(_ frame: FrameState, into placement: DrawTarget, overlay: RGBAImage?, full: Bool) throws {
        guard drawsInCurrentContext else { throw GLESError.unsupported("this renderer draws only into its own framebuffer") }
        frameNumber += 1
        let now = frameNumber
        let layer = overlay.flatMap { $0.width == mapping.outputWidth && $0.height == mapping.outputHeight ? $0 : nil }
        // Framebuffer rows go bottom to top: output y = (H - oy) - target y.
        let target = Placement(framebuffer: 0, viewportWidth: placement.drawableWidth, viewportHeight: placement.drawableHeight,
                               ax: 1, bx: Float(-placement.x), ay: -1, by: Float(placement.drawableHeight - placement.y),
                               overlay: layer != nil)
        try withContext {
            let whole = full || presented?.placement != placement || presented?.overlay != (layer != nil)
            if whole, let layer { try gl.setOverlay(layer) }
            gl.beginFrame(target)
            gl.setEdges(frame.edges)
            let draws = try moving(frame, now: now)
            if whole {
                gl.drawStill(into: target)
            } else {
                // Regions that rest now: their box back to the still image.
                let drawing = Set(draws.map { ObjectIdentifier($0.geometry) })
                for g in presented?.geometries ?? [] where !drawing.contains(ObjectIdentifier(g)) {
                    let b = outputBox(g)
                    gl.drawStill(x0: b.x0, y0: b.y0, x1: b.x1, y1: b.y1, into: target)
                }
            }
            try drawMoving(draws, frame: frame, into: target)
            presented = (draws.map(\.geometry), placement, layer != nil)
            try glCheck("drawing the frame into the target")
        }
        evictGeometries(keeping: now)
    }

    /// Forgets what was drawn: the next `draw(_:into:overlay:full:)` draws everything.
    public func invalidateDrawn() { presented = nil }
}
