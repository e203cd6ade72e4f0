import Foundation
import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleStudioCore
import WobbleSystem

/// The studio's window over the studio core: it lays the picture out
/// (zoom, pan, the inspector's column, the timeline), maps keys and the
/// mouse to the core's commands (`StudioKeyMap`), and presents the frames,
/// the handles, the chrome and the sheets (help, the export chooser). It
/// holds no editing state: that is the core's. No SDL here: input arrives
/// as `StudioInput`, output leaves through `StudioSurface.present`.
final class StudioApp {
    let options: Studio.Options
    /// The studio itself: session, edits, pokes, takes, exports.
    let core: StudioCore
    var cutouts: CutoutEditor { core.cutouts }
    private var window: (any StudioSurface)?
    /// Where the window comes from (the SDL window; a fake in tests).
    private let surfaces: SurfaceFactory
    private var layout = Layout(imageWidth: 640, imageHeight: 360, screen: nil)
    /// Zoom and pan.
    private var navigator = Navigator()
    private var clock: TimeSource { core.clock }

    // Mouse.
    private var scrubbing = false
    private var mouse: (x: Int, y: Int)?
    /// A handle drag: where the press was (window pixels) and whether the
    /// mouse left it since.
    private var dragPress: (x: Int, y: Int, moved: Bool)?
    /// A stroke: where the press was and whether it moved past a click's slop.
    private var strokePress: (x: Int, y: Int, moved: Bool)?
    /// The press was a point of the magnetic outline (its release does nothing).
    private var outlinePress = false

    /// The title shown (nil: not set yet).
    private var shownTitle: String?
    /// The inspector's column as last handed to the window.
    private var shownPanel: (panel: InspectorPanel?, x: Int, y: Int)?
    /// The chooser's row last drawn (nil: none drawn).
    private var shownChooserRow: Int?
    /// Milliseconds from an edit's input to its frame presented (`-v` prints them).
    private var editLatencies: [Double] = []

    /// What the timeline's tick under the mouse is (nil: none): the
    /// core's, among the ticks there are now.
    var hovered: String? { core.hoveredTick?.label }
    /// The page of the keys' help shown (nil: none).
    private(set) var helpPage: Int?
    private var helpPages = 1
    /// Draws the frames into the window.
    private let presenter: Presenter
    /// Draws the cutouts' outlines and the stroke over the picture.
    private let cutoutPainter = CutoutPainter()

    /// A handle is grabbed within this many window pixels.
    static let grabRadius = 10.0

    init(options: Studio.Options, clock: TimeSource = MonotonicClock(), surfaces: SurfaceFactory = .sdl) throws {
        self.options = options
        self.surfaces = surfaces
        core = StudioCore(session: options.session, verbose: options.verbose, clock: clock, audio: surfaces.audio)
        presenter = Presenter(frames: core.frames, clock: clock, profile: options.profile)
    }

    // The core's state the tests and the chrome read.
    var message: String { core.message }
    var messageIsError: Bool { core.messageIsError }
    var sceneError: String? { core.sceneError }
    var helpMessage: String { core.helpMessage }
    var soundSync: SyncStats { core.soundSync }
    var isExporting: Bool { core.isExporting }

    // MARK: Running

    /// The preview's renderer lives in the window's context unless the CPU
    /// is asked for (`--backend cpu`): frames are drawn straight into the
    /// back buffer at the size shown (no read-back, no upload). Where that
    /// context cannot host it, the headless one does. Exports and stills do
    /// not use it: they render with the engine's backend choice, as the
    /// command line does, so the same scene gives the same bytes.
    private func drawInTheWindowsContext() {
        guard options.session.backend != .cpu, presenter.directWanted, let w = window else { return }
        let verbose = options.verbose
        nonisolated(unsafe) var windowFailed = false
        core.frames.makeRenderer = { [weak w, weak self] img, m in
            if !windowFailed, let w {
                do {
                    try w.makeCurrent()
                    let r = try GLESRenderer(inCurrentContext: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight)
                    self?.presenter.windowRenderer = r
                    if verbose { printError("studio: frames drawn in the window's context: \(r.platformDescription)") }
                    return r
                } catch {
                    windowFailed = true
                    printError("studio: the window's context cannot render (\(error)); rendering headless")
                }
            }
            return try FrameRenderers.make(.gles, source: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight, verbose: verbose)
        }
    }

