import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleEngine
import WobbleSystem

/// The studio's state and behaviour: a live session shown in a window,
/// transport, pokes, takes and hot reload. No SDL here: input arrives as
/// `StudioInput`, output leaves through `StudioSurface.present`.
final class StudioApp {
    let options: Studio.Options
    let session: LiveSession
    let watch: InputWatch
    private var window: (any StudioSurface)?
    /// Where the window comes from (the SDL window; a fake in tests).
    private let surfaces: SurfaceFactory
    private var layout = Layout(imageWidth: 640, imageHeight: 360, screen: nil)
    /// Zoom and pan.
    private var navigator = Navigator()

    // Transport.
    /// The clock every time of the studio is read from (injected: tests use a manual one).
    private let clock: StudioClock
    private var transport: Transport
    private var playhead: Double { transport.playhead }
    private var playing: Bool { transport.playing }
    private var handles = true

    /// Recording a take.
    private let recorder: TakeRecorder
    /// Exports (`E`) and stills (`P`).
    private let exporter: Exporter
    /// The soundtrack, played with the playhead (its clock drives it).
    private let player: SoundPlayer
    /// The run and seek count the sound last followed.
    private var soundSeen = (generation: -1, clipLength: -1.0, jumps: 0, toldUnavailable: false)

    // Mouse.
    private var scrubbing = false
    private var pokeStart: Point?
    private var mouse: (x: Int, y: Int)?

    /// Editing the sketches: drags, adds, undo, save.
    private let editor: SketchEditor
    /// The selected region's name and parameters, in the column right of the picture.
    private let inspector: Inspector
    /// Cutouts: `C`, strokes, `Shift`+click (GrabCut on a worker).
    let cutouts: CutoutEditor
    /// Bakes takes, selects, deletes and moves ticks.
    private let timelineEditor: TimelineEditor
    /// Asking before quitting with unsaved edits.
    private var quitGuard = QuitGuard()
    /// The title shown (nil: not set yet).
    private var shownTitle: String?
    /// The inspector's column as last handed to the window.
    private var shownPanel: (panel: InspectorPanel?, x: Int, y: Int)?
    /// Milliseconds from an edit's input to its frame presented (`-v` prints them).
    private var editLatencies: [Double] = []

    // Controller accelerometer (high-pass: gravity removed).
    private var gravity: (Double, Double)?
    private var lastControllerShake = -1.0

    // Messages and presenting.
    /// What the timeline's tick under the mouse is (nil: none).
    private(set) var hovered: String?
    /// The page of the keys' help shown (nil: none).
    private(set) var helpPage: Int?
    private(set) var message = ""
    /// The error of the scene's last run, shown until the scene runs again
    /// (nil after a good run): other messages do not hide it.
    private(set) var sceneError: String?
    /// The last run's error printed on stderr (nil after a good run).
    private var lastPrintedError: String?
    private(set) var messageIsError = false
    private var dirty = true
    /// Draws the frames into the window.
    private let presenter: Presenter

    // Runs of the scene off the window thread (`LiveSession.requestRun`):
    // the files whose change the run in flight is for (nil: an edit or a
    // poke), and those that changed while it ran (the next run's).
    private var flightReasons: [String]?
    private var queuedReasons: [String]?

    /// How long the window waits for input while a run is in flight before
    /// it looks whether the run has finished.
    static let runPollInterval = 0.004
    /// How long the window waits for the scene's first run before it opens
    /// without its clip (real seconds).
    static let firstRunWait = 0.25
    /// When the first run began, while it goes on (nil after it ended).
    private var firstRunStarted: Double?
    /// The whole seconds of the first run last shown.
    private var firstRunShown = -1

    /// `running… N s` while the first run goes on.
    private func showFirstRunProgress() {
        guard let t0 = firstRunStarted else { return }
        let n = Int(max(0, clock.now() - t0))
        guard n != firstRunShown else { return }
        firstRunShown = n
        say("\(sceneName): running… \(n) s (Esc quits)")
    }

    init(options: Studio.Options, clock: StudioClock = MonotonicClock(), surfaces: SurfaceFactory = .sdl) throws {
        self.options = options
        self.clock = clock
        self.surfaces = surfaces
        transport = Transport(clock: clock)
        session = LiveSession(options: options.session)
        editor = SketchEditor(session: session, clock: clock, verbose: options.verbose)
        inspector = Inspector(session: session, editor: editor)
        timelineEditor = TimelineEditor(session: session, editor: editor)
        cutouts = CutoutEditor(session: session, editor: editor, clock: clock, verbose: options.verbose)
        recorder = TakeRecorder(options: options.session, verbose: options.verbose)
        exporter = Exporter(options: options.session)
        presenter = Presenter(session: session, clock: clock, profile: options.profile)
        player = SoundPlayer(open: surfaces.audio)
        // Only what the scene reads: not the renders, stills or screenshots
        // saved beside it.
        watch = InputWatch(scenePath: options.session.scenePath, tree: false)
        handles = ProcessInfo.processInfo.environment["WOBBLE_STUDIO_HANDLES"] != "0"
        let base = ScenePaths.baseName(options.session.scenePath)
        watch.ignore = { name in name.hasPrefix(base + "-take-") && name.hasSuffix(".lua") }
        if options.verbose { watch.log = { printError($0) } }
        editor.status = { [unowned self] in $1 ? fail($0) : say($0) }
        recorder.status = editor.status
        cutouts.status = editor.status
        cutouts.select = { [unowned self] in inspector.select($0, quiet: true) }
        exporter.status = editor.status
        player.status = editor.status
    }

