import WobbleCore

/// Draws frames of a clip: the source image, wobbled by `FrameState.regions`,
/// scaled to the output size. Only `FrameState` values come in: no Lua, no
/// scene objects. Overlay drawing is separate (`OverlayPainter`).
public protocol FrameRenderer: AnyObject {
    /// Source and output sizes, and how output pixels map to source pixels.
    var mapping: OutputMapping { get }
    /// Renders one frame as straight-alpha RGBA, rows top to bottom.
    func render(_ frame: FrameState) throws -> RGBAImage
    /// Sets the output pixels of `boxes` (`FrameDamage.boxes(frame, …)`, or
    /// boxes holding them) in `image`, a frame of the output size, to
    /// `render(frame)`'s, byte for byte, working on those boxes only; the
    /// other pixels stay as they are (`RegionFrames`).
    func render(_ frame: FrameState, boxes: [PixelRect], into image: inout RGBAImage) throws
}

extension FrameRenderer {
    /// Output width in pixels.
    public var outputWidth: Int { mapping.outputWidth }
    /// Output height in pixels.
    public var outputHeight: Int { mapping.outputHeight }
}

/// Maps output pixel centres to source-image coordinates (geometry stays in
/// source pixels whatever the output size).
public struct OutputMapping: Sendable, Equatable {
    public let sourceWidth: Int
    public let sourceHeight: Int
    public let outputWidth: Int
    public let outputHeight: Int

    /// A mapping from a `sourceWidth`×`sourceHeight` image to an
    /// `outputWidth`×`outputHeight` frame (both sides scaled independently).
    public init(sourceWidth: Int, sourceHeight: Int, outputWidth: Int, outputHeight: Int) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
    }

    /// Source pixels per output pixel, horizontally and vertically.
    public var scaleX: Double { Double(sourceWidth) / Double(outputWidth) }
    public var scaleY: Double { Double(sourceHeight) / Double(outputHeight) }

    /// True when the output is smaller than the source (on one axis, the
    /// other no larger): frames where regions move are then the wobbled
    /// full-size frame area-averaged, in both backends.
    public var filtersWobbledFrame: Bool {
        outputWidth <= sourceWidth && outputHeight <= sourceHeight && (outputWidth < sourceWidth || outputHeight < sourceHeight)
    }

    /// The source-image point under the centre of output pixel `(i, j)`.
    @inlinable
    public func sourcePoint(_ i: Int, _ j: Int) -> Point {
        Point((Double(i) + 0.5) * scaleX, (Double(j) + 0.5) * scaleY)
    }

    /// The output pixels whose centres' source points may lie in `box`
    /// (source pixels): columns `i0...i1`, rows `j0...j1`, clipped to the
    /// output; empty when `i0 > i1` or `j0 > j1`. Both backends bound a
    /// region's work with it, then test each pixel's source point exactly.
    /// Any box is safe: coordinates far outside the frame (or not finite)
    /// clamp to one past its edge (`Int(clamping:to:rounding:)`), so a huge
    /// box costs no more than the frame and never traps.
    func pixelBounds(covering box: Rect) -> (i0: Int, i1: Int, j0: Int, j1: Int) {
        let columns = -1...outputWidth, rows = -1...outputHeight
        return (i0: max(0, Int(clamping: box.minX / scaleX - 0.5, to: columns, rounding: .down)),
                i1: min(outputWidth - 1, Int(clamping: box.maxX / scaleX - 0.5, to: columns, rounding: .up)),
                j0: max(0, Int(clamping: box.minY / scaleY - 0.5, to: rows, rounding: .down)),
                j1: min(outputHeight - 1, Int(clamping: box.maxY / scaleY - 0.5, to: rows, rounding: .up)))
    }
}