    func run() -> Int32 {
        let started = clock.now()
        // The first run goes on off the window thread: a quick scene has
        // ended before the window opens (its image sizes the window); a
        // slow one opens the window at once on the picture the scene names,
        // saying `running… N s` until its clip comes (Esc, zoom and the
        // timeline answer meanwhile).
        core.start()
        layout = Layout(imageWidth: core.run.image?.width ?? 640, imageHeight: core.run.image?.height ?? 360,
                        screen: surfaces.usableBounds())
        applyLayout()
        do {
            window = try surfaces.open(core.title, layout.windowWidth,
                                       layout.windowHeight, options.position)
        } catch {
            printError("\(error)")
            return 1
        }
        core.imageSizeChanged = { [unowned self] in adoptImageSize() }
        defer { core.imageSizeChanged = nil }
        // If the display goes away under us, the take being recorded is
        // still written (the process then exits with status 1).
        surfaces.onDisplayLost { [weak self] in self?.core.finishRecordingOnQuit() }
        defer { surfaces.onDisplayLost(nil) }
        describeLayout()
        if options.verbose, let w = window {
            printError("studio: \(w.preserved ? "partial redraws (the back buffer is preserved)" : "full redraws")")
        }
        drawInTheWindowsContext()
        while true {
            if let q = options.quitAfter, clock.now() - started >= q { break }
            if Signals.received != nil { break }
            // The core says when its next turn is due (the next frame, the
            // inputs' next look, a run polled); unpaced, at once.
            let wait = options.unpaced ? 0 : core.secondsToNextTurn(presented: presenter.presentedIndex)
            let inputs = window?.events(timeoutMs: Int((wait * 1000).rounded(.up))) ?? []
            var quit = false
            for i in inputs where !quit && handle(i) { quit = true }
            if quit { break }
            showChooser()
            updateTitle()
            core.tick()
            present()
        }
        core.finish()
        if options.verbose, !editLatencies.isEmpty {
            let sorted = editLatencies.sorted()
            printError("studio: \(sorted.count) edits shown, median \(fmt1(sorted[sorted.count / 2])) ms, worst \(fmt1(sorted[sorted.count - 1])) ms after the input")
        }
        if options.verbose {
            let s = clock.now() - started
            printError("studio: \(presenter.presentedCount) frames presented in \(String(format: "%.2f", s)) s")
        }
        // The renderer's GL names go while the window's context lives.
        core.frames.makeRenderer = nil
        window = nil
        return Signals.received.map { 128 + $0 } ?? 0
    }

    /// The window is sized again for a run's image of another size.
    private func adoptImageSize() {
        guard let img = core.run.image, window != nil else { return }
        layout = Layout(imageWidth: img.width, imageHeight: img.height, screen: surfaces.usableBounds())
        applyLayout()
        window?.resize(width: layout.windowWidth, height: layout.windowHeight)
        describeLayout()
    }

    /// Frames are rendered at the size they are shown: the source's at 1:1,
    /// else the image area's (what `--width W --height H` renders).
    private func applyLayout() {
        navigator.view = layout.view
        core.frames.outputSize = layout.scale != 1 ? (layout.imageRect.w, layout.imageRect.h) : nil
    }

    /// Lays the picture out again as `view` says (zoom, pan, fit): the
    /// frames are then rendered at the size shown.
    private func show(_ view: PictureView) {
        layout = Layout(imageWidth: layout.sourceWidth, imageHeight: layout.sourceHeight,
                        window: (layout.windowWidth, layout.windowHeight), view: view)
        applyLayout()
        window?.invalidate()
        describeLayout()
        core.dirty = true
    }

