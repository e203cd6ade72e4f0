import Foundation
import WobbleStudioCore
import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleSystem

/// Puts the studio's frames into its window: drawn by the GLES renderer
/// straight into the window's back buffer when it can, else rendered,
/// composited with the handles layer and uploaded (just the boxes that
/// changed); the chrome below. It draws what the studio core gives: the
/// frame shown with its handles (`StudioCore.shownFrame()`, what the
/// snapshot has) rendered through the core's `frames`. It remembers what it
/// presented, so that an unchanged frame is not drawn again, and profiles
/// the frames (`--profile`).
final class Presenter {
    private let frames: LiveFrames
    private let clock: TimeSource
    private let profiling: Bool

    /// The frame last presented (-1: none yet), and how many were.
    private(set) var presentedIndex = -1
    private var presentedState: FrameState?
    private var presentedKey: (generation: Int, handles: Bool) = (-1, true)
    private(set) var presentedCount = 0
    private var profile = (0.0, 0.0, 0.0, 0)
    private var profileWorst = 0.0
    private var profileSkipped = 0
    private var frame: RGBAImage?
    /// Whether the run's image has no transparent pixel (then the
    /// window copies the frame without a checkerboard behind it).
    private var imageOpaque = true
    private var opaqueChecked: Int = -1
    /// The handles layer (the GLES renderer blends it in the window) and
    /// the shapes it shows.
    private var overlayLayer: RGBAImage?
    /// Its visible pixels, for blending on the CPU (the texture path only):
    /// made from the layer when first needed.
    private var overlay: SparseOverlay?
    /// The overlay was made again since the last frame was presented.
    private var overlayRebuilt = false
    /// Whether the last frame was drawn by the renderer straight into the
    /// window (else: read back, composited, uploaded as a texture).
    private var presentedDirect = false
    /// Frames drawn straight into the window when the renderer can
    /// (`WOBBLE_STUDIO_DIRECT=0`: always through a texture, for comparison).
    let directWanted = Environment.value("WOBBLE_STUDIO_DIRECT") != "0"
    private var overlayShapes: [RegionShape]?
    private var overlayLocked: [Bool] = []
    private var overlaySelected: [Bool] = []
    /// The selected region's colours (the region the inspector shows): cyan.
    static let selectedStyle = OverlayStyle(edge: (20, 20, 20), boundary: (0, 220, 255), corner: (120, 240, 255), center: (0, 160, 255))
    private var presentedShapes: [RegionShape]?
    /// The renderer the studio made in its window's context (the core's
    /// frames own it; kept here typed, so presenting needs no downcast).
    weak var windowRenderer: GLESRenderer?
    private var presentedSize = (0, 0)
    /// Paints more into the handles layer (the cutouts' outlines, a
    /// stroke); `extraVersion` changes whenever what it paints does.
    var paintExtra: ((inout RGBAImage, OutputMapping) -> Void)?
    var extraVersion = 0
    private var overlayExtra: (version: Int, generation: Int, handles: Bool) = (-1, -1, true)
    /// Shown over the whole window instead of the picture and chrome while set.
    var cover: RGBAImage?
    private var coverShown = false

    init(frames: LiveFrames, clock: TimeSource, profile: Bool) {
        self.frames = frames
        self.clock = clock
        profiling = profile
    }

