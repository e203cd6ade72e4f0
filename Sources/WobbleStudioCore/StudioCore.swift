import Foundation
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// The studio without a window: a live session with its transport, edits
/// (drags, adds, the inspector, undo, save and merge), pokes and takes,
/// the timeline's and the cutouts' editing, exports, warnings and the
/// question before quitting. Commands come in (`perform`), from the SDL
/// window's key map or any other front end; what to show goes out as a
/// `snapshot()` and as the state read here (the message, the title, the
/// frame index). No window, GL or key here; its clock is injected (tests
/// run it on a manual one).
package final class StudioCore {
    package let session: LiveSession
    package let watch: InputWatch
    package let verbose: Bool
    /// The clock every time of the studio is read from.
    package let clock: TimeSource
    package private(set) var transport: Transport
    package var playhead: Double { transport.playhead }
    package var playing: Bool { transport.playing }
    /// The handles are shown (and can be grabbed).
    package private(set) var handles = true

    /// Recording a take.
    package let recorder: TakeRecorder
    /// Exports (`E`, `Shift+E`) and stills (`P`).
    package let exporter: Exporter
    /// The soundtrack, played with the playhead (its clock drives it).
    package let player: SoundPlayer
    /// The run and seek count the sound last followed.
    private var soundSeen = (generation: -1, clipLength: -1.0, jumps: 0, toldUnavailable: false)

    /// Where a poke began (image pixels), until it is performed.
    private var pokeStart: Point?

    /// Editing the sketches: drags, adds, undo, save.
    package let editor: SketchEditor
    /// The selected region's name and parameters.
    package let inspector: Inspector
    /// Cutouts: `C`, strokes, `Shift`+click (GrabCut on a worker).
    package let cutouts: CutoutEditor
    /// Bakes takes, selects, deletes and moves ticks.
    package let timelineEditor: TimelineEditor
    /// Asking before quitting with unsaved edits.
    package private(set) var quitGuard = QuitGuard()
    /// The `Shift+E` chooser while it is open.
    package private(set) var chooser: PresetChooser?

    // Controller accelerometer (high-pass: gravity removed).
    private var gravity: (Double, Double)?
    private var lastControllerShake = -1.0

    /// The status line's message and whether it is an error.
    package private(set) var message = ""
    package private(set) var messageIsError = false
    /// The error of the scene's last run, shown until the scene runs again
    /// (nil after a good run): other messages do not hide it.
    package private(set) var sceneError: String?
    /// The last run's error printed on stderr (nil after a good run).
    private var lastPrintedError: String?
    /// Something shown changed since the front end last drew (it clears it).
    package var dirty = true

    // Runs of the scene off the front end's thread (`LiveSession.requestRun`):
    // the files whose change the run in flight is for (nil: an edit or a
    // poke), and those that changed while it ran (the next run's).
    private var flightReasons: [String]?
    private var queuedReasons: [String]?

    /// How long the front end waits for the scene's first run before it
    /// shows the studio without its clip (real seconds).
    package static let firstRunWait = 0.25
    /// When the first run began, while it goes on (nil after it ended).
    package private(set) var firstRunStarted: Double?
    /// The whole seconds of the first run last shown.
    private var firstRunShown = -1

    /// Told when a run brought an image of another size (the window lays
    /// itself out again).
    package var imageSizeChanged: (() -> Void)?

    package init(session options: SessionOptions, verbose: Bool, clock: TimeSource, audio: @escaping () throws -> any AudioSink) {
        self.clock = clock
        self.verbose = verbose
        transport = Transport(clock: clock)
        session = LiveSession(options: options)
        editor = SketchEditor(session: session, clock: clock, verbose: verbose)
        inspector = Inspector(session: session, editor: editor)
        timelineEditor = TimelineEditor(session: session, editor: editor)
        cutouts = CutoutEditor(session: session, editor: editor, clock: clock, verbose: verbose)
        recorder = TakeRecorder(options: options, verbose: verbose)
        exporter = Exporter(options: options)
        player = SoundPlayer(open: audio)
        // Only what the scene reads: not the renders, stills or screenshots
        // saved beside it.
        watch = InputWatch(scenePath: options.scenePath, tree: false)
        handles = Environment.value("WOBBLE_STUDIO_HANDLES") != "0"
        let base = ScenePaths.baseName(options.scenePath)
        watch.ignore = { name in name.hasPrefix(base + "-take-") && name.hasSuffix(".lua") }
        if verbose { watch.log = { printError($0) } }
        editor.status = { [unowned self] in $1 ? fail($0) : say($0) }
        recorder.status = editor.status
        cutouts.status = editor.status
        cutouts.select = { [unowned self] in inspector.select($0, quiet: true) }
        editor.handlesMoved = { [unowned self] in cutouts.recut($0) }
        exporter.status = editor.status
        player.status = editor.status
    }

    /// The scene's file name (a `PathBytes` string: `say`, `fail` and
    /// `printError` show it readably).
    package var sceneName: String { ScenePaths.name(session.options.scenePath) }

    // MARK: Running

    /// The first run, off the caller's thread: a quick scene has ended
    /// when this returns; a slow one goes on (`running… N s` is said until
    /// its clip comes, and the commands that need the clip wait for it).
    package func start() {
        let started = clock.now()
        session.requestRun()
        if session.waitForRun(upTo: StudioCore.firstRunWait), let collected = session.collectRun() {
            if case .committed(let ok) = collected { showRun(ok, reason: nil, oldSize: nil) }
        } else {
            session.showProvisionalStill()
            firstRunStarted = started
            showFirstRunProgress()
            if verbose { printError("studio: the window opens while the scene's first run goes on") }
        }
        watch.reset(extra: session.inputs)
    }

    /// One turn after the commands of a batch of input: the edits' run
    /// asked for, the files watched, a finished run swapped in, the
    /// cutouts' and the export's progress, the playhead moved on.
    package func update(nextPoll: inout Double) {
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
        recorder.poll()
        advance()
    }

    /// The studio ends: a run in flight is abandoned (its script stops at
    /// its next instruction count hook, its result is dropped); a take
    /// being recorded is written, an export stopped, the sound closed,
    /// unsaved edits named on stderr. A take being written is waited for
    /// (stopped when its checks outlast their timeouts).
    package func finish() {
        if session.isRunning {
            let ended = session.abandonRun(waitingUpTo: 1)
            if verbose { printError("studio: the run in flight was abandoned\(ended ? "" : " (still ending)")") }
        }
        finishRecordingOnQuit()
        exporter.cancel()
        player.close()
        if verbose, let line = player.sync.summary { printError(line) }
        if session.hasUnsavedEdits, !(editor.keptUnsaved && session.sceneFileIsGone) {
            let names = editor.editedNames
            let n = names.count
            // The window is gone: the line says what was dropped, not how to save it.
            printError("wobble-run: \(sceneName): \(n) unsaved edit\(n == 1 ? "" : "s") not saved (\(names.joined(separator: ", ")))")
        }
    }

    /// `running… N s` while the first run goes on.
    private func showFirstRunProgress() {
        guard let t0 = firstRunStarted else { return }
        let n = Int(max(0, clock.now() - t0))
        guard n != firstRunShown else { return }
        firstRunShown = n
        say("\(sceneName): running… \(n) s (Esc quits)")
    }

    /// Runs the scene again off the caller's thread (the last good clip
    /// goes on playing meanwhile), for the files that changed (nil: for an
    /// edit or a poke). A run asked for while one is in flight starts when
    /// it ends (one for any number of asks); `collectRun` swaps it in.
    private func requestRun(reloading changed: [String]? = nil) {
        if session.isRunning {
            if let changed {
                queuedReasons = StudioCore.merged(queuedReasons, changed)
                if verbose { printError("studio: \(changed.joined(separator: ", ")) changed while the scene runs: it runs again after this run") }
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

    /// Swaps in a run that finished off the caller's thread (the playhead
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
            flightReasons = StudioCore.merged(flightReasons, queuedReasons)
            queuedReasons = nil
            if shown {
                sceneError = nil
                adoptImageSize(oldSize)
            }
            if verbose { printError("studio: a run was superseded (pokes or edits came while it ran); running again") }
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
                // A run for an edit, a poke or a save failed: shown and on
                // stderr, like a reload's.
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
                say("\(sceneName): \(session.clip?.frameCount ?? 0) frames at \(NumberText.rate(session.clip?.fps ?? 30)) fps")
            }
            if verbose { printError("studio: reloaded (run \(session.generation))") }
            printWarningsIfChanged()
            adoptImageSize(oldSize)
        } else if let e = session.error {
            let first = String(e.message.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            // Once per error: a drag re-runs the scene at every step.
            if e.message != lastPrintedError {
                printError(e.message)
                if let d = e.details, !d.isEmpty, verbose { printError(d) }
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
        if now.isEmpty && verbose { printError("studio: no warnings") }
    }

    /// The front end is told when a run brought an image of another size
    /// than `oldSize`.
    private func adoptImageSize(_ oldSize: (Int, Int)?) {
        let sizeChanged = session.image.map { img in oldSize.map { $0 != (img.width, img.height) } ?? true } ?? false
        if sizeChanged { imageSizeChanged?() }
    }

    // Messages name files by `PathBytes` strings: shown as the CLI shows them.
    package func say(_ text: String) {
        message = PathBytes.display(text)
        messageIsError = false
        dirty = true
    }

    package func fail(_ text: String) {
        message = PathBytes.display(text)
        messageIsError = true
        dirty = true
    }

    /// How the picture kept with the sound (tests, `-v`).
    package var soundSync: SyncStats { player.sync }

    /// An export is running (tests wait for it).
    package var isExporting: Bool { exporter.isExporting }

    /// The question before quitting is up.
    package var isAskingToQuit: Bool { quitGuard.asking }

    // MARK: Time

    package var clipLength: Double { session.clip?.length ?? 0 }

    /// The timeline's scale in seconds: the clip's length, held while a
    /// baked tick is dragged (`TimelineEditor.heldLength`).
    package var timelineLength: Double { timelineEditor.heldLength ?? clipLength }

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
            if verbose, had == nil, let name = player.deviceName { printError("studio: sound: \(name)") }
            if verbose, !soundSeen.toldUnavailable, let why = player.unavailable {
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

    /// A frame was shown at clip frame `k` (the `count`-th): the sound's
    /// sync is measured against it.
    package func framePresented(_ k: Int, count: Int) {
        if player.isPlaying, let clip = session.clip {
            player.presented(frameTime: Double(k) / clip.fps, clipLength: clipLength, at: clock.now())
            if verbose, count % 150 == 0, let line = player.sync.summary { printError(line) }
        }
    }

    /// The frame the playhead is on.
    package var currentIndex: Int {
        guard let clip = session.clip else { return 0 }
        let k = session.frameIndex(at: playhead)
        return recorder.isRecording ? k : min(k, clip.frameCount - 1)
    }

    private func seek(frame k: Int) {
        guard let clip = session.clip else { return }
        transport.seek(frame: k, frameCount: clip.frameCount, fps: clip.fps)
        dirty = true
    }

    /// The playhead at the clock's `now` (while playing: which frame is due).
    package func currentPlayhead(at now: Double) -> Double { transport.current(at: now) }

    // MARK: Commands

    /// Commands that wait for the first run's clip (said so meanwhile).
    private static func needsClip(_ c: StudioCommand) -> Bool {
        switch c {
        case .toggleRecording, .export, .openExportChooser, .writeStill, .save, .undo, .redo, .add, .toggleMute,
             .toggleLoop, .cutOut, .outline, .bake, .deleteSelected, .forgetPokes, .unbound:
            return true
        default:
            return false
        }
    }

    /// Commands a take being recorded refuses (R stops it first).
    private static func refusedWhileRecording(_ c: StudioCommand) -> Bool {
        switch c {
        case .save, .undo, .redo, .add, .togglePlay, .step, .home, .toggleMute, .toggleLoop, .cutOut, .outline, .bake,
             .deleteSelected, .forgetPokes, .unbound:
            return true
        default:
            return false
        }
    }

    /// Does `command`; true when the studio quits now.
    @discardableResult
    package func perform(_ command: StudioCommand) -> Bool {
        if firstRunStarted != nil, StudioCore.needsClip(command) {
            say("\(sceneName): the scene's first run is still going (\(Int(max(0, clock.now() - (firstRunStarted ?? 0)))) s); Esc quits")
            return false
        }
        if recorder.isRecording, StudioCore.refusedWhileRecording(command) {
            say("recording: R stops it and writes the take")
            return false
        }
        switch command {
        case .togglePlay:
            transport.togglePlaying()
            dirty = true
        case .step(let d):
            transport.pause()
            seek(frame: currentIndex + d)
        case .home:
            transport.pause()
            seek(frame: 0)
        case .pause:
            transport.pause()
        case .seek(let k):
            transport.pause()
            seek(frame: k)
        case .toggleHandles:
            handles.toggle()
            say(handles ? "handles shown" : "handles hidden")
        case .quit(let closing):
            return askQuit(closing: closing)
        case .answerQuit(let a):
            switch quitGuard.answer(a) {
            case .quit: return true
            case .saveAndQuit:
                if save() { return true }
                quitGuard.asking = false
            case .back:
                say("back to editing")
            }
        case .backToEditing:
            if quitGuard.asking { quitGuard.asking = false; say("back to editing") }
        case .save:
            save()
        case .undo:
            editor.undoLast()
        case .redo:
            editor.redoNext()
        case .add(let p):
            if let added = editor.add(at: p) { inspector.select(added, quiet: true) }
        case .grab(let p, let radius):
            guard let hit = grabbable(at: p, radius: radius) else { break }
            if let kind = hit.origin?.kind, kind != inspector.selected { inspector.select(kind) }
            editor.beginDrag(hit.origin, handle: hit.handle)
        case .dragTo(let p):
            editor.moveDrag(to: p)
        case .dragEnd:
            editor.endDrag()
        case .select(let p, let radius):
            if let m = inspector.selectRegion(at: p, radius: radius, frame: currentIndex) { say(m) }
        case .selectNext(let d):
            if let m = inspector.selectNext(d, frame: currentIndex) { say(m) }
        case .focusRow(let d):
            inspector.focus(by: d)
        case .stepParameter(let n):
            inspector.step(n)
        case .setParameter(let key, let value):
            if !inspector.set(parameter: key, to: value) { fail("no parameter '\(key)' (\(InspectorRow.specs.map(\.key).joined(separator: ", ")))") }
        case .setMotion(let name):
            if let m = inspector.motions.kind(named: name) { inspector.setMotion(m) } else { fail("no motion '\(name)' (\(inspector.motions.namesText))") }
        case .setPin(let p):
            inspector.setPin(p)
        case .startRename:
            inspector.startRenaming()
        case .type(let t):
            if inspector.isRenaming { inspector.type(t); dirty = true }
        case .renameBackspace:
            inspector.backspace()
        case .renameCaret(let d):
            inspector.moveCaret(by: d)
        case .commitRename:
            inspector.commitRenaming()
        case .cancelRename:
            inspector.cancelRenaming()
        case .rename(let name):
            inspector.rename(to: name)
        case .inspectorPress(let row, let choice, let fraction):
            inspector.press(row: row, choice: choice, fraction: fraction)
        case .inspectorSlide(let f):
            if inspector.isScrubbing { inspector.slide(to: f); dirty = true }
        case .inspectorRelease:
            inspector.release()
        case .pokeBegin(let p):
            guard session.clip != nil else { break }
            if liveShapes().contains(where: { $0.contains(p) }) {
                pokeStart = p
            } else {
                say("(\(fmt1(p.x)), \(fmt1(p.y))) is not inside a live region")
            }
        case .pokeEnd(let b):
            guard let a = pokeStart else { break }
            pokeStart = nil
            guard b.isFinite, b != a else { break }
            performEvent(.touch(from: a, to: b))
        case .shake(let ax, let ay):
            performEvent(.shake(ax: ax, ay: ay))
        case .accelerometer(let x, let y):
            // SDL's controller axes: x right, y up, as the phone's were.
            let g = gravity.map { ($0.0 * 0.9 + x * 0.1, $0.1 * 0.9 + y * 0.1) } ?? (x, y)
            gravity = g
            let ax = x - g.0, ay = y - g.1
            let now = clock.now()
            if (ax * ax + ay * ay).squareRoot() > Scene.shakeThreshold, now - lastControllerShake > 0.15 {
                lastControllerShake = now
                performEvent(.shake(ax: ax, ay: ay))
            }
        case .toggleRecording:
            toggleRecording()
        case .forgetPokes:
            forgetPokes()
        case .pressTick(let tick):
            _ = timelineEditor.press(tick, length: timelineLength)
        case .hoverTimeline(let at, let within):
            let before = hoveredTick?.label
            hoverAt = at.map { ($0, max(0, within)) }
            if hoveredTick?.label != before { dirty = true }
        case .dragTick(let t):
            timelineEditor.drag(to: t, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod)
        case .endTickDrag(let t):
            timelineEditor.drag(to: t, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod)
            timelineEditor.endDrag()
        case .deleteSelected:
            if !timelineEditor.deleteSelected() && !deleteSelectedRegion() { forgetPokes() }
        case .toggleLoop:
            toggleLoop()
        case .bake:
            if timelineEditor.bake(take: recorder.lastTake, loopPeriod: loopPeriod), verbose {
                printError("studio: baked \(session.baked.count) event\(session.baked.count == 1 ? "" : "s") into the clip")
            }
        case .cutOut:
            cutouts.cut(inspector.selected)
        case .outline:
            cutouts.outlineKey()
        case .outlinePoint(let p):
            cutouts.addOutlinePoint(p)
        case .strokeBegin(let p, let radius, let object):
            guard session.clip != nil, !recorder.isRecording else { break }
            // The selected region's cutout, else the region under the press.
            let under = session.handleShapes(atFrame: currentIndex).filter { $0.origin != nil && $0.shape.contains(p) }
                .min { Inspector.area($0.shape.bbox) < Inspector.area($1.shape.bbox) }?.origin?.kind
            cutouts.beginStroke(at: p, radius: radius, object: object, kind: inspector.selected ?? under)
        case .strokeTo(let p):
            if cutouts.isStroking { cutouts.moveStroke(to: p); dirty = true }
        case .strokeEnd:
            cutouts.endStroke()
        case .export(let name):
            guard let preset = StudioCore.preset(named: name) else {
                fail("no preset '\(name ?? "")' (\(Preset.all.map(\.name).joined(separator: ", ")))")
                break
            }
            exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, preset: preset)
        case .openExportChooser:
            guard !exporter.isExporting else { exporter.start(now: clock.now(), unsavedEdits: false); break }
            chooser = PresetChooser()
            say("export with: Up/Down and Enter, or 1-\(PresetChooser.choices.count); Esc cancels")
        case .chooserMove(let d):
            if var c = chooser { let a = c.move(by: d); chooser = c; choose(a) }
        case .chooserChoose(let i):
            if var c = chooser { let a = c.choose(i); chooser = c; choose(a) }
        case .chooserCancel:
            if chooser != nil { choose(.cancel) }
        case .writeStill:
            if let state = session.frameState(currentIndex), let img = session.image {
                exporter.writeStill(state, image: img)
                // The file written is not a change to reload for.
                watch.reset(extra: session.inputs)
            } else {
                fail("no frame to write: the scene failed")
            }
        case .toggleMute:
            guard session.sound != nil else { say("the scene has no soundtrack (soundtrack(sound(\"drums.wav\")) gives it one)"); break }
            say(player.toggleMute() ? "sound muted (M)" : "sound on" + (player.unavailable.map { ", but \($0)" } ?? ""))
        case .unbound:
            break
        }
        return false
    }

    /// A preset by name: `.some(nil)` for nil (the scene's own output),
    /// nil when there is no such preset.
    private static func preset(named name: String?) -> Preset?? {
        guard let name else { return .some(nil) }
        guard let p = Preset.all.first(where: { $0.name == name }) else { return nil }
        return .some(p)
    }

    /// The handle a press at `p` grabs (within `radius`), when a drag may
    /// begin there: a clip, the handles shown, no take being recorded.
    package func grabbable(at p: Point, radius: Double) -> (origin: SketchOrigin?, handle: Int)? {
        guard session.clip != nil, handles, !recorder.isRecording else { return nil }
        return editor.handleHit(at: p, radius: radius, frame: currentIndex)
    }

    /// What a chooser command did: moved, exported, or closed it.
    private func choose(_ answer: PresetChooser.Answer) {
        switch answer {
        case .choosing:
            dirty = true
        case .cancel:
            chooser = nil
            dirty = true
            say("export cancelled")
        case .export(let choice):
            chooser = nil
            dirty = true
            switch choice {
            case .scene: exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits)
            case .preset(let p): exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, preset: p)
            case .webPage: exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, webPage: true)
            }
        }
    }

    /// `Delete` with a region selected (and no tick): the region is
    /// deleted (`SketchEditor.delete`), not while its cutout is computed.
    /// False when none is selected.
    private func deleteSelectedRegion() -> Bool {
        guard let kind = inspector.selected else { return false }
        guard !cutouts.isComputing else {
            editor.status("a cutout is being computed: Delete when it is done", true)
            return true
        }
        if editor.delete(kind) { inspector.select(nil, quiet: true) }
        return true
    }

    private func forgetPokes() {
        if session.performed.isEmpty {
            say("no pokes to forget")
        } else {
            session.setPerformed([])
            requestRun()
            say("pokes forgotten")
        }
    }

    /// `L`: `loop()` on or off for the scene, as an unsaved edit (the
    /// preview plays the loop at once; `Ctrl+S` writes or removes the line).
    private func toggleLoop() {
        let looping = session.clip?.loop != nil
        let want = !looping
        // The loop is the clip being watched (with the baked events' motion
        // after the script's end), not the script's own end.
        editor.setLoop(want == session.sceneLoops ? nil : want, period: clipLength)
        say(want ? "loop on: the clip plays as an endless loop (Ctrl+S writes loop() into the scene)"
                 : "loop off" + (session.sceneLoops ? " (Ctrl+S takes loop() out of the scene)" : ""))
        if verbose { printError("studio: loop \(want ? "on" : "off")") }
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
        // reload for; the saved scene runs off the caller's thread.
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
        if verbose { printError("studio: asking before quitting (unsaved edits)") }
        return false
    }

    /// The title: the scene's name, marked while edits are unsaved.
    package var title: String {
        (session.hasUnsavedEdits ? "\u{2022} " : "") + "wobble-run edit: \(ScenePaths.shown(sceneName))"
    }

    /// The live regions at the frame shown (what a poke may hit).
    private func liveShapes() -> [RegionShape] {
        guard let clip = session.clip else { return [] }
        return clip.timeline.snapshot(at: Double(currentIndex) / clip.fps).models.map(\.shape)
    }

    /// A poke or shake now: at the live clock while recording (a take
    /// event), else at the playhead's time.
    private func performEvent(_ raw: PerformedEvent.Action) {
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
        if verbose { printError("studio: performed \(what) at \(when)") }
        dirty = true
    }

    /// The scene a take is of, and its text: with the unsaved edits when
    /// there are some and they go into the file (what plays).
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
    package var loopPeriod: Double? {
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
        guard !recorder.isWriting else { fail("the last take is still being written: R again when it is done"); return }
        if !session.performed.isEmpty {
            session.setPerformed([])
            requestRun()
        }
        recorder.start(scriptedEnd: session.scriptedDuration, scene: takeScene().scene)
        transport.startRecording(from: session.scriptedDuration)
    }

    /// A take being recorded is written, and one being written is waited
    /// for (the studio quits, or its display went away: the process exits
    /// next, so the write is done here, within its checks' timeouts).
    package func finishRecordingOnQuit() {
        if recorder.isRecording { stopRecording() }
        recorder.finishWriting()
    }

    // MARK: What a front end shows

    /// The timeline's ticks now.
    package var ticks: [Tick] {
        Tick.all(script: session.scriptKicks, performed: session.performed, take: recorder.take,
                 scriptedDuration: session.scriptedDuration, sceneName: sceneName, baked: session.baked,
                 deletable: { [unowned self] in timelineEditor.isDeletable(line: $0) }, selected: timelineEditor.selected,
                 sound: session.isProvisional ? nil : session.sound, clipLength: clipLength)
    }

    /// Where the pointer is over the timeline (`hoverTimeline`).
    private var hoverAt: (time: Double, within: Double)?

    /// The tick under the pointer now, the nearest within its reach: found
    /// among the ticks as they are at each call, so a `Delete`, an undo or
    /// a new run changes what the status row names without a move.
    package var hoveredTick: Tick? {
        guard let h = hoverAt else { return nil }
        return ticks.filter { abs($0.time - h.time) <= h.within }.min { abs($0.time - h.time) < abs($1.time - h.time) }
    }

    /// The warnings shown (none while the first run goes on).
    package var warningsShown: [String] { session.isProvisional ? [] : session.warnings }

    /// What the keys' help shows under the keys: the scene's error whole,
    /// every warning, then the last message when it is another.
    package var helpMessage: String {
        ([sceneError] + warningsShown.map { "warning: " + $0 } + [message == sceneError ? nil : message])
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// Everything a front end draws now, as one value.
    package func snapshot() -> StudioSnapshot {
        let k = currentIndex
        let shapes = handles ? session.handleShapes(atFrame: k) : []
        return StudioSnapshot(
            scene: sceneName, title: title, unsaved: session.hasUnsavedEdits, generation: session.generation,
            frame: k, frameCount: session.clip?.frameCount ?? 0, fps: session.clip?.fps ?? 30, playhead: playhead,
            clipLength: clipLength, timelineLength: timelineLength, scriptedDuration: session.scriptedDuration, playing: playing,
            recording: recorder.isRecording, handlesShown: handles, frameState: session.frameState(k),
            handles: shapes.map { h in
                StudioSnapshot.Handle(kind: h.origin?.kind, shape: h.shape, editable: editor.isEditable(h.origin),
                                      selected: inspector.selected != nil && h.origin?.kind == inspector.selected)
            },
            inspector: inspector.values(), ticks: ticks, hovered: hoveredTick?.label, performed: session.performed, message: message,
            messageIsError: messageIsError, sceneError: sceneError, warnings: warningsShown,
            askingToQuit: quitGuard.asking, chooserRow: chooser?.row,
            chooserChoices: chooser == nil ? nil : PresetChooser.choices.map { let l = PresetChooser.label($0); return l.name + String(repeating: " ", count: max(2, 10 - l.name.count)) + l.limits }, exporting: exporter.isExporting,
            firstRunGoing: firstRunStarted != nil, muted: player.muted)
    }
}