    private func describeLayout() {
        guard options.verbose, let w = window else { return }
        let (x, y) = w.position
        let r = layout.imageRect
        printError("studio: window \(layout.windowWidth)x\(layout.windowHeight) at \(x),\(y); image area \(r.x),\(r.y) \(r.w)x\(r.h); scale \(fmt(layout.scale))")
    }

    /// The window's title: the scene's name, marked while edits are unsaved.
    private func updateTitle() {
        let t = core.title
        guard t != shownTitle, let window else { return }
        shownTitle = t
        window.setTitle(t)
        if options.verbose { printError("studio: title \(t)") }
    }

    /// A window point as an image point, and the grab radius in image pixels.
    private func imagePoint(_ x: Int, _ y: Int) -> Point { layout.imagePointUnclamped(x, y) }
    private var grabRadius: Double { StudioApp.grabRadius / layout.scale }

    /// The timeline's frame under window x `x`, nil when the clip is empty.
    private func scrub(_ x: Int) {
        let length = max(core.timelineLength, 0)
        guard length > 0 else { return }
        let f = layout.timelineFraction(x)
        core.perform(.seek(frame: Int((f * length * (core.run.clip?.fps ?? 30)).rounded(.down))))
    }

    // MARK: Input

    /// Handles one input; true to quit.
    private func handle(_ input: StudioInput) -> Bool {
        switch input {
        case .quit:
            return core.perform(.quit(closing: true))
        case .redraw:
            window?.invalidate()
            core.dirty = true
        case .resized(let w, let h):
            // Someone else (a window manager) sized the window: the picture
            // is laid out in the new size (fitted, never enlarged), the mouse
            // follows, and frames are rendered at the size shown.
            window?.adopt(width: w, height: h)
            layout = Layout(imageWidth: core.run.image?.width ?? layout.sourceWidth,
                            imageHeight: core.run.image?.height ?? layout.sourceHeight, window: (w, h), view: navigator.view)
            applyLayout()
            describeLayout()
            core.dirty = true
        case .windowGone:
            printError("studio: the window was destroyed by another program; quitting")
            return true
        case .key(let key, let shift, let ctrl):
            core.dirty = true
            return handleKey(key, shift: shift, ctrl: ctrl)
        case .wheel(let x, let y, let steps):
            if layout.pictureAreaContains(x, y) {
                show(navigator.wheel(steps, at: x, y, layout: layout))
                // (What `F` said of the fit is no longer so.)
                core.say("zoom \(Int((layout.scale * 100).rounded()))% (F fits)")
            }
        case .panStart(let x, let y, let space):
            // A Space + drag pans: the press's play/pause is given back.
            if navigator.beginPan(x, y, layout: layout, space: space) { core.perform(.togglePlay) }
            core.dirty = true
        case .panEnd(let x, let y):
            if let v = navigator.panned(x, y, layout: layout) { show(v) }
            navigator.endPan()
        case .text(let t):
            for c in StudioKeyMap.commands(text: t, renaming: core.inspector.isRenaming, choosing: core.chooser != nil) {
                core.perform(c)
            }
        case .select(let x, let y):
            mouse = (x, y)
            core.dirty = true
            core.perform(.backToEditing)
            core.perform(.select(at: imagePoint(x, y), radius: grabRadius))
        case .mouseDown where helpPage != nil, .strokeStart where helpPage != nil:
            closeHelp()
        case .strokeStart(let x, let y, let object):
            mouse = (x, y)
            core.dirty = true
            core.perform(.backToEditing)
            guard layout.pictureAreaContains(x, y) else { break }
            strokePress = (x, y, false)
            core.perform(.strokeBegin(at: imagePoint(x, y), radius: CutoutPainter.brush / layout.scale, object: object))
        case .mouseDown where core.chooser != nil:
            core.perform(.chooserCancel)
        case .mouseDown(let x, let y):
            mouse = (x, y)
            core.dirty = true
            core.perform(.backToEditing)
            if layout.panelContains(x, y) {
                pressPanel(x, y)
            } else if core.cutouts.isOutlining, layout.pictureAreaContains(x, y) {
                // A point of the magnetic outline (no poke, no drag).
                outlinePress = true
                core.perform(.outlinePoint(imagePoint(x, y)))
            } else if layout.pictureAreaContains(x, y), core.grabbable(at: imagePoint(x, y), radius: grabRadius) != nil {
                dragPress = (x, y, false)
                core.perform(.grab(at: imagePoint(x, y), radius: grabRadius))
            } else if layout.timelineContains(x, y) {
                guard !core.recorder.isRecording else { core.say("recording: R stops it first"); break }
                let c = chrome(index: core.currentIndex)
                let tick = Chrome.tick(near: x, in: c.ticks, width: c.width, length: c.length)
                core.perform(.pressTick(tick))
                if tick?.ref != nil { break }
                scrubbing = true
                core.perform(.pause)
                scrub(x)
            } else if let p = layout.imagePoint(x, y), core.run.clip != nil {
                core.perform(.pokeBegin(p))
            }
        case .mouseMove(let x, let y):
            mouse = (x, y)
            hover(x, y)
            if let v = navigator.panned(x, y, layout: layout) { show(v) }
            if core.editor.isDragging { dragTo(x, y) }
            if core.cutouts.isStroking { strokeTo(x, y); core.dirty = true }
            if scrubbing { scrub(x) }
            if core.timelineEditor.isDragging { core.perform(.dragTick(to: timelineTime(x))) }
            if core.inspector.isScrubbing { core.perform(.inspectorSlide(sliderFraction(x))) }
        case .mouseUp(let x, let y):
            if outlinePress {
                outlinePress = false
            } else if core.cutouts.isStroking {
                strokeTo(x, y)
                strokePress = nil
                core.perform(.strokeEnd)
            } else if core.inspector.isScrubbing {
                core.perform(.inspectorRelease)
            } else if core.timelineEditor.isDragging {
                core.perform(.endTickDrag(at: timelineTime(x)))
            } else if core.editor.isDragging {
                dragTo(x, y)
                dragPress = nil
                core.perform(.dragEnd)
            } else if scrubbing {
                scrub(x)
                scrubbing = false
            } else {
                core.perform(.pokeEnd(imagePoint(x, y)))
            }
        case .accel(let x, let y, _):
            core.perform(.accelerometer(x: x, y: y))
        }
        return false
    }

