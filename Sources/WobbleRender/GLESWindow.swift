// Frames drawn straight into a window's back buffer (the studio): the same
// shaders and geometry as a headless frame, in the window's own GLES
// context, so a frame is never read back into memory nor uploaded again.
internal import CGLES
import Foundation
import WobbleCore

/// Where `GLESRenderer.present` draws in the current window's back buffer:
/// the drawable's size and the image area's top-left corner, in drawable
/// pixels from the window's top-left. The image area is the renderer's
/// output size, 1:1.
public struct WindowPlacement: Equatable, Sendable {
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

/// The pixels of a straight-alpha layer that are not transparent (the
/// studio's handles), to blend "over" frames of its size on the CPU.
public struct SparseOverlay: Sendable {
    public let width: Int
    public let height: Int
    /// Pixel index (`y · width + x`) and colour of each visible pixel.
    public private(set) var indices: [Int] = []
    public private(set) var colors: [(UInt8, UInt8, UInt8, UInt8)] = []

    public init(_ layer: RGBAImage) {
        width = layer.width
        height = layer.height
        for i in 0..<(layer.width * layer.height) where layer.pixels[i * 4 + 3] != 0 {
            indices.append(i)
            colors.append((layer.pixels[i * 4], layer.pixels[i * 4 + 1], layer.pixels[i * 4 + 2], layer.pixels[i * 4 + 3]))
        }
    }

    public var isEmpty: Bool { indices.isEmpty }

    /// Blends the layer over `img` (of the layer's size; another size is
    /// left alone).
    public func blend(into img: inout RGBAImage) {
        guard img.width == width, img.height == height else { return }
        img.pixels.withUnsafeMutableBufferPointer { px in
            for (n, i) in indices.enumerated() {
                let c = colors[n], a = Int(c.3), j = i * 4
                px[j] = UInt8((Int(c.0) * a + Int(px[j]) * (255 - a) + 127) / 255)
                px[j + 1] = UInt8((Int(c.1) * a + Int(px[j + 1]) * (255 - a) + 127) / 255)
                px[j + 2] = UInt8((Int(c.2) * a + Int(px[j + 2]) * (255 - a) + 127) / 255)
                px[j + 3] = UInt8(max(a, Int(px[j + 3])))
            }
        }
    }
}

extension GLESRenderer {
    /// Draws `frame` into the back buffer of the window whose context this
    /// renderer was made in (`init(inCurrentContext:)`), the image area at
    /// `placement`, with `overlay` (a straight-alpha layer of the output
    /// size) blended over it in the same passes. The pixels are those
    /// `render` returns (the same shaders, the same geometry), the overlay
    /// as `SparseOverlay.blend` puts it (within a level).
    ///
    /// Only what changed is drawn when the back buffer keeps its pixels
    /// across swaps and `full` is false: the pixels of the regions that move
    /// now, and the boxes of those that moved in the last frame and rest now
    /// (put back to the still image). Every other pixel, the overlay's
    /// included, is as the last frame left it. `full` draws the whole image
    /// area: after the window was cleared, and whenever the overlay, the
    /// scene or the window changed.
    public func present(_ frame: FrameState, at placement: WindowPlacement, overlay: RGBAImage?, full: Bool) throws {
        guard drawsInWindow else { throw GLESError.unsupported("this renderer does not draw in a window's context") }
        frameNumber += 1
        let now = frameNumber
        let layer = overlay.flatMap { $0.width == mapping.outputWidth && $0.height == mapping.outputHeight ? $0 : nil }
        // Window rows go bottom to top: output y = (H - oy) - window y.
        let window = Placement(framebuffer: 0, viewportWidth: placement.drawableWidth, viewportHeight: placement.drawableHeight,
                               ax: 1, bx: Float(-placement.x), ay: -1, by: Float(placement.drawableHeight - placement.y),
                               overlay: layer != nil)
        try withContext {
            let whole = full || presented?.placement != placement || presented?.overlay != (layer != nil)
            if whole, let layer { try gl.setOverlay(layer) }
            gl.beginFrame(window)
            gl.setEdges(frame.edges)
            let draws = try moving(frame, now: now)
            if whole {
                gl.drawStill(into: window)
            } else {
                // Regions that rest now: their box back to the still image.
                let drawing = Set(draws.map { ObjectIdentifier($0.geometry) })
                for g in presented?.geometries ?? [] where !drawing.contains(ObjectIdentifier(g)) {
                    let b = outputBox(g)
                    gl.drawStill(x0: b.x0, y0: b.y0, x1: b.x1, y1: b.y1, into: window)
                }
            }
            try drawMoving(draws, frame: frame, into: window)
            presented = (draws.map(\.geometry), placement, layer != nil)
            try glCheck("drawing the frame into the window")
        }
        evictGeometries(keeping: now)
    }

    /// Forgets what was presented: the next `present` draws everything.
    public func invalidatePresented() { presented = nil }
}
