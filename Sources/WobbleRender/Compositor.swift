import WobbleCore

/// The one place a frame is composited: the renderer's pixels, then, when
/// the frame's overlay is on (`overlay(true)` or `--overlay`), a light grid,
/// the control layer and the live models with their labels, then any extra
/// shapes (the studio's handles). Every front
/// end calls this instead of painting the overlay itself.
public enum Compositor {
    public static func frame(_ state: FrameState, renderer: FrameRenderer, extra: [RegionShape] = []) throws -> RGBAImage {
        var img = try renderer.render(state)
        overlay(state, into: &img, mapping: renderer.mapping)
        if !extra.isEmpty {
            OverlayPainter.draw(extra, into: &img, mapping: renderer.mapping)
        }
        return img
    }

    /// The frame's overlay, when it is on, painted over `img`: a light grid
    /// with coordinates, the control layer's sketches, then the live models
    /// (another colour, labelled).
    public static func overlay(_ state: FrameState, into img: inout RGBAImage, mapping: OutputMapping) {
        guard state.overlayOn else { return }
        OverlayPainter.drawGrid(into: &img, mapping: mapping)
        OverlayPainter.draw(state.overlay, into: &img, mapping: mapping)
        OverlayPainter.drawModels(state.overlayModels, into: &img, mapping: mapping)
    }

    /// `shapes` drawn on a transparent layer, those `locked` (index for
    /// index) in the locked style (the studio's handles).
    public static func layer(_ shapes: [RegionShape], locked: [Bool], mapping: OutputMapping) -> RGBAImage {
        var img = RGBAImage(width: max(0, mapping.outputWidth), height: max(0, mapping.outputHeight))
        guard img.width > 0, img.height > 0 else { return img }
        let isLocked = { (i: Int) in i < locked.count && locked[i] }
        OverlayPainter.draw(shapes.indices.filter { !isLocked($0) }.map { shapes[$0] }, into: &img, mapping: mapping)
        OverlayPainter.draw(shapes.indices.filter { isLocked($0) }.map { shapes[$0] }, into: &img, mapping: mapping, style: .locked)
        return img
    }
}