    /// The dragged handle follows the mouse, kept inside the picture area
    /// (never under the inspector's column or the timeline, where it could
    /// not be grabbed again).
    private func dragTo(_ x: Int, _ y: Int) {
        guard var d = dragPress, x != d.x || y != d.y || d.moved, let p0 = core.editor.dragStartPoint else { return }
        d.moved = true
        dragPress = d
        let s = layout.scale
        var w = layout.windowPoint(Point(p0.x + Double(x - d.x) / s, p0.y + Double(y - d.y) / s))
        let a = layout.pictureArea
        w = Point(min(max(w.x, Double(a.x)), Double(a.x + a.w - 1)), min(max(w.y, Double(a.y)), Double(a.y + a.h - 1)))
        let q = layout.imagePointUnclamped(0, 0)
        core.perform(.dragTo(Point(q.x + w.x / s, q.y + w.y / s)))
    }

    /// A stroke goes on once the mouse left the press by a click's slop.
    private func strokeTo(_ x: Int, _ y: Int) {
        guard var s = strokePress else { return }
        if !s.moved, abs(x - s.x) < CutoutPainter.clickSlop, abs(y - s.y) < CutoutPainter.clickSlop { return }
        s.moved = true
        strokePress = s
        core.perform(.strokeTo(imagePoint(x, y)))
    }

    /// The clip time under window x `x` on the timeline.
    private func timelineTime(_ x: Int) -> Double { layout.timelineFraction(x) * chrome(index: core.currentIndex).length }