    /// The scene's file name (a `PathBytes` string: `say`, `fail` and
    /// `printError` show it readably).
    var sceneName: String { ScenePaths.name(options.session.scenePath) }

    // MARK: Running

    func run() -> Int32 {
        let started = clock.now()
        // The first run goes on off the window thread: a quick scene has
        // ended before the window opens (its image sizes the window); a
        // slow one opens the window at once on the picture the scene names,
        // saying `running… N s` until its clip comes (Esc, zoom and the
        // timeline answer meanwhile).
        session.requestRun()
        if session.waitForRun(upTo: StudioApp.firstRunWait), let collected = session.collectRun() {
            if case .committed(let ok) = collected { showRun(ok, reason: nil, oldSize: nil) }
        } else {
            session.showProvisionalStill()
            firstRunStarted = started
            showFirstRunProgress()
            if options.verbose { printError("studio: the window opens while the scene's first run goes on") }
        }
        watch.reset(extra: session.inputs)
        layout = Layout(imageWidth: session.image?.width ?? 640, imageHeight: session.image?.height ?? 360,
                        screen: surfaces.usableBounds())
        applyLayout()
        do {
            window = try surfaces.open(title, layout.windowWidth,
                                       layout.windowHeight, options.position)
        } catch {
            printError("\(error)")
            return 1
        }
        // If the display goes away under us, the take being recorded is
        // still written (the process then exits with status 1).
        surfaces.onDisplayLost { [weak self] in self?.finishRecordingOnQuit() }
        defer { surfaces.onDisplayLost(nil) }
        describeLayout()
        if options.verbose, let w = window {
            printError("studio: \(w.preserved ? "partial redraws (the back buffer is preserved)" : "full redraws")")
        }
        if options.session.backend == .gles, presenter.directWanted, let w = window {
            // The GLES renderer lives in the window's context: frames are
            // drawn straight into the back buffer (no read-back, no upload).
            // Where that context cannot host it, the headless one does.
            let verbose = options.verbose
            nonisolated(unsafe) var windowFailed = false
            session.makeRenderer = { [weak w, weak self] img, m in
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
        var nextPoll = clock.now() + watch.pollInterval
        while true {
            let now = clock.now()
            if let q = options.quitAfter, now - started >= q { break }
            if Signals.received != nil { break }
            var wait = max(0, nextPoll - now)
            if playing || recorder.isRecording, let clip = session.clip, !options.unpaced {
                // The playhead as it is now (it was last moved before the
                // previous frame was drawn), and the next frame's time.
                let current = transport.current(at: now)
                let due = session.frameIndex(at: current)
                if due == presenter.presentedIndex {
                    let next = Double(due + 1) / clip.fps
                    wait = min(wait, max(0, next - current))
                } else {
                    // A frame is due that is not on screen (the last one took
                    // longer than a frame): draw it now, not at the next one's time.
                    wait = 0
                }
            }
            // A wait of a millisecond or two costs more than it saves on a busy
            // machine (the process gives up its turn): poll instead.
            if session.isRunning { wait = min(wait, StudioApp.runPollInterval) }
            if exporter.isExporting { wait = min(wait, 0.1) }
            if cutouts.isComputing { wait = min(wait, StudioApp.runPollInterval) }
            if options.unpaced || dirty || wait < 0.002 { wait = 0 }
            let inputs = window?.events(timeoutMs: Int((wait * 1000).rounded(.up))) ?? []
            var quit = false
            for i in inputs where !quit && handle(i) { quit = true }
            if quit { break }
            updateTitle()
            if editor.editsPending {
                editor.editsPending = false
                // The scene runs with the edits once per batch of input.
                requestRun()
                dirty = true
            }
            if clock.now() >= nextPoll {
                if let changed = watch.poll(extra: session.inputs) {
                    requestRun(reloading: changed)
                }
                nextPoll = clock.now() + watch.pollInterval
            }
            collectRun()
            if cutouts.poll() { dirty = true }
            // (The seconds are shown while no other message took the row.)
            exporter.poll(now: clock.now(), showProgress: message.hasPrefix("exporting"))
            advance()
            present()
        }
        // A run in flight is abandoned (its script stops at its next
        // instruction count hook, its result is dropped): the studio exits
        // promptly; nothing it would write is lost (takes and saves are
        // written on this thread, atomically, before now).
        if session.isRunning {
            let ended = session.abandonRun(waitingUpTo: 1)
            if options.verbose { printError("studio: the run in flight was abandoned\(ended ? "" : " (still ending)")") }
        }
        finishRecordingOnQuit()
        exporter.cancel()
        player.close()
        if options.verbose, let line = player.sync.summary { printError(line) }
        if session.hasUnsavedEdits, !(editor.keptUnsaved && session.sceneFileIsGone) {
            let names = editor.editedNames
            let n = names.count
            printError("wobble-run: \(sceneName): \(n) unsaved sketch edit\(n == 1 ? "" : "s") not saved (\(names.joined(separator: ", ")); Ctrl+S saves them)")
        }
        if options.verbose, !editLatencies.isEmpty {
            let sorted = editLatencies.sorted()
            printError("studio: \(sorted.count) edits shown, median \(fmt1(sorted[sorted.count / 2])) ms, worst \(fmt1(sorted[sorted.count - 1])) ms after the input")
        }
        if options.verbose {
            let s = clock.now() - started
            printError("studio: \(presenter.presentedCount) frames presented in \(String(format: "%.2f", s)) s")
        }
        // The renderer's GL names go while the window's context lives.
        session.makeRenderer = nil
        window = nil
        return Signals.received.map { 128 + $0 } ?? 0
    }

    /// Runs the scene again off the window thread (the last good clip goes
    /// on playing meanwhile), for the files that changed (nil: for an edit
    /// or a poke). A run asked for while one is in flight starts when it
    /// ends (one for any number of asks); `collectRun` swaps it in.
    private func requestRun(reloading changed: [String]? = nil) {
        if session.isRunning {
            if let changed {
                queuedReasons = StudioApp.merged(queuedReasons, changed)
                if options.verbose { printError("studio: \(changed.joined(separator: ", ")) changed while the scene runs: it runs again after this run") }
            }
        } else {
            flightReasons = changed
        }
        session.requestRun()
    }

    private static func merged(_ a: [String]?, _ b: [String]?) -> [String]? {
        guard let a else { return b }
        guard let b else { return a }
        var seen = Set<String>()
        return (a + b).filter { seen.insert($0).inserted }
    }

    /// Swaps in a run that finished off the window thread (the playhead
    /// keeps its time), or shows its error.
    private func collectRun() {
        let oldSize = session.image.map { ($0.width, $0.height) }
        guard let collected = session.collectRun() else {
            showFirstRunProgress()
            return
        }
        if firstRunStarted != nil, case .committed(let ok) = collected {
            // The first run ended: its clip (or its error) replaces the still.
            firstRunStarted = nil
            flightReasons = nil
            showRun(ok, reason: nil, oldSize: oldSize)
            watch.reset(extra: session.inputs)
            dirty = true
            return
        }
        switch collected {
        case .superseded(let shown):
            // Pokes or edits came while it ran: it ran without them, so the
            // session runs again with them (its clip plays meanwhile).
            flightReasons = StudioApp.merged(flightReasons, queuedReasons)
            queuedReasons = nil
            if shown {
                sceneError = nil
                adoptImageSize(oldSize)
            }
            if options.verbose { printError("studio: a run was superseded (pokes or edits came while it ran); running again") }
        case .committed(let ok):
            if ok {
                lastPrintedError = nil
                sceneError = nil
                printWarningsIfChanged()
            }
            let reason = flightReasons
            flightReasons = session.isRunning ? queuedReasons : nil
            queuedReasons = nil
            if let reason {
                showRun(ok, reason: reason, oldSize: oldSize)
            } else if !ok {
                // A run for an edit, a poke or a save failed: in the window
                // and on stderr, like a reload's.
                showRun(false, reason: nil, oldSize: oldSize)
            }
        }
        dirty = true
    }

    /// Says how a run of the scene (again) went; on failure the last good
    /// clip stays.
    private func showRun(_ ok: Bool, reason: [String]?, oldSize: (Int, Int)?) {
        if ok {
            sceneError = nil
            if reason != nil, session.hasUnsavedEdits, let base = session.editBase, base != session.sceneText {
                // Another program saved the scene: the edits go into its text
                // on the next save, unless it changed what they change.
                if let conflict = session.mergeProblem() {
                    fail(conflict)
                } else {
                    say("\(sceneName) changed on disk: Ctrl+S saves the unsaved edits into it")
                }
            } else if let r = reason {
                say(r.count == 1 ? "reloaded: \(r[0]) changed" : "reloaded: \(r[0]) and \(r.count - 1) more changed")
            } else {
                say("\(sceneName): \(session.clip?.frameCount ?? 0) frames at \(fmt(session.clip?.fps ?? 30)) fps")
            }
            if options.verbose { printError("studio: reloaded (run \(session.generation))") }
            printWarningsIfChanged()
            adoptImageSize(oldSize)
        } else if let e = session.error {
            let first = String(e.message.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            // Once per error: a drag re-runs the scene at every step.
            if e.message != lastPrintedError {
                printError(e.message)
                if let d = e.details, !d.isEmpty, options.verbose { printError(d) }
                lastPrintedError = e.message
            }
            let shown = session.clip == nil || session.isProvisional ? first : "\(first) (playing the last good run)"
            sceneError = PathBytes.display(shown)
            fail(shown)
        }
        dirty = true
    }

    /// The warnings last printed on stderr.
    private var printedWarnings: [String] = []

    /// Prints the run's warnings on stderr as a headless render does, once
    /// each time they change (a drag re-runs the scene at every step).
    private func printWarningsIfChanged() {
        let now = session.warnings
        guard now != printedWarnings else { return }
        printedWarnings = now
        for w in now { printError("wobble-run: warning: \(w)") }
        if now.isEmpty && options.verbose { printError("studio: no warnings") }
    }

    /// The window is sized again when a run brought an image of another
    /// size than `oldSize`.
    private func adoptImageSize(_ oldSize: (Int, Int)?) {
        let sizeChanged = session.image.map { img in oldSize.map { $0 != (img.width, img.height) } ?? true } ?? false
        if let img = session.image, sizeChanged, window != nil {
            layout = Layout(imageWidth: img.width, imageHeight: img.height, screen: surfaces.usableBounds())
            applyLayout()
            window?.resize(width: layout.windowWidth, height: layout.windowHeight)
            describeLayout()
        }
    }

    /// Frames are rendered at the size they are shown: the source's at 1:1,
    /// else the image area's (what `--width W --height H` renders).
    private func applyLayout() {
        navigator.view = layout.view
        session.outputSize = layout.scale != 1 ? (layout.imageRect.w, layout.imageRect.h) : nil
    }

    /// Lays the picture out again as `view` says (zoom, pan, fit): the
    /// frames are then rendered at the size shown.
    private func show(_ view: PictureView) {
        layout = Layout(imageWidth: layout.sourceWidth, imageHeight: layout.sourceHeight,
                        window: (layout.windowWidth, layout.windowHeight), view: view)
        applyLayout()
        window?.invalidate()
        describeLayout()
        dirty = true
    }

    private func describeLayout() {
        guard options.verbose, let w = window else { return }
        let (x, y) = w.position
        let r = layout.imageRect
        printError("studio: window \(layout.windowWidth)x\(layout.windowHeight) at \(x),\(y); image area \(r.x),\(r.y) \(r.w)x\(r.h); scale \(fmt(layout.scale))")
    }

    // Messages name files by `PathBytes` strings: shown as the CLI shows them.
    private func say(_ text: String) {
        message = PathBytes.display(text)
        messageIsError = false
        dirty = true
    }

    private func fail(_ text: String) {
        message = PathBytes.display(text)
        messageIsError = true
        dirty = true
    }

    /// How the picture kept with the sound (tests, `-v`).
    var soundSync: SyncStats { player.sync }

    /// An export is running (tests wait for it).
    var isExporting: Bool { exporter.isExporting }

    // MARK: Time

    private var clipLength: Double {
        guard let clip = session.clip else { return 0 }
        return Double(clip.frameCount) / clip.fps
    }

    private func advance() {
        transport.advance(clipLength: clipLength, scriptedEnd: session.scriptedDuration)
        followSound()
    }

    /// The soundtrack after the transport: a new run's sound (a reload goes
    /// on from the playhead), started or stopped with playing (silent while
    /// paused, stepping, scrubbing and recording), again from a seek; while
    /// it plays, the playhead is the sound heard.
    private func followSound() {
        let now = clock.now()
        if session.generation != soundSeen.generation || clipLength != soundSeen.clipLength {
            soundSeen.generation = session.generation
            soundSeen.clipLength = clipLength
            let had = player.deviceName
            player.update(sound: session.isProvisional ? nil : session.sound, clipLength: clipLength, playhead: playhead, now: now)
            if options.verbose, had == nil, let name = player.deviceName { printError("studio: sound: \(name)") }
            if options.verbose, !soundSeen.toldUnavailable, let why = player.unavailable {
                soundSeen.toldUnavailable = true
                printError("studio: sound: \(why): playing silently on the wall clock")
            }
        }
        if playing && !recorder.isRecording && session.clip != nil {
            if !player.isPlaying || transport.jumps != soundSeen.jumps { player.start(at: playhead, now: now) }
            if let t = player.clipTime(at: now) { transport.follow(t) }
        } else {
            player.stop()
        }
        soundSeen.jumps = transport.jumps
    }

    private var currentIndex: Int {
        guard let clip = session.clip else { return 0 }
        let k = session.frameIndex(at: playhead)
        return recorder.isRecording ? k : min(k, clip.frameCount - 1)
    }

    private func seek(frame k: Int) {
        guard let clip = session.clip else { return }
        transport.seek(frame: k, frameCount: clip.frameCount, fps: clip.fps)
        dirty = true
    }

    // MARK: Input

    /// Handles one input; true to quit.
    private func handle(_ input: StudioInput) -> Bool {
        switch input {
        case .quit:
            return askQuit(closing: true)
        case .redraw:
            window?.invalidate()
            dirty = true
        case .resized(let w, let h):
            // Someone else (a window manager) sized the window: the picture
            // is laid out in the new size (fitted, never enlarged), the mouse
            // follows, and frames are rendered at the size shown.
            window?.adopt(width: w, height: h)
            layout = Layout(imageWidth: session.image?.width ?? layout.sourceWidth,
                            imageHeight: session.image?.height ?? layout.sourceHeight, window: (w, h), view: navigator.view)
            applyLayout()
            describeLayout()
            dirty = true
        case .windowGone:
            printError("studio: the window was destroyed by another program; quitting")
            return true
        case .key(let key, let shift, let ctrl):
            dirty = true
            if quitGuard.asking {
                switch quitGuard.answer(key, ctrl: ctrl) {
                case .quit: return true
                case .saveAndQuit:
                    if save() { return true }
                    quitGuard.asking = false
                case .back:
                    say("back to editing")
                }
                return false
            }
            return handleKey(key, shift: shift, ctrl: ctrl)
        case .wheel(let x, let y, let steps):
            if layout.pictureAreaContains(x, y) {
                show(navigator.wheel(steps, at: x, y, layout: layout))
                // (What `F` said of the fit is no longer so.)
                say("zoom \(Int((layout.scale * 100).rounded()))% (F fits)")
            }
        case .panStart(let x, let y, let space):
            // A Space + drag pans: the press's play/pause is given back.
            if navigator.beginPan(x, y, layout: layout, space: space) { transport.togglePlaying() }
            dirty = true
        case .panEnd(let x, let y):
            if let v = navigator.panned(x, y, layout: layout) { show(v) }
            navigator.endPan()
        case .text(let t):
            if inspector.isRenaming { inspector.type(t); dirty = true }
            if var c = chooser, let answer = c.text(t) { chooser = c; choose(answer) }
        case .select(let x, let y):
            mouse = (x, y)
            dirty = true
            if quitGuard.asking { quitGuard.asking = false; say("back to editing") }
            if let m = inspector.selectRegion(at: x, y, frame: currentIndex, layout: layout) { say(m) }
        case .mouseDown where helpPage != nil, .strokeStart where helpPage != nil:
            closeHelp()
        case .strokeStart(let x, let y, let object):
            mouse = (x, y)
            dirty = true
            if quitGuard.asking { quitGuard.asking = false; say("back to editing") }
            guard layout.pictureAreaContains(x, y), session.clip != nil, !recorder.isRecording else { break }
            // The selected region's cutout, else the region under the press.
            let p = layout.imagePointUnclamped(x, y)
            let under = session.handleShapes(atFrame: currentIndex).filter { $0.origin != nil && $0.shape.contains(p) }
                .min { Inspector.area($0.shape.bbox) < Inspector.area($1.shape.bbox) }?.origin?.kind
            cutouts.beginStroke(x, y, object: object, kind: inspector.selected ?? under, layout: layout)
        case .mouseDown where chooser != nil:
            choose(.cancel)
        case .mouseDown(let x, let y):
            mouse = (x, y)
            dirty = true
            if quitGuard.asking { quitGuard.asking = false; say("back to editing") }
            if inspector.mouseDown(x, y, layout: layout) {
            } else if layout.pictureAreaContains(x, y), session.clip != nil, handles, !recorder.isRecording,
               let hit = editor.handleHit(x, y, frame: currentIndex, layout: layout) {
                if let kind = hit.origin?.kind, kind != inspector.selected { inspector.select(kind) }
                editor.beginDrag(hit.origin, handle: hit.handle, x, y)
            } else if layout.timelineContains(x, y) {
                guard !recorder.isRecording else { say("recording: R stops it first"); break }
                let c = chrome(index: currentIndex)
                if timelineEditor.press(Chrome.tick(near: x, in: c.ticks, width: c.width, length: c.length)) { break }
                scrubbing = true
                transport.pause()
                scrub(x)
            } else if let p = layout.imagePoint(x, y), session.clip != nil {
                let shapes = liveShapes()
                if shapes.contains(where: { $0.contains(p) }) {
                    pokeStart = p
                } else {
                    say("(\(fmt1(p.x)), \(fmt1(p.y))) is not inside a live region")
                }
            }
        case .mouseMove(let x, let y):
            mouse = (x, y)
            hover(x, y)
            if let v = navigator.panned(x, y, layout: layout) { show(v) }
            if editor.isDragging { editor.moveDrag(x, y, layout: layout) }
            if cutouts.isStroking { cutouts.moveStroke(x, y, layout: layout); dirty = true }
            if scrubbing { scrub(x) }
            if timelineEditor.isDragging { timelineEditor.drag(to: layout.timelineFraction(x) * chrome(index: currentIndex).length, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod) }
            if inspector.mouseMoved(x, layout: layout) { dirty = true }
        case .mouseUp(let x, let y):
            if cutouts.isStroking {
                cutouts.endStroke(x, y, layout: layout)
            } else if inspector.mouseUp() {
            } else if timelineEditor.isDragging {
                timelineEditor.drag(to: layout.timelineFraction(x) * chrome(index: currentIndex).length, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod)
                timelineEditor.endDrag()
            } else if editor.isDragging {
                editor.moveDrag(x, y, layout: layout)
                editor.endDrag()
            } else if scrubbing {
                scrub(x)
                scrubbing = false
            } else if let a = pokeStart {
                pokeStart = nil
                let b = layout.imagePointUnclamped(x, y)
                guard b.isFinite, b != a else { break }
                perform(.touch(from: a, to: b))
            }
        case .accel(let x, let y, _):
            // SDL's controller axes: x right, y up, as the phone's were.
            let g = gravity.map { ($0.0 * 0.9 + x * 0.1, $0.1 * 0.9 + y * 0.1) } ?? (x, y)
            gravity = g
            let ax = x - g.0, ay = y - g.1
            let now = clock.now()
            if (ax * ax + ay * ay).squareRoot() > Scene.shakeThreshold, now - lastControllerShake > 0.15 {
                lastControllerShake = now
                perform(.shake(ax: ax, ay: ay))
            }
        }
        return false
    }

    private func handleKey(_ key: StudioKey, shift: Bool, ctrl: Bool) -> Bool {
        // While a name is typed, every key is the inspector's (its
        // characters come as text).
        if inspector.isRenaming, inspector.handleKey(key, shift: shift, frame: currentIndex, say: say) {
            return false
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
        if var c = chooser {
            let answer = c.key(key)
            chooser = c
            choose(answer)
            return false
        }
        // The inspector's keys (the selected region's parameters).
        if !ctrl && !recorder.isRecording, inspector.handleKey(key, shift: shift, frame: currentIndex, say: say) {
            return false
        }
        if shift {
            let g = 1.5
            switch key {
            case .left: perform(.shake(ax: -g, ay: 0)); return false
            case .right: perform(.shake(ax: g, ay: 0)); return false
            case .up: perform(.shake(ax: 0, ay: g)); return false
            case .down: perform(.shake(ax: 0, ay: -g)); return false
            default: break
            }
        }
        // Before the first run ends there is only the picture: quitting,
        // zoom, handles and the transport answer; the rest waits for the clip.
        if firstRunStarted != nil, ![.escape, .f, .h, .space, .left, .right, .home].contains(key) {
            say("\(sceneName): the scene's first run is still going (\(Int(max(0, clock.now() - (firstRunStarted ?? 0)))) s); Esc quits")
            return false
        }
        switch key {
        case .escape:
            return askQuit(closing: false)
        case .r:
            toggleRecording()
        case .h:
            handles.toggle()
            say(handles ? "handles shown" : "handles hidden")
        case .f:
            show(layout.fitted)
            say("fitted: \(Int((layout.scale * 100).rounded()))% (wheel zooms, middle or Space+drag pans)")
        case .e where shift:
            guard !exporter.isExporting else { exporter.start(now: clock.now(), unsavedEdits: false); break }
            chooser = PresetChooser()
            showChooser()
            say("export with: Up/Down and Enter, or 1-\(PresetChooser.choices.count); Esc cancels")
        case .e:
            exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits)
        case .p:
            if let state = session.frameState(currentIndex), let img = session.image {
                exporter.writeStill(state, image: img)
                // The file written is not a change to reload for.
                watch.reset(extra: session.inputs)
            } else {
                fail("no frame to write: the scene failed")
            }
        case _ where recorder.isRecording:
            say("recording: R stops it and writes the take")
        case .s where ctrl:
            save()
        case .z where ctrl:
            if shift { editor.redoNext() } else { editor.undoLast() }
        case .y where ctrl:
            editor.redoNext()
        case .a where !ctrl:
            // At the mouse, else the middle of the picture area (zoomed: the part in view).
            let a = layout.pictureArea
            let added = editor.add(at: mouse.flatMap { layout.imagePoint($0.x, $0.y) }
                ?? layout.imagePointUnclamped(a.x + a.w / 2, a.y + a.h / 2))
            if let added { inspector.select(added, quiet: true) }
        case .space:
            transport.togglePlaying()
            navigator.spacePressed()
            dirty = true
        case .left:
            transport.pause()
            seek(frame: currentIndex - 1)
        case .right:
            transport.pause()
            seek(frame: currentIndex + 1)
        case .home:
            transport.pause()
            seek(frame: 0)
        case .m where !ctrl:
            guard session.sound != nil else { say("the scene has no soundtrack (soundtrack(sound(\"drums.wav\")) gives it one)"); break }
            say(player.toggleMute() ? "sound muted (M)" : "sound on" + (player.unavailable.map { ", but \($0)" } ?? ""))
        case .l where !ctrl:
            toggleLoop()
        case .c where !ctrl:
            cutouts.cut(inspector.selected)
        case .b where !ctrl:
            if timelineEditor.bake(take: recorder.lastTake, loopPeriod: loopPeriod), options.verbose {
                printError("studio: baked \(session.baked.count) event\(session.baked.count == 1 ? "" : "s") into the clip")
            }
        case .delete where timelineEditor.deleteSelected():
            break
        case .backspace, .delete:
            if session.performed.isEmpty {
                say("no pokes to forget")
            } else {
                session.setPerformed([])
                requestRun()
                say("pokes forgotten")
            }
        default:
            break
        }
        return false
    }

    /// `L`: `loop()` on or off for the scene, as an unsaved edit (the
    /// preview plays the loop at once; `Ctrl+S` writes or removes the line).
    private func toggleLoop() {
        let looping = session.clip?.loop != nil
        let want = !looping
        editor.setLoop(want == session.sceneLoops ? nil : want)
        say(want ? "loop on: the clip plays as an endless loop (Ctrl+S writes loop() into the scene)"
                 : "loop off" + (session.sceneLoops ? " (Ctrl+S takes loop() out of the scene)" : ""))
        if options.verbose { printError("studio: loop \(want ? "on" : "off")") }
    }

    /// Writes the edits into the scene; true when it wrote them.
    @discardableResult
    private func save() -> Bool {
        dirty = true
        guard editor.save(sceneName: sceneName) else { return false }
        // The saved scene's run says how it went on stderr too, even when
        // an edit's run said the same before.
        lastPrintedError = nil
        // The files written (the scene, its masks) are not a change to
        // reload for; the saved scene runs off the window thread.
        watch.reset(extra: session.inputs + session.savedMasks)
        requestRun()
        return true
    }

    /// `Esc` or the window's close: quits at once without unsaved edits;
    /// with them, asks first (true: quit now).
    private func askQuit(closing: Bool) -> Bool {
        // The scene file is gone: the edits go beside it, and the studio quits.
        if session.hasUnsavedEdits, session.sceneFileIsGone, !quitGuard.asking {
            if editor.keepUnsaved(sceneName: sceneName) != nil { return true }
        }
        guard let question = quitGuard.ask(unsavedEdits: editor.editedNames, closing: closing) else {
            return true
        }
        fail(question)
        if options.verbose { printError("studio: asking before quitting (unsaved edits)") }
        return false
    }

    /// The window's title: the scene's name, marked while edits are unsaved.
    private var title: String {
        (session.hasUnsavedEdits ? "\u{2022} " : "") + "wobble-run edit: \(ScenePaths.shown(sceneName))"
    }

    private func updateTitle() {
        let t = title
        guard t != shownTitle, let window else { return }
        shownTitle = t
        window.setTitle(t)
        if options.verbose { printError("studio: title \(t)") }
    }

    private func scrub(_ x: Int) {
        let length = max(clipLength, 0)
        guard length > 0 else { return }
        let f = layout.timelineFraction(x)
        seek(frame: Int((f * length * (session.clip?.fps ?? 30)).rounded(.down)))
    }

    /// The live regions at the frame shown (what a poke may hit).
    private func liveShapes() -> [RegionShape] {
        guard let clip = session.clip else { return [] }
        return clip.timeline.snapshot(at: Double(currentIndex) / clip.fps).models.map(\.shape)
    }

    /// A poke or shake now: at the live clock while recording (a take
    /// event), else at the playhead's time.
    private func perform(_ raw: PerformedEvent.Action) {
        guard session.clip != nil else { fail("nothing to poke: the scene failed"); return }
        let (event, when) = recorder.event(for: raw, recordedSeconds: transport.recordedSeconds ?? 0, playhead: playhead)
        let what: String
        switch event.action {
        case .touch(let a, let b): what = "touch(\(fmt1(a.x)), \(fmt1(a.y)), \(fmt1(b.x)), \(fmt1(b.y)))"
        case .shake(let ax, let ay): what = "shake(\(fmt3(ax)), \(fmt3(ay)))"
        }
        // The clip with it is swapped in when the run ends (a failure is
        // shown then).
        session.setPerformed(session.performed + [event])
        requestRun()
        say("\(what) at \(when)")
        if options.verbose { printError("studio: performed \(what) at \(when)") }
        dirty = true
    }

    /// The scene a take is of, and its text: with the unsaved edits when
    /// there are some and they go into the file (what plays in the window).
    private func takeScene() -> (scene: TakeRecorder.Scene, text: [UInt8]?) {
        guard session.hasUnsavedEdits else { return (.saved, nil) }
        guard let text = try? session.editedText() else { return (.savedNotEdited, nil) }
        return (.edited, text)
    }

    private func stopRecording() {
        let (scene, text) = takeScene()
        // A looping scene's take ends on a whole number of its periods.
        let loop = session.clip.flatMap { c in
            loopPeriod.map { Take.Loop(scriptEnd: session.scriptedDuration, period: $0, fps: c.fps) }
        }
        recorder.stop(seconds: transport.stopRecording() ?? 0, sceneName: sceneName, sceneText: text, loop: loop, scene: scene)
    }

    /// A looping scene's period: its scripted clip, whole frames (the clip
    /// playing may have a take's events after it); nil when it does not loop.
    private var loopPeriod: Double? {
        guard let c = session.clip, c.loop != nil else { return nil }
        return Scene.frameCount(end: session.scriptedDuration, fps: c.fps) / c.fps
    }

    private func toggleRecording() {
        if recorder.isRecording {
            stopRecording()
            // The take file has the pokes: the preview plays the scene again.
            if !session.performed.isEmpty {
                session.setPerformed([])
                requestRun()
            }
            return
        }
        guard session.clip != nil else { fail("cannot record: the scene failed"); return }
        if !session.performed.isEmpty {
            session.setPerformed([])
            requestRun()
        }
        recorder.start(scriptedEnd: session.scriptedDuration, scene: takeScene().scene)
        transport.startRecording(from: session.scriptedDuration)
    }

    private func finishRecordingOnQuit() {
        guard recorder.isRecording else { return }
        stopRecording()
    }

    // MARK: Presenting

    private func present() {
        guard let window else { return }
        let k = currentIndex
        presenter.selected = inspector.selected
        presenter.extraVersion = cutouts.overlayVersion
        presenter.paintExtra = session.clip?.cutouts.isEmpty == false || cutouts.isStroking
            ? { [unowned self] in cutouts.paint(into: &$0, mapping: $1) } : nil
        // The inspector's column, drawn again only when what it shows
        // changed; none over a sheet (the help, the export chooser).
        let r = layout.panelRect
        let panel = r.w > 0 && presenter.cover == nil ? inspector.panel(width: r.w, height: r.h) : nil
        if shownPanel == nil || shownPanel?.panel != panel || shownPanel?.x != r.x || shownPanel?.y != r.y {
            shownPanel = (panel, r.x, r.y)
            window.setPanel(panel?.image, x: r.x, y: r.y)
        }
        guard presenter.present(into: window, frame: k, handles: handles, layout: layout, dirty: dirty, playing: playing,
                                message: { [unowned self] in message }, isEditable: { [unowned self] in editor.isEditable($0) },
                                chrome: { [unowned self] in drawChrome(index: $0) }, fail: { [unowned self] in fail($0) }) else { return }
        dirty = false
        if let t = editor.editInputTime, !editor.editsPending, !session.isRunning {
            editor.editInputTime = nil
            let ms = (clock.now() - t) * 1000
            editLatencies.append(ms)
            if options.verbose { printError("studio: edit shown \(fmt1(ms)) ms after the input") }
        }
        if player.isPlaying, let clip = session.clip {
            player.presented(frameTime: Double(k) / clip.fps, clipLength: clipLength, at: clock.now())
            if options.verbose, presenter.presentedCount % 150 == 0, let line = player.sync.summary { printError(line) }
        }
        if options.verbose {
            printError("studio: frame \(k) presented (run \(session.generation)\(playing ? "" : ", paused")\(recorder.isRecording ? ", recording" : ""))")
        }
    }

    private func drawChrome(index k: Int) -> RGBAImage {
        chrome(index: k).image
    }

    /// The chrome as it is now (frame `k` shown).
    private func chrome(index k: Int) -> Chrome {
        Chrome(
            width: layout.windowWidth, frame: k, frameCount: session.clip?.frameCount ?? 0, fps: session.clip?.fps ?? 30,
            playhead: playhead, clipLength: clipLength, scriptedDuration: session.scriptedDuration, ticks: ticks,
            recording: recorder.isRecording, playing: playing, unsavedEdits: session.hasUnsavedEdits,
            message: message, messageIsError: messageIsError, hovered: hovered, sceneError: sceneError,
            warnings: session.isProvisional ? [] : session.warnings)
    }

    /// The rows under the status line with their kinds, as drawn now.
    var chromeRows: [(text: String, kind: Chrome.RowKind)] { chrome(index: currentIndex).messageRowsShown }

    /// The status rows under the status line as they are drawn now.
    var statusRows: [String] { chrome(index: currentIndex).messageLines }

    /// The timeline's ticks now.
    private var ticks: [Tick] {
        Tick.all(script: session.scriptKicks, performed: session.performed, take: recorder.take,
                 scriptedDuration: session.scriptedDuration, sceneName: sceneName, baked: session.baked,
                 deletable: { [unowned self] in timelineEditor.isDeletable(line: $0) }, selected: timelineEditor.selected,
                 sound: session.isProvisional ? nil : session.sound, clipLength: clipLength)
    }

    /// Names the tick under the mouse when it is over the timeline.
    private func hover(_ x: Int, _ y: Int) {
        var now: String?
        if layout.timelineContains(x, y), !scrubbing {
            let c = chrome(index: currentIndex)
            now = Chrome.tick(near: x, in: c.ticks, width: c.width, length: c.length)?.label
        }
        if now != hovered {
            hovered = now
            dirty = true
            if options.verbose, let now { printError("studio: tick: \(now)") }
        }
    }

    private var helpPages = 1

    /// The `Shift+E` chooser while it is open.

    private var chooser: PresetChooser?

    /// What the help sheet shows under the keys: the scene's error whole,
    /// every warning, then the last message when it is another.
    var helpMessage: String {
        ([sceneError] + (session.isProvisional ? [] : session.warnings.map { "warning: " + $0 }) + [message == sceneError ? nil : message])
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    private func showHelp(page: Int) {
        let sheet = HelpSheet.image(width: layout.windowWidth, height: layout.windowHeight, page: page, message: helpMessage)
        helpPages = sheet.pages
        helpPage = min(page, sheet.pages - 1)
        presenter.cover = sheet.image
        dirty = true
    }

    /// Draws the `Shift+E` chooser over the window.
    private func showChooser() {
        guard let c = chooser else { return }
        presenter.cover = c.image(width: layout.windowWidth, height: layout.windowHeight, loopPeriod: loopPeriod,
                                  clipSeconds: session.clip == nil ? nil : session.scriptedDuration)
        dirty = true
    }

    /// What a key in the chooser did: moved, exported, or closed it.
    private func choose(_ answer: PresetChooser.Answer) {
        switch answer {
        case .choosing:
            showChooser()
        case .cancel:
            chooser = nil
            presenter.cover = nil
            dirty = true
            say("export cancelled")
        case .export(let preset):
            chooser = nil
            presenter.cover = nil
            dirty = true
            exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, preset: preset)
        }
    }

    private func closeHelp() {
        helpPage = nil
        presenter.cover = nil
        dirty = true
    }
}

func fmt(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%g", v) }
func fmt1(_ v: Double) -> String { String(format: "%.1f", v) }
func fmt3(_ v: Double) -> String { String(format: "%.3f", v) }