    /// Presents the frame `shown` (with its handles: those not editable
    /// drawn locked, the selected one in the selection's colours) of the
    /// run's `image` and the chrome into `window`, when something changed
    /// since the last present (or `dirty`); true when it did. Render errors
    /// go to `fail`.
    func present(into window: any StudioSurface, frame shown: StudioFrame, image: RGBAImage?, layout: Layout, dirty: Bool,
                 playing: Bool, message: () -> String, chrome drawChrome: (Int) -> RGBAImage, fail: (String) -> Void) -> Bool {
        if let cover {
            // A sheet over the whole window (the keys' help).
            guard dirty || !coverShown else { return false }
            window.marks = []
            do {
                try window.present(frame: cover, frameOpaque: true, frameChanged: true, frameDirty: nil,
                                   frameRect: (0, 0, cover.width, cover.height), chrome: RGBAImage(width: 1, height: 1),
                                   chromeY: max(layout.windowHeight, cover.height))
            } catch {
                printError("\(error)")
            }
            coverShown = true
            return true
        }
        if coverShown {
            // The sheet went: everything is drawn again.
            coverShown = false
            presentedState = nil
            presentedDirect = false
            window.invalidate()
        }
        let k = shown.index, state = shown.state, handles = shown.handlesShown
        let key = (shown.generation, handles)
        let shapes = shown.handles.map(\.shape)
        let locked = shown.handles.map { !$0.editable }
        let chosen = shown.handles.map(\.selected)
        // (No state: no clip yet.)
        let frameChanged = state != presentedState || key != presentedKey || shapes != presentedShapes || state == nil
        // Handles outside the picture (reachable after zooming out or panning).
        let marks = Presenter.outsideMarks(shapes, locked: locked, layout: layout)
        let marksChanged = marks != window.marks
        if marksChanged {
            window.marks = marks
            window.invalidate()
        }
        guard dirty || frameChanged || marksChanged || k != presentedIndex else { return false }
        let t0 = clock.now()
        if opaqueChecked != shown.generation, let img = image {
            opaqueChecked = shown.generation
            imageOpaque = !img.hasTransparentPixels
        }
        // The handles: a sparse layer (their pixels only), made again only
        // when the shapes change.
        let extra = (extraVersion, shown.generation, handles)
        if let m = frames.mapping, shapes != overlayShapes || locked != overlayLocked || chosen != overlaySelected || extra != overlayExtra
            || overlayLayer.map({ $0.width != m.outputWidth || $0.height != m.outputHeight }) ?? false {
            overlayLocked = locked
            overlaySelected = chosen
            overlayExtra = extra
            if shapes.isEmpty && (paintExtra == nil || !handles) {
                overlayLayer = nil
            } else {
                let others = shapes.indices.filter { !chosen[$0] }
                var layer = Compositor.layer(others.map { shapes[$0] }, locked: others.map { locked[$0] }, mapping: m)
                if handles { paintExtra?(&layer, m) }
                OverlayPainter.draw(shapes.indices.filter { chosen[$0] }.map { shapes[$0] }, into: &layer, mapping: m,
                                    style: Presenter.selectedStyle)
                overlayLayer = layer
            }
            overlay = nil
            overlayShapes = shapes
            overlayRebuilt = true
        }
        var t1 = clock.now()
        var t2 = t1
        if let state, let r = directRenderer(for: state, window: window, layout: layout) {
            // Straight into the window: what changed since the last frame
            // (the regions' boxes), everything after a change of scene,
            // handles or path.
            let full = !presentedDirect || key != presentedKey || overlayRebuilt || shapes != presentedShapes
            let chrome = drawChrome(k)
            t2 = clock.now()
            t1 = t2
            do {
                try window.present(imageAt: (layout.imageRect.x, layout.imageRect.y), chrome: chrome, chromeY: layout.chromeY) { place, cleared in
                    if frameChanged || cleared || full {
                        try r.draw(state, into: place, overlay: overlayLayer, full: full || cleared)
                    }
                }
                presentedDirect = true
                overlayRebuilt = false
                presentedShapes = shapes
                frame = nil
            } catch {
                r.invalidateDrawn()
                presentedDirect = false
                fail("render: \(error)")
                printError("\(error)")
            }
        } else {
            // Only the regions change between frames of one run: the window
            // uploads just their boxes (this frame's and the last one's).
            var changedBoxes: [PixelRect]? = nil
            // (A new handles layer alone, the selection changed: drawn again too.)
            let redraw = frameChanged || presentedDirect || overlayRebuilt
            if redraw, let state {
                do {
                    var img = try frames.render(state)
                    if overlay == nil { overlay = overlayLayer.map { SparseOverlay($0) } }
                    overlay?.blend(into: &img)
                    if !presentedDirect, key == presentedKey, let last = presentedState, !state.overlayOn, !last.overlayOn,
                       shapes == presentedShapes, !overlayRebuilt, img.width == presentedSize.0, img.height == presentedSize.1,
                       let m = frames.mapping {
                        changedBoxes = PixelRect.covering(state.regions + last.regions, mapping: m)
                    }
                    presentedSize = (img.width, img.height)
                    presentedShapes = shapes
                    overlayRebuilt = false
                    frame = img
                } catch {
                    fail("render: \(error)")
                    frame = nil
                }
            }
            if state == nil {
                // No clip yet (the scene failed on open): say so in the picture's place.
                let r = layout.imageRect
                var c = Canvas(width: r.w, height: r.h, color: (40, 40, 44))
                c.text("The scene did not run:", x: 12, y: 12, (235, 235, 235))
                c.text(message(), x: 12, y: 12 + StudioFont.cellHeight + 4, (255, 110, 110), maxX: r.w - 12)
                c.text("Fix it and save: the studio runs it again.", x: 12, y: 12 + 3 * (StudioFont.cellHeight + 4), (170, 200, 170))
                frame = c.image
            }
            t1 = clock.now()
            let chrome = drawChrome(k)
            t2 = clock.now()
            do {
                try window.present(frame: frame, frameOpaque: imageOpaque, frameChanged: redraw,
                                   frameDirty: changedBoxes, frameRect: layout.imageRect, chrome: chrome, chromeY: layout.chromeY)
            } catch {
                printError("\(error)")
            }
            presentedDirect = false
        }
        if profiling {
            let t3 = clock.now()
            profile.0 += t1 - t0; profile.1 += t2 - t1; profile.2 += t3 - t2; profile.3 += 1
            profileWorst = max(profileWorst, t3 - t0)
            if profile.3 == 60 {
                printError(String(format: "studio: profile ms/frame: render %.1f, chrome %.1f, present %.1f; worst frame %.1f; %d skipped",
                                  profile.0 * 1000 / 60, profile.1 * 1000 / 60, profile.2 * 1000 / 60, profileWorst * 1000,
                                  profileSkipped))
                profile = (0, 0, 0, 0)
                profileWorst = 0
                profileSkipped = 0
            }
            if playing, presentedIndex >= 0, k > presentedIndex + 1 { profileSkipped += k - presentedIndex - 1 }
        }
        presentedState = state
        presentedKey = key
        presentedIndex = k
        presentedCount += 1
        return true
    }

