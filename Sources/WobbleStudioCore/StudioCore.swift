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
    /// The live session behind the core: no surface reads it (they read
    /// `snapshot()`, `shownFrame()`, `run` and the core's state, and render
    /// through `frames`).
    let session: LiveSession
    package let watch: InputWatch
    package let verbose: Bool
    /// The clock every time of the studio is read from.
    package let clock: TimeSource
    package internal(set) var transport: Transport
    package var playhead: Double { transport.playhead }
    package var playing: Bool { transport.playing }
    /// The handles are shown (and can be grabbed).
    package internal(set) var handles = true

    /// Recording a take.
    package let recorder: TakeRecorder
    /// Exports (`E`, `Shift+E`) and stills (`P`).
    package let exporter: Exporter
    /// The soundtrack, played with the playhead (its clock drives it).
    package let player: SoundPlayer
    /// The run and seek count the sound last followed.
    private var soundSeen = (generation: -1, clipLength: -1.0, jumps: 0, toldUnavailable: false)

    /// Where a poke began (image pixels), until it is performed.
    var pokeStart: Point?

    /// Editing the sketches: drags, adds, undo, save.
    package let editor: SketchEditor
    /// The selected region's name and parameters.
    package let inspector: Inspector
    /// Cutouts: `C`, strokes, `Shift`+click (GrabCut on a worker).
    package let cutouts: CutoutEditor
    /// Bakes takes, selects, deletes and moves ticks.
    package let timelineEditor: TimelineEditor
    /// Asking before quitting with unsaved edits.
    package internal(set) var quitGuard = QuitGuard()
    /// The `Shift+E` chooser while it is open.
    package internal(set) var chooser: PresetChooser?

    // Controller accelerometer (high-pass: gravity removed).
    var gravity: (Double, Double)?
    var lastControllerShake = -1.0

    /// The status line's message and whether it is an error.
    package private(set) var message = ""
    package private(set) var messageIsError = false
    /// The error of the scene's last run, shown until the scene runs again
    /// (nil after a good run): other messages do not hide it.
    package private(set) var sceneError: String?
    /// The last run's error printed on stderr (nil after a good run).
    var lastPrintedError: String?
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

    /// The scene's folder, absolute: the exports are written there, and the
    /// browser studio serves its files.
    package var sceneFolder: AbsolutePath { exporter.folder }

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

    /// When the core next looks at the scene's inputs (its clock's time).
    private var nextPoll = -Double.infinity

    /// One turn of the studio at its clock's now, after the commands of a
    /// batch of input: the edits' run asked for, the scene's inputs looked
    /// at when due, a finished run swapped in, the cutouts' and the
    /// export's progress, the playhead moved on (and the soundtrack after
    /// it). Every surface turns the core with this alone: the window after
    /// each batch of its events, the page's server after each batch of
    /// page messages and on its timer; the in-process tests on a manual clock.
    package func tick() {
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

    /// How long a surface may wait for input before the core's next turn
    /// is due (seconds, from the clock's now), with frame `presented` on
    /// screen: until the inputs are next looked at; while playing or
    /// recording, until the next frame is due (0 when a due frame is not
    /// on screen: the last one took longer than a frame); at most
    /// `runPoll` while a run or a cutout goes on and 0.1 s while an export
    /// or a take's write does (they are polled); 0 when something is to
    /// be drawn, or when the wait is so short that waiting costs more
    /// than it saves (the process gives up its turn on a busy machine).
    package func secondsToNextTurn(presented: Int) -> Double {
        let now = clock.now()
        var wait = max(0, nextPoll - now)
        if playing || recorder.isRecording, let clip = session.clip {
            // The playhead as it is now (it was last moved before the
            // previous frame was drawn), and the next frame's time.
            let current = currentPlayhead(at: now)
            let due = session.frameIndex(at: current)
            if due == presented {
                wait = min(wait, max(0, Double(due + 1) / clip.fps - current))
            } else {
                wait = 0
            }
        }
        if session.isRunning || cutouts.isComputing { wait = min(wait, StudioCore.runPoll) }
        if exporter.isExporting || recorder.isWriting { wait = min(wait, 0.1) }
        if dirty || wait < 0.002 { wait = 0 }
        return wait
    }

    /// How often a run or a cutout in flight is looked at while a surface
    /// waits for input (seconds).
    package static let runPoll = 0.004

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
    func requestRun(reloading changed: [String]? = nil) {
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
        switch command.area {
        case .transport: return performTransport(command)
        case .edit: return performEdit(command)
        case .takes: return performTakes(command)
        case .cutouts: return performCutouts(command)
        case .export: return performExport(command)
        }
    }

    /// The title: the scene's name, marked while edits are unsaved.
    package var title: String {
        (session.hasUnsavedEdits ? "\u{2022} " : "") + "wobble-run edit: \(ScenePaths.shown(sceneName))"
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
    var hoverAt: (time: Double, within: Double)?

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
        let shown = shownFrame()
        return StudioSnapshot(
            scene: sceneName, title: title, unsaved: session.hasUnsavedEdits, generation: shown.generation,
            frame: shown.index, frameCount: session.clip?.frameCount ?? 0, fps: session.clip?.fps ?? 30, playhead: playhead,
            clipLength: clipLength, timelineLength: timelineLength, scriptedDuration: session.scriptedDuration, playing: playing,
            recording: recorder.isRecording, handlesShown: shown.handlesShown, frameState: shown.state, handles: shown.handles,
            inspector: inspector.values(), ticks: ticks, hovered: hoveredTick?.label, performed: session.performed, message: message,
            messageIsError: messageIsError, sceneError: sceneError, warnings: warningsShown,
            askingToQuit: quitGuard.asking, chooserRow: chooser?.row,
            chooserChoices: chooser == nil ? nil : PresetChooser.choices.map { let l = PresetChooser.label($0); return l.name + String(repeating: " ", count: max(2, 10 - l.name.count)) + l.limits }, exporting: exporter.isExporting,
            firstRunGoing: firstRunStarted != nil, muted: player.muted,
            outline: cutouts.outlinePoints, stroke: cutouts.strokeShown)
    }
}