    /// The inspector's column as it is now.
    private func inspectorPanel() -> InspectorPanel {
        let r = layout.panelRect
        let v = core.inspector.shown()
        return InspectorPanel(width: r.w, height: r.h, parameters: v.parameters, name: v.name, origin: v.origin,
                              readOnly: v.readOnly, focused: v.focused, typing: v.typing,
                              typingSelected: core.inspector.typingSelected, caret: core.inspector.caret,
                              motions: core.inspector.motions.models.map(\.name))
    }

    /// A press in the inspector's column: the row under it, its choice, where on the slider.
    private func pressPanel(_ x: Int, _ y: Int) {
        let r = layout.panelRect
        let panel = inspectorPanel()
        let px = x - r.x, py = y - r.y
        guard let hit = panel.rows().enumerated().first(where: { py >= $0.element.y && py < $0.element.y + $0.element.h }) else { return }
        let choice = panel.choices(hit.element.row).first(where: { px >= $0.x && px < $0.x + $0.w })?.label
        core.perform(.inspectorPress(row: hit.offset, choice: choice, fraction: sliderFraction(x)))
    }

    /// Where window x `x` is on the inspector's sliders, 0 to 1.
    private func sliderFraction(_ x: Int) -> Double {
        let r = layout.panelRect
        let (sx, sw) = inspectorPanel().sliderX
        return min(max(Double(x - r.x - sx) / Double(max(1, sw - 1)), 0), 1)
    }

    private func handleKey(_ key: StudioKey, shift: Bool, ctrl: Bool) -> Bool {
        let addAt = { [self] () -> Point in
            // At the mouse, else the middle of the picture area (zoomed: the part in view).
            let a = layout.pictureArea
            return mouse.flatMap { layout.imagePoint($0.x, $0.y) } ?? layout.imagePointUnclamped(a.x + a.w / 2, a.y + a.h / 2)
        }
        // The question before quitting and a name being typed take every
        // key (a name's characters come as text).
        if core.isAskingToQuit || core.inspector.isRenaming {
            guard let c = StudioKeyMap.command(for: key, shift: shift, ctrl: ctrl, in: core, addAt: addAt) else { return false }
            return core.perform(c)
        }
        if key != .space { navigator.otherKey() }
        if let page = helpPage {
            // The help is up: Down pages on, any other key closes it.
            if key == .down, page + 1 < helpPages { showHelp(page: page + 1) } else { closeHelp() }
            return false
        }
        if key == .help {
            showHelp(page: 0)
            return false
        }
        if key == .f, core.chooser == nil {
            // Zoom is the window's: F fits, whatever the studio is doing.
            show(layout.fitted)
            core.say("fitted: \(Int((layout.scale * 100).rounded()))% (wheel zooms, middle or Space+drag pans)")
            return false
        }
        guard let command = StudioKeyMap.command(for: key, shift: shift, ctrl: ctrl, in: core, addAt: addAt) else { return false }
        // (Space with the chooser open closes it: no pan.)
        let accepted = !core.recorder.isRecording && core.chooser == nil
        if core.perform(command) { return true }
        if key == .space, accepted { navigator.spacePressed() }
        return false
    }

    // MARK: Presenting