    /// Boxes for the handles of `shapes` that lie outside the picture but
    /// inside the picture area (the frame cannot show them).
    static func outsideMarks(_ shapes: [RegionShape], locked: [Bool], layout: Layout) -> [WindowMark] {
        var marks: [WindowMark] = []
        let r = layout.imageRect
        for (i, shape) in shapes.enumerated() {
            for p in [shape.lt, shape.rt, shape.rb, shape.lb, shape.center] where p.isFinite {
                let at = layout.windowPoint(p), wx = at.x, wy = at.y
                guard wx.magnitude < 1e6, wy.magnitude < 1e6 else { continue }
                let x = Int(wx.rounded()), y = Int(wy.rounded())
                let inside = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h
                guard !inside, layout.pictureAreaContains(x, y) else { continue }
                let isLocked = i < locked.count && locked[i]
                marks.append(WindowMark(x: x - 5, y: y - 5, w: 11, h: 11, r: 20, g: 20, b: 20))
                marks.append(isLocked ? WindowMark(x: x - 3, y: y - 3, w: 7, h: 7, r: 150, g: 150, b: 150)
                                      : WindowMark(x: x - 3, y: y - 3, w: 7, h: 7, r: 255, g: 210, b: 40))
            }
        }
        return marks
    }

    /// The renderer, when this frame can be drawn by it straight into the
    /// window: GLES in the window's context, the frame 1:1 in the image
    /// area, an opaque image (the window has no checkerboard then) and no
    /// overlay of the scene's own (that one is composited on the CPU).
    private func directRenderer(for state: FrameState, window: any StudioSurface, layout: Layout) -> GLESRenderer? {
        guard directWanted, !state.overlayOn, imageOpaque, window.drawableMatchesWindow,
              let current = try? frames.renderer(), let r = windowRenderer, current === r, r.drawsInCurrentContext,
              r.mapping.outputWidth == layout.imageRect.w, r.mapping.outputHeight == layout.imageRect.h else { return nil }
        return r
    }
}
