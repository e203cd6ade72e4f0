import Foundation
import WobbleCore
import WobbleSystem

/// The frames of one clip, in order, each made as "the previous frame plus
/// the boxes that changed": the renderer draws and reads back only the boxes
/// of the moving regions (`FrameDamage`, merged where they overlap) into a
/// frame kept on the CPU side, the boxes of the frame before go back to the
/// still image where this frame's boxes do not cover them (rendered once),
/// and resting regions cost nothing. Frames are byte for byte what `Compositor.frame` makes.
///
/// The overlay (`overlay(true)`, `--overlay`) is painted over a copy of
/// each frame, as `Compositor.frame` paints it; when what it draws differs
/// from the frame before (a model starts or ends), the whole frame counts as
/// changed.
///
/// `WOBBLE_WHOLE_FRAMES=1` in the environment (a testing and debugging
/// switch) makes every frame a whole-frame render (`Compositor.frame`) and
/// hands on no boxes, so the two paths can be compared in one build.
///
/// Memory is two frames (the still and the frame kept), whatever the clip's
/// length. Not thread-safe: one clip, one thread at a time.
public final class RegionFrames {
    public let renderer: FrameRenderer
    /// Whether every frame is rendered whole (`WOBBLE_WHOLE_FRAMES=1`).
    public let wholeFrames: Bool
    /// Output pixels rendered and read back so far (whole frames count whole).
    public private(set) var pixelsRendered = 0
    private var stillFrame: RGBAImage?
    /// The last frame without its overlay, and the boxes where it differs
    /// from the still image.
    private var kept: RGBAImage?
    private var keptBoxes: [PixelRect] = []
    /// What the overlay of the last frame drew (nil: no frame yet).
    private var lastOverlay: OverlayKey?

    private struct OverlayKey: Equatable {
        var on: Bool
        var sketches: [RegionShape]
        var models: [OverlayModel]
    }

    /// Whether `WOBBLE_WHOLE_FRAMES=1` is set.
    public static var wholeFramesForced: Bool { Environment.value("WOBBLE_WHOLE_FRAMES") == "1" }

    public init(renderer: FrameRenderer, wholeFrames: Bool = RegionFrames.wholeFramesForced) {
        self.renderer = renderer
        self.wholeFrames = wholeFrames
    }

    /// The output with nothing moving, rendered once.
    public func still() throws -> RGBAImage {
        if let stillFrame { return stillFrame }
        let s = try renderer.render(FrameState(index: 0, time: 0, regions: []))
        stillFrame = s
        return s
    }

    /// The still image as `state` shows it: with its overlay painted when
    /// the overlay is on (a GIF's palette, made from it, then holds the
    /// overlay's colours).
    public func stillShown(_ state: FrameState) throws -> RGBAImage {
        var s = try still()
        guard state.overlayOn else { return s }
        Compositor.overlay(state, into: &s, mapping: renderer.mapping)
        return s
    }

    /// The next frame of the clip, and the boxes outside which it equals the
    /// frame this returned before (nil: the first frame, a whole frame).
    public func next(_ state: FrameState) throws -> (image: RGBAImage, changed: [PixelRect]?) {
        let m = renderer.mapping
        if wholeFrames {
            pixelsRendered += m.outputWidth * m.outputHeight
            return (try Compositor.frame(state, renderer: renderer), nil)
        }
        let still = try still()
        let boxes = FrameDamage.boxes(state, mapping: m)
        var frame = kept ?? still
        kept = nil   // one reference: updated in place
        // The renderer sets every pixel of `boxes`: only the last frame's
        // boxes outside them go back to the still image (a region that
        // keeps moving is drawn over, not first restored).
        for b in keptBoxes {
            for part in RegionFrames.outside(b, boxes) { frame.copy(part, from: still) }
        }
        try renderer.render(state, boxes: boxes, into: &frame)
        pixelsRendered += boxes.reduce(0) { $0 + $1.area }
        let overlay = OverlayKey(on: state.overlayOn, sketches: state.overlay, models: state.overlayModels)
        var changed: [PixelRect]? = lastOverlay == nil ? nil : PixelRect.merged(keptBoxes + boxes)
        if lastOverlay != nil, overlay != lastOverlay { changed = nil }
        lastOverlay = overlay
        kept = frame
        keptBoxes = boxes
        guard state.overlayOn else { return (frame, changed) }
        var shown = frame
        Compositor.overlay(state, into: &shown, mapping: m)
        return (shown, changed)
    }

    /// The parts of `r` outside every one of `boxes`: at most four
    /// rectangles per box that cuts it (the bands above and below it, and
    /// left and right of it between them), none where one box holds it.
    static func outside(_ r: PixelRect, _ boxes: [PixelRect]) -> [PixelRect] {
        var parts = r.isEmpty ? [] : [r]
        for o in boxes where !o.isEmpty {
            parts = parts.flatMap { a -> [PixelRect] in
                guard a.intersects(o) else { return [a] }
                let top = max(a.y0, o.y0), bottom = min(a.y1, o.y1)
                return [PixelRect(x0: a.x0, y0: a.y0, x1: a.x1, y1: top), PixelRect(x0: a.x0, y0: bottom, x1: a.x1, y1: a.y1),
                        PixelRect(x0: a.x0, y0: top, x1: max(a.x0, o.x0), y1: bottom),
                        PixelRect(x0: min(a.x1, o.x1), y0: top, x1: a.x1, y1: bottom)].filter { !$0.isEmpty }
            }
        }
        return parts
    }
}