    private func present() {
        guard let window else { return }
        let shown = core.shownFrame()
        let k = shown.index
        presenter.extraVersion = core.cutouts.overlayVersion
        presenter.paintExtra = core.run.clip?.cutouts.isEmpty == false || core.cutouts.isStroking || core.cutouts.isOutlining
            ? { [unowned self] in
                cutoutPainter.paint(into: &$0, mapping: $1, clip: core.run.clip, stroke: core.cutouts.strokeShown,
                                    outline: core.cutouts.outlinePoints)
            } : nil
        // The inspector's column, drawn again only when what it shows
        // changed; none over a sheet (the help, the export chooser).
        let r = layout.panelRect
        let panel = r.w > 0 && presenter.cover == nil ? inspectorPanel() : nil
        if shownPanel == nil || shownPanel?.panel != panel || shownPanel?.x != r.x || shownPanel?.y != r.y {
            shownPanel = (panel, r.x, r.y)
            window.setPanel(panel?.image, x: r.x, y: r.y)
        }
        guard presenter.present(into: window, frame: shown, image: core.run.image, layout: layout, dirty: core.dirty,
                                playing: core.playing, message: { [unowned self] in core.message },
                                chrome: { [unowned self] in chrome(index: $0).image }, fail: { [unowned self] in core.fail($0) }) else { return }
        core.dirty = false
        if let t = core.editor.editInputTime, !core.editor.editsPending, !core.isRunning {
            core.editor.editInputTime = nil
            let ms = (clock.now() - t) * 1000
            editLatencies.append(ms)
            if options.verbose { printError("studio: edit shown \(fmt1(ms)) ms after the input") }
        }
        core.framePresented(k, count: presenter.presentedCount)
        if options.verbose {
            printError("studio: frame \(k) presented (run \(core.run.generation)\(core.playing ? "" : ", paused")\(core.recorder.isRecording ? ", recording" : ""))")
        }
    }

    /// The chrome as it is now (frame `k` shown).
    private func chrome(index k: Int) -> Chrome {
        Chrome(
            width: layout.windowWidth, frame: k, frameCount: core.run.clip?.frameCount ?? 0, fps: core.run.clip?.fps ?? 30,
            playhead: core.playhead, clipLength: core.timelineLength, scriptedDuration: core.run.scriptedDuration, ticks: core.ticks,
            recording: core.recorder.isRecording, playing: core.playing, unsavedEdits: core.run.unsaved,
            message: core.message, messageIsError: core.messageIsError, hovered: hovered, sceneError: core.sceneError,
            warnings: core.warningsShown)
    }

    /// The rows under the status line with their kinds, as drawn now.
    var chromeRows: [(text: String, kind: Chrome.RowKind)] { chrome(index: core.currentIndex).messageRowsShown }

    /// The status rows under the status line as they are drawn now.
    var statusRows: [String] { chrome(index: core.currentIndex).messageLines }

    /// Names the tick under the mouse when it is over the timeline (the
    /// core finds it among its ticks: within 4 pixels of the mouse).
    private func hover(_ x: Int, _ y: Int) {
        let before = hovered
        if layout.timelineContains(x, y), !scrubbing {
            let c = chrome(index: core.currentIndex)
            // Pixels to seconds as `Chrome.x` places the ticks.
            let pixel = c.length / Double(max(1, c.width - 2 * Layout.timelinePad - 1))
            let at = min(max(Double(x - Layout.timelinePad) * pixel, 0), c.length)
            core.perform(.hoverTimeline(at: at, within: 4.5 * pixel))
        } else {
            core.perform(.hoverTimeline(at: nil, within: 0))
        }
        if options.verbose, let now = hovered, now != before { printError("studio: tick: \(now)") }
    }

    private func showHelp(page: Int) {
        let sheet = HelpSheet.image(width: layout.windowWidth, height: layout.windowHeight, page: page, message: core.helpMessage)
        helpPages = sheet.pages
        helpPage = min(page, sheet.pages - 1)
        presenter.cover = sheet.image
        core.dirty = true
    }

    private func closeHelp() {
        helpPage = nil
        presenter.cover = nil
        core.dirty = true
    }

    /// Draws the `Shift+E` chooser over the window while it is open (again
    /// when its row moved), and takes it away when it closed.
    private func showChooser() {
        let row = core.chooser?.row
        guard helpPage == nil, row != shownChooserRow || (row != nil && presenter.cover == nil) else { return }
        shownChooserRow = row
        if let c = core.chooser {
            // A looping clip is one period: what the export writes is its frames.
            let written = core.run.clip.map(\.length)
            presenter.cover = c.image(width: layout.windowWidth, height: layout.windowHeight,
                                      loopPeriod: core.run.clip?.loop == nil ? nil : written,
                                      clipSeconds: core.run.clip == nil ? nil : core.run.scriptedDuration)
        } else {
            presenter.cover = nil
        }
        core.dirty = true
    }
}
