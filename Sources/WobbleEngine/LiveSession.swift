import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// How a live session runs its scene (the subset of the command line that
/// changes what the scene does).
public struct SessionOptions: Sendable {
    /// The scene script, as given on the command line.
    public var scenePath: String
    /// `--image`: used instead of the image the script names.
    public var imagePath: String?
    /// The strings after `--` (`arg`).
    public var arguments: [String] = []
    /// `--seed`, `--fps`, `--allow-io`, `--timeout` as for a render.
    public var seed: Int = 0
    public var fps: Double?
    public var allowIO = false
    /// Wall-clock limit for one run of the scene (a live session re-runs it
    /// on every change, so a runaway script must not hang the window).
    public var timeout: Double? = 10
    /// The renderer (`--backend`): `auto` by default, as for a render, so
    /// that every front end (the window, the page, the command line) draws
    /// the same scene with the same backend and exports the same bytes;
    /// `FrameRenderers.resolve` is the one place `auto` is decided.
    public var backend: Backend = .auto
    /// Print the renderer's description.
    public var verbose = false
    /// The motion models the scene may name (the inspector offers them).
    public var motions: MotionCatalog = .standard

    public init(scenePath: String) {
        self.scenePath = scenePath
    }
}

/// A scene that runs, and runs again, with events performed live on top of
/// its own (a live session): the script on the
/// virtual clock, then `PerformedEvent`s applied at their times, gives a
/// clip; any time of it renders to a frame, overlay included.
///
/// The session owns the scene's inputs (the scene, the files the script
/// names, the image) for a watcher, keeps the last good clip when a run
/// fails, and caches the decoded image and the renderer between runs.
/// It does not know about windows. Part 2 (edited shapes) adds overrides
/// to `ScriptOptions` the same way `performed` is passed.
public final class LiveSession {
    public let options: SessionOptions

    /// The clip of the last run that succeeded, with the performed events.
    public private(set) var clip: Clip?
    /// The duration of the scene without the events performed after its
    /// end (a take starts there).
    public private(set) var scriptedDuration: Double = 0
    /// The error of the last run, nil when it succeeded.
    public private(set) var error: ScriptError?
    /// Events performed so far, in the order they were added.
    public private(set) var performed: [PerformedEvent] = []
    /// Files the last run read or named (resolved), and the image in use.
    public private(set) var inputs: [String] = []
    /// The image of the last good run.
    public private(set) var image: RGBAImage?
    /// Where it came from.
    public private(set) var imagePathInUse: String?
    /// Counts successful runs (a new clip).
    public private(set) var generation = 0

    /// The text the last save wrote (its run is no change by another program).
    private var savedText: [UInt8]?
    /// A run after another program saved the scene found its calls again
    /// by their text: their old ordinals and new ones, what each call's own
    /// text made before and now (the studio moves its undo steps with them).
    public struct CallsMoved {
        /// Old ordinal to new, for every call found again (by its text, else
        /// at its place when that call is not found elsewhere).
        public var ordinals: [Int: Int]
        public var oldBase: [Int: SketchState]
        public var newBase: [Int: SketchState]
    }
    /// Told when another program's save was run (see `CallsMoved`).
    public var callsMoved: ((CallsMoved) -> Void)?
    /// Set when a committed run ran the edits on the wrong calls (another
    /// program's save moved them): the scene runs again.
    private var rerunForMovedEdits = false

    /// The studio's unsaved edits (sketches of `addSketch` calls by call,
    /// 0-based in run order; sketches added), applied on every run.
    public var edits = SketchEdits() { didSet { noteEdit() } }
    /// The points of the edited sketches, by call.
    public var sketchOverrides: [Int: SketchPoints] {
        get { edits.calls.mapValues(\.points) }
        set {
            var calls: [Int: SketchState] = [:]
            for (n, p) in newValue {
                var state = edits.calls[n] ?? baseState(n) ?? SketchState(points: p)
                state.points = p
                calls[n] = state
            }
            edits.calls = calls
        }
    }
    /// The points of the sketches added.
    public var addedSketches: [SketchPoints] {
        get { edits.added.map(\.points) }
        set {
            edits.added = newValue.enumerated().map { i, p in
                var state = i < edits.added.count ? edits.added[i] : SketchState(points: p)
                state.points = p
                return state
            }
        }
    }
    /// The soundtrack of the last good run (nil: the scene calls no `soundtrack()`).
    public private(set) var sound: SceneSound?
    /// The kicks the script gave in the last good run (the timeline's ticks).
    public private(set) var scriptKicks: [ScriptKick] = []
    /// What a headless render of the last good run would warn about (a
    /// touch that hits nothing with its line, nothing moving, a GIF that
    /// ends while moving, sketches never prepared...), one line each.
    public private(set) var warnings: [String] = []
    /// The events of the scene's own `perform{...}` block (a baked take), as
    /// the last good run read them.
    public private(set) var sceneBaked: [PerformedEvent] = []
    /// The baked events as the edits have them now.
    public var baked: [PerformedEvent] { edits.baked ?? sceneBaked }
    /// The `untilStill` calls of the last good run and how long each waited.
    public private(set) var stillWaits: [StillWait] = []
    /// The wait the last good run added to end at the loop's period (`L`).
    public private(set) var periodWait: LoopSource.PeriodWait?
    /// Whether the scene's own text calls `loop()` (as the last good run read it).
    public var sceneLoops: Bool { sceneText.map(LoopSource.callsLoop) ?? false }
    /// The `addSketch` calls of the last good run.
    public private(set) var sketchCalls: [SketchCall] = [] { didSet { callsByLine = nil } }
    /// The calls made from each line of the scene file (built when first asked).
    private var callsByLine: [Int: [Int]]?
    /// The scene's text as the last good run read it, and its calls.
    public private(set) var sceneText: [UInt8]?
    public private(set) var sceneSource: SketchSource?
    /// The text the first unsaved edit was made on (a save merges the edits
    /// into the file as it is then: `SourceMerge`).
    public private(set) var editBase: [UInt8]?
    /// The text each edited call was first edited on, by call: a call edited
    /// only after a reload was edited on the reloaded text, so another
    /// program's change to it before then is no conflict.
    private var callBases: [Int: [UInt8]] = [:]

    /// Whether there are edits not in the file: pending (`edits`) or
    /// detached from their calls (`detached`).
    public var hasUnsavedEdits: Bool { !edits.isEmpty || !detached.isEmpty }

    private func noteEdit() {
        guard !edits.isEmpty else {
            editBase = nil
            callBases = [:]
            return
        }
        if editBase == nil { editBase = sceneText }
        for n in edits.calls.keys where callBases[n] == nil { callBases[n] = sceneText }
        for n in callBases.keys where edits.calls[n] == nil { callBases[n] = nil }
    }

    /// The sketch the n-th call of the last good run made from its own
    /// argument (before any edit): points, parameters, the local's name.
    public func baseState(_ ordinal: Int) -> SketchState? {
        guard sketchCalls.indices.contains(ordinal) else { return nil }
        let c = sketchCalls[ordinal]
        return SketchState(points: c.points, parameters: c.parameters, name: sourceCall(ordinal)?.declaration?.name)
    }

    /// The sketches of every call of the last good run, unedited.
    public var baseStates: [Int: SketchState] {
        var out: [Int: SketchState] = [:]
        for n in sketchCalls.indices { out[n] = baseState(n) }
        return out
    }

    /// The sketch as the edits have it now (`.call` or `.added`).
    public func currentState(_ kind: SketchOrigin.Kind) -> SketchState? {
        switch kind {
        case .call(let n): return edits.calls[n] ?? baseState(n)
        case .added(let i): return edits.added.indices.contains(i) ? edits.added[i] : nil
        }
    }

    /// Sets a sketch's state; an edit equal to the call's own sketch is dropped.
    public func setState(_ kind: SketchOrigin.Kind, _ state: SketchState) {
        switch kind {
        case .call(let n):
            edits.calls[n] = state == baseState(n) ? nil : state
        case .added(let i):
            if edits.added.indices.contains(i) { edits.added[i] = state }
        }
    }

    private var cache: ImageCache = [:]
    private var soundCache: SoundCache = [:]
    /// The cutouts of the last runs (`CutoutKey`): a run makes only those
    /// whose image, region or mask file changed.
    private var cutoutCache: CutoutCache = [:]
    /// How many cutout layers (GrabCut and inpainting, or a mask file read
    /// and inpainted) the runs made so far; those found again are not counted.
    public private(set) var cutoutsMade = 0
    private var renderer: FrameRenderer?
    private var rendererImagePath: String?
    private var rendererStamp: FileStamp?
    /// The stamp of the image file when `image` was decoded from it.
    private var imageStamp: FileStamp?

    public init(options: SessionOptions) {
        self.options = options
    }

    // MARK: Running

    /// Runs the scene with the performed events. On success the clip (and
    /// image) are replaced; on failure the last good ones stay and `error`
    /// says why. Returns true on success. The same as `prepareRun()`, its
    /// `compute()` and `commit` on this thread. A background run in flight
    /// is abandoned (this one reads the newer state).
    @discardableResult
    public func run() -> Bool {
        abandonRun(waitingUpTo: 0)
        let ok = commit(prepareRun().compute()) ?? false
        guard rerunForMovedEdits else { return ok }
        rerunForMovedEdits = false
        return commit(prepareRun().compute()) ?? false
    }

    /// What a run reads of the session besides `options`: the events
    /// performed and the unsaved sketch edits. A run is committed only while
    /// these are still the session's (else it ran on a stale state).
    public struct RunInputs: Equatable, Sendable {
        public var performed: [PerformedEvent]
        public var edits: SketchEdits
    }

    /// The inputs a run started now would use.
    public var runInputs: RunInputs {
        RunInputs(performed: performed, edits: edits)
    }

    /// A run ready to compute: everything it reads copied out of the
    /// session, so `compute()` can run on another thread while the session
    /// goes on serving frames.
    public func prepareRun() -> RunJob {
        RunJob(options: options, inputs: runInputs, cache: cache, sounds: soundCache, cutoutCache: cutoutCache)
    }

    /// Puts a computed run into the session: on success the clip, image,
    /// `addSketch` calls and scene text are replaced; on failure `error` says
    /// why and the last good clip stays. Images it decoded join the cache
    /// either way. Returns nil, changing nothing else, when the run was made
    /// with other inputs than the session has now (events performed or
    /// sketches edited meanwhile): run again. Else whether it succeeded.
    /// `evenIfStale`: put such a run in all the same (`collectRun` does, for
    /// a clip: a consistent run of the inputs of a moment ago).
    @discardableResult
    public func commit(_ outcome: RunOutcome, evenIfStale: Bool = false) -> Bool? {
        for (path, c) in outcome.decoded { cache[path] = (c.stamp, c.image) }
        for (path, c) in outcome.decodedSounds { soundCache[path] = c }
        // The cutouts of the newest run are kept (a failed one adds its own).
        cutoutsMade += outcome.cutoutsMade
        cutoutCache = outcome.succeeded ? outcome.cutouts : cutoutCache.merging(outcome.cutouts) { $1 }
        guard evenIfStale || outcome.inputs == runInputs else { return nil }
        if let named = outcome.named { inputs = named }
        switch outcome.result {
        case .success(let r):
            isProvisional = false
            clip = r.clip
            scriptedDuration = r.scriptedDuration
            image = r.image
            imagePathInUse = r.imagePath
            imageStamp = r.imageStamp
            let text = outcome.sceneText
            // The calls as they were (their text), to find them again in a
            // text another program saved.
            let before = text != sceneText && text != savedText
                ? sceneSource.map { (source: $0, calls: sourceCalls(), base: baseStates) } : nil
            sketchCalls = r.sketchCalls
            scriptKicks = r.kicks
            sound = r.sound
            stillWaits = r.stillWaits
            periodWait = r.periodWait
            warnings = r.warnings
            sceneBaked = r.scenePerformed
            if text != sceneText || sceneSource == nil {
                sceneText = text
                sceneSource = text.map { SketchSource(text: $0) }
            }
            // (A run that started before the save read the old text: the
            // saved one is still to come.)
            if text == savedText { savedText = nil }
            error = nil
            generation += 1
            if let before { followCalls(from: before.source, calls: before.calls, base: before.base) }
            // The text says now what the loop edit says: no edit any more.
            if let loop = edits.loop, loop == sceneLoops { edits.loop = nil; edits.loopPeriod = nil }
            if let baked = edits.baked, baked == sceneBaked { edits.baked = nil }
            return true
        case .failure(let f):
            error = ScriptError(message: f.message, details: f.details, kind: f.kind)
            return false
        }
    }

    // MARK: Before the first run

    /// The clip is a still of the image the scene names, shown while its
    /// first run goes on (`showProvisionalStill`): no sketches, one frame.
    public private(set) var isProvisional = false

    /// Shows the picture the scene will load before its first run ends:
    /// `--image`, else the scene's first `image("...")` with a literal
    /// path (relative to the scene's folder), as a one-frame clip without
    /// regions. False (nothing shown) when there is none, it cannot be
    /// read, or a run already committed. The first good run replaces it.
    @discardableResult
    public func showProvisionalStill() -> Bool {
        guard clip == nil else { return false }
        let path: String
        if let given = options.imagePath {
            path = given
        } else {
            guard let text = try? Posix.readFile(options.scenePath), let lit = SketchSource.imageLiteral(text) else { return false }
            path = lit.hasPrefix("/") ? lit : ScenePaths.join(ScenePaths.folder(options.scenePath), lit)
        }
        guard Posix.kind(path) == .regular, let img = try? ImageIO.load(path: path) else { return false }
        let fps = options.fps ?? 30
        let still = Timeline(entries: [(time: 0, state: SceneSnapshot(models: [], sketches: [], overlay: false))])
        clip = Clip(fps: fps, frameCount: 1, duration: 0, imageWidth: img.width, imageHeight: img.height, timeline: still)
        image = img
        imagePathInUse = path
        imageStamp = nil
        isProvisional = true
        return true
    }

    // MARK: Runs in the background

    /// The one thread runs compute on (serial: one run at a time, so one
    /// Lua VM at a time), and the run in flight on it.
    private let worker = SerialQueue(label: "wobble-run.live-session.run")
    private var inFlight: RunTicket?
    /// A run was asked for while one was in flight: it starts when that one ends.
    private var runAgain = false

    /// Whether a background run is in flight (its result not yet committed).
    public var isRunning: Bool { inFlight != nil }

    /// Runs the scene again off this thread: starts a run now when none is
    /// in flight, else remembers to start one when it ends (any number of
    /// asks meanwhile make one run). `collectRun` commits it.
    public func requestRun() {
        if inFlight != nil {
            runAgain = true
        } else {
            startRun()
        }
    }

    private func startRun() {
        runAgain = false
        let job = prepareRun()
        let ticket = RunTicket()
        inFlight = ticket
        ticket.group.enter()
        worker.async {
            let outcome = job.compute(shouldAbort: { ticket.isCancelled })
            ticket.deliver(outcome)
            ticket.group.leave()
        }
    }

    /// What `collectRun` did with a run that finished.
    public enum Collected: Equatable, Sendable {
        /// It was committed: whether it succeeded (as `run()` returns).
        case committed(Bool)
        /// Its inputs changed while it ran (an event performed, a sketch
        /// edited): the scene runs again with them. Its clip was put in
        /// meanwhile (`shown`: it succeeded; a slow scene so keeps following
        /// a drag), its error was not (the edits since may mend it).
        case superseded(shown: Bool)
    }

    /// Commits the background run that has finished, if any (call it often,
    /// on the thread that owns the session). nil while none finished. A run
    /// asked for meanwhile starts now (`isRunning` says so).
    public func collectRun() -> Collected? {
        guard let ticket = inFlight, let outcome = ticket.take() else { return nil }
        inFlight = nil
        guard let ok = commit(outcome) else {
            let shown = outcome.succeeded && commit(outcome, evenIfStale: true) == true
            rerunForMovedEdits = false
            startRun()
            return .superseded(shown: shown)
        }
        if rerunForMovedEdits {
            // The edits follow their calls to new places: the run had them
            // on the old ones.
            rerunForMovedEdits = false
            startRun()
            return .superseded(shown: ok)
        }
        if runAgain { startRun() }
        return .committed(ok)
    }

    /// Waits up to `seconds` for the run in flight to finish computing
    /// (`collectRun` then commits it at once); true when it has, or none is
    /// in flight. A front end on a manual clock (the studio's in-process
    /// tests) so sees every run take no time.
    @discardableResult
    public func waitForRun(upTo seconds: Double) -> Bool {
        guard let ticket = inFlight else { return true }
        return ticket.group.wait(timeout: .now() + max(0, seconds)) == .success
    }

    /// Abandons the run in flight, if any: its script is asked to stop, its
    /// result is dropped and no run that was asked for starts. Waits up to
    /// `seconds` for it to end; returns false when it had not.
    @discardableResult
    public func abandonRun(waitingUpTo seconds: Double = 1) -> Bool {
        runAgain = false
        guard let ticket = inFlight else { return true }
        inFlight = nil
        ticket.cancel()
        return ticket.group.wait(timeout: .now() + max(0, seconds)) == .success
    }

    static func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    // MARK: Sketches

    /// The scene file's call that made each sketch of the last run, by
    /// ordinal (the calls made from the scene file's text).
    private func sourceCalls() -> [Int: SketchSource.Call] {
        var out: [Int: SketchSource.Call] = [:]
        for n in sketchCalls.indices { if let c = sourceCall(n) { out[n] = c } }
        return out
    }

    /// An unsaved edit whose call another program's save took away (deleted,
    /// or copied so that which copy is the edited one cannot be told). It
    /// is applied to no sketch and written nowhere; a save is refused while
    /// one is pending (`dropDetached` lets it go).
    public struct DetachedEdit: Sendable, Equatable {
        /// The sketch as the edit had it.
        public var state: SketchState
        /// The call as it was: `body (scene.lua:3)`.
        public var label: String
        public var problem: SourceMerge.Problem
        /// The save's refusal: `body (scene.lua:3) was deleted on disk; ...`.
        public var message: String {
            "\(label) \(problem.phrase); the edit stays pending — Ctrl+Z drops it"
        }
    }
    /// Edits whose calls are gone from the scene file (newest last).
    public private(set) var detached: [DetachedEdit] = []

    /// Lets the newest detached edit go (all of them: `all`); returns what was dropped.
    @discardableResult
    public func dropDetached(all: Bool = false) -> [DetachedEdit] {
        guard !detached.isEmpty else { return [] }
        let dropped = all ? detached : [detached.removeLast()]
        if all { detached = [] }
        return dropped
    }

    /// How a call is named in messages: `body (scene.lua:3)`, or `the
    /// sketch of scene.lua:3` when it is assigned to no name.
    private func label(_ call: SketchSource.Call, name: String? = nil) -> String {
        if let n = name ?? call.declaration?.name { return "\(n) (\(options.scenePath):\(call.line))" }
        return "the sketch of \(options.scenePath):\(call.line)"
    }

    /// Another program saved the scene and it ran: the pending edits (and
    /// the texts they were made on) follow their calls by the calls'
    /// identity (`SourceMerge.match`), never by position: an `addSketch`
    /// inserted, deleted or moved before an edited one does not hand its
    /// edit to another sketch. A call whose own argument changed stays
    /// matched (by its name, or by its place when unnamed; its save is
    /// then a conflict); an edit whose call is gone or copied is detached.
    /// Edits equal to what the new text makes are no edits any more.
    private func followCalls(from oldSource: SketchSource, calls oldCalls: [Int: SketchSource.Call], base oldBase: [Int: SketchState]) {
        guard let newSource = sceneSource else { return }
        let found = SourceMerge.match(oldSource, newSource)
        var ordinalOfText: [Int: Int] = [:]
        for (m, c) in sourceCalls() { if let j = newSource.index(of: c) { ordinalOfText[j] = m } }
        var map: [Int: Int] = [:]
        var how: [Int: SourceMerge.Found] = [:]
        for (n, c) in oldCalls {
            guard let i = oldSource.index(of: c) else { continue }
            how[n] = found[i]
            if let j = found[i].index, let m = ordinalOfText[j] { map[n] = m }
        }
        let moved = CallsMoved(ordinals: map, oldBase: oldBase, newBase: baseStates)
        var calls: [Int: SketchState] = [:], bases: [Int: [UInt8]] = [:]
        for (n, var state) in edits.calls.sorted(by: { $0.key < $1.key }) {
            guard let m = map[n] else {
                let problem: SourceMerge.Problem = how[n] == .duplicated ? .duplicated : .deleted
                let name = oldCalls[n].map { label($0) } ?? "a sketch"
                detached.append(DetachedEdit(state: state, label: name, problem: problem))
                continue
            }
            // Renamed on disk and not in the studio: the edit takes the new name.
            if case .renamed = how[n], state.name == oldBase[n]?.name { state.name = baseState(m)?.name }
            calls[m] = state
            bases[m] = callBases[n]
        }
        for (m, state) in calls where state == baseState(m) { calls[m] = nil; bases[m] = nil }
        if calls != edits.calls {
            callBases = bases
            edits.calls = calls
            rerunForMovedEdits = true
        }
        callsMoved?(moved)
    }

    /// Which call made a sketch, and whether the studio may edit it: the
    /// source call in the scene's text (nil and the message when it may not).
    public func editableCall(_ ordinal: Int) -> (call: SketchSource.Call?, problem: String?) {
        guard ordinal >= 0, ordinal < sketchCalls.count else { return (nil, "this sketch is not in the last run") }
        let c = sketchCalls[ordinal]
        let chunk = "@" + options.scenePath
        guard let line = c.line, let source = c.source else {
            return (nil, "\(options.scenePath): this sketch is computed; edit the script")
        }
        guard source == chunk else {
            let shown = source.hasPrefix("@") ? String(source.dropFirst()) : source
            return (nil, "\(shown):\(line): this sketch is made in another file; edit it there")
        }
        let computed = "\(options.scenePath):\(line): this sketch is computed; edit the script"
        guard let call = sourceCall(ordinal), SketchSource.problem(call) == nil else { return (nil, computed) }
        return (call, nil)
    }

    /// The call in the scene's text that made the sketch of the n-th call of
    /// the last run: the k-th call made from a line is the k-th written on
    /// it; nil when the line made more (or fewer) sketches than it has calls
    /// (a loop, a function), or the call is in another file.
    public func sourceCall(_ ordinal: Int) -> SketchSource.Call? {
        guard sketchCalls.indices.contains(ordinal), let line = sketchCalls[ordinal].line,
              sketchCalls[ordinal].source == "@" + options.scenePath, let src = sceneSource else { return nil }
        let chunk = "@" + options.scenePath
        if callsByLine == nil {
            var index: [Int: [Int]] = [:]
            for (i, c) in sketchCalls.enumerated() where c.source == chunk { if let l = c.line { index[l, default: []].append(i) } }
            callsByLine = index
        }
        let fromLine = callsByLine?[line] ?? []
        guard let k = fromLine.firstIndex(of: ordinal) else { return nil }
        let written = src.calls(onLine: line)
        guard written.count == fromLine.count else { return nil }
        return written[k]
    }

    /// An error of saving (one line).
    public struct SaveError: Error, CustomStringConvertible {
        public var message: String
        /// The scene file is gone from its path (`sceneFileIsGone`): the
        /// edits can be kept with `writeUnsaved`.
        public var fileGone = false
        public var description: String { message }
    }

    /// The refusal of a save into a scene file that is gone, nil while it is there.
    private func goneProblem() -> SaveError? {
        let path = options.scenePath
        switch Posix.kind(path) {
        case .regular: return nil
        case nil:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is gone from disk (deleted or renamed); the edits stay pending", fileGone: true)
        case .directory:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is a folder now; the edits stay pending", fileGone: true)
        default:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is not a regular file now; the edits stay pending", fileGone: true)
        }
    }

    /// Writes the unsaved edits into the scene file as it is on disk now
    /// (only the literals, keys and names edited change; added sketches
    /// become their own lines), then runs the saved scene. A save by another
    /// program since the edits were made is merged (`SourceMerge`): refused,
    /// the edits pending, when it changed a constructor they change. Returns
    /// what was written (for messages). `runAfter` false: the caller runs the
    /// saved scene (`requestRun`).
    @discardableResult
    public func saveEdits(runAfter: Bool = true) throws -> (edited: Int, added: Int) {
        guard hasUnsavedEdits else { return (0, 0) }
        if let gone = goneProblem() { throw gone }
        let path = options.scenePath
        // Read, merge, write and rename holding the scene folder's lock
        // (another studio saving the same scene waits its turn, then merges
        // into what it wrote), and compare again just before the rename (an
        // editor takes no lock; its save in the meantime is not overwritten).
        let counts: (Int, Int)
        do {
            counts = try FolderLock.withLock(folderOf: path) {
                let disk: [UInt8]
                do { disk = try Posix.readFile(path) } catch { throw SaveError(message: "not saved: \(error)") }
                // The studio's masks go beside the scene first; the edits
                // then name their files (all back as they were on failure).
                let unsaved = edits
                let namedBefore = studioMasksNamed
                var masks = MaskWrites()
                do {
                    masks = try writeMasks()
                    let text = try merged(into: disk)
                    if let problem = LuaSyntax.problem(text, name: path) {
                        throw SaveError(message: "not saved: the rewritten scene does not compile: \(problem)")
                    }
                    try AtomicFile.write(text, to: path, beforeRename: {
                        guard (try? Posix.readFile(path)) == disk else {
                            throw SaveError(message: "not saved: \(path) changed on disk while it was being saved (save again)")
                        }
                    })
                    savedText = text
                } catch {
                    masks.undo()
                    edits = unsaved
                    throw error
                }
                savedMasks = masks.all.filter { $0.lowercased().hasSuffix(".png") }
                removedMasks = removeMasks(namedBefore: namedBefore)
                return (edits.calls.count, edits.added.count)
            }
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
        edits = SketchEdits()
        if runAfter { run() }
        return counts
    }

    /// The masks the last save wrote (`<scene>-masks/<name>.png`).
    public private(set) var savedMasks: [String] = []
    /// The masks the last save removed (no sketch names them any more).
    public private(set) var removedMasks: [String] = []

    /// The folder the studio's masks are saved in, as the scene names it:
    /// `<scene>-masks`, beside the scene.
    public var masksFolderName: String { ScenePaths.baseName(options.scenePath) + "-masks" }

    /// What `writeMasks` did: the files it wrote that were not there
    /// (taken away again when the save fails), and the bytes of those it
    /// replaced (put back then).
    private struct MaskWrites {
        var created: [String] = []
        var replaced: [(path: String, bytes: [UInt8])] = []
        var all: [String] { created + replaced.map(\.path) }

        /// Puts everything back as it was before the save.
        func undo() {
            for m in created { try? Posix.unlink(AT_FDCWD, m, shown: m) }
            for r in replaced { try? AtomicFile.write(r.bytes, to: r.path) }
        }
    }

    /// The mask file `source` names when it lies in the studio's masks
    /// folder (`masksFolderName`, beside the scene), nil otherwise: the
    /// files the studio writes, replaces and removes (never others).
    private func studioMask(_ source: CutoutSource?) -> (path: String, file: String)? {
        guard case .file(_, let written)? = source else { return nil }
        let prefix = masksFolderName + "/"
        guard written.hasPrefix(prefix) else { return nil }
        let file = String(written.dropFirst(prefix.count))
        guard !file.isEmpty, !file.contains("/"), file != ".", file != ".." else { return nil }
        return (ScenePaths.join(ScenePaths.join(ScenePaths.folder(options.scenePath), masksFolderName), file), file)
    }

    /// The studio's mask files the calls of the last good run name (their
    /// text as it is, edits aside).
    private var studioMasksNamed: Set<String> {
        Set(sketchCalls.indices.compactMap { studioMask(baseState($0)?.parameters.cutout?.source)?.path })
    }

    /// Writes every cutout of the edits still in memory as a PNG in
    /// `masksFolderName` (made when missing), with its strokes beside it
    /// (`<name>.strokes`, `CutoutStrokesFile`; none written, and an old one
    /// removed, when it has none): one file per region. The file is
    /// `<name>.png` for the sketch's name when that is free or is the
    /// region's own (the file its line names now, replaced); else the
    /// region's own file; else the first free `<name>-N.png`: never over
    /// another region's file, atomically. The edits then name those files
    /// (`cutout = "..."`).
    private func writeMasks() throws -> MaskWrites {
        var pending: [(kind: SketchOrigin.Kind, name: String, mask: MaskImage, own: (path: String, file: String)?)] = []
        for (n, state) in edits.calls.sorted(by: { $0.key < $1.key }) {
            if case .memory(let m)? = state.parameters.cutout?.source {
                let name = state.name ?? baseState(n)?.name ?? "line\(sketchCalls.indices.contains(n) ? sketchCalls[n].line ?? n : n)"
                pending.append((.call(n), name, m, studioMask(baseState(n)?.parameters.cutout?.source)))
            }
        }
        for (i, state) in edits.added.enumerated() {
            if case .memory(let m)? = state.parameters.cutout?.source { pending.append((.added(i), state.name ?? "region\(i + 1)", m, nil)) }
        }
        guard !pending.isEmpty else { return MaskWrites() }
        let sceneFolder = ScenePaths.folder(options.scenePath)
        let folderName = masksFolderName
        let folder = ScenePaths.join(sceneFolder, folderName)
        // Not followed: a link planted as `<scene>-masks` would put the
        // masks wherever it leads.
        switch Posix.kind(folder, follow: false) {
        case .directory?: break
        case nil:
            do { try Posix.mkdir(AT_FDCWD, folder, 0o755, shown: ScenePaths.shown(folder)) } catch { throw SaveError(message: "not saved: \(error)") }
        case .link?:
            throw SaveError(message: "not saved: \(ScenePaths.shown(folder)) is a symbolic link; the cutout masks go into a folder of that name beside the scene, never through a link (remove it)")
        default:
            throw SaveError(message: "not saved: \(ScenePaths.shown(folder)) is not a folder (the cutout masks go there)")
        }
        // Files other regions' lines name: never written over.
        let others = studioMasksNamed
        var done = MaskWrites()
        /// Writes `bytes` at `full`, replacing the file there only when `replace`.
        func put(_ bytes: [UInt8], _ full: String, replace: Bool) throws {
            let old = replace && Posix.kind(full, follow: false) == .regular ? try? Posix.readFile(full) : nil
            // A name the studio chose: a link there is replaced, never
            // followed; nothing is replaced unless it is this region's own file.
            try AtomicFile.write(bytes, to: full, name: old != nil ? .madeUp : .fresh, beforeRename: {
                guard old != nil || Posix.kind(full, follow: false) == nil else {
                    throw SaveError(message: "not saved: \(ScenePaths.shown(full)) appeared meanwhile (save again)")
                }
            })
            if let old { done.replaced.append((full, old)) } else { done.created.append(full) }
        }
        do {
            for p in pending {
                func free(_ file: String) -> Bool {
                    let full = ScenePaths.join(folder, file)
                    return !done.all.contains(full) && (p.own?.file == file
                        || (!others.contains(full) && Posix.kind(full, follow: false) == nil
                            && Posix.kind(CutoutStrokesFile.path(besideMask: full), follow: false) == nil))
                }
                var file = "\(p.name).png"
                if !free(file) {
                    if let own = p.own, free(own.file) {
                        file = own.file
                    } else {
                        var n = 2
                        while !free("\(p.name)-\(n).png") { n += 1 }
                        file = "\(p.name)-\(n).png"
                    }
                }
                let full = ScenePaths.join(folder, file)
                try put(try ImageIO.encodeMaskPNG(p.mask.mask), full, replace: true)
                let strokesPath = CutoutStrokesFile.path(besideMask: full)
                if !p.mask.strokes.isEmpty {
                    try put(Array(CutoutStrokesFile.text(p.mask.strokes).utf8), strokesPath, replace: true)
                } else if Posix.kind(strokesPath, follow: false) == .regular, let old = try? Posix.readFile(strokesPath) {
                    try Posix.unlink(AT_FDCWD, strokesPath, shown: ScenePaths.shown(strokesPath))
                    done.replaced.append((strokesPath, old))
                }
                let source = CutoutSource.file(path: full, written: folderName + "/" + file)
                guard var state = currentState(p.kind) else { continue }
                state.parameters.cutout = state.parameters.cutout.map { CutoutRequest(source: source, shape: $0.shape, place: $0.place) }
                switch p.kind {
                case .call(let n): edits.calls[n] = state
                case .added(let i): edits.added[i] = state
                }
            }
        } catch {
            done.undo()
            if let e = error as? SaveError { throw e }
            throw SaveError(message: "not saved: \(error)")
        }
        return done
    }

    /// After a save: the studio's mask files (and their strokes) that the
    /// scene named before it and no sketch names now (a region deleted, its
    /// cutout taken out, its mask written under another name) are removed.
    /// Returns the masks removed.
    private func removeMasks(namedBefore before: Set<String>) -> [String] {
        var now = Set<String>()
        for n in sketchCalls.indices { if let m = studioMask(currentState(.call(n))?.parameters.cutout?.source) { now.insert(m.path) } }
        for s in edits.added { if let m = studioMask(s.parameters.cutout?.source) { now.insert(m.path) } }
        var removed: [String] = []
        for path in before.subtracting(now).sorted() {
            for p in [path, CutoutStrokesFile.path(besideMask: path)] where Posix.kind(p, follow: false) == .regular {
                try? Posix.unlink(AT_FDCWD, p, shown: ScenePaths.shown(p))
            }
            removed.append(path)
        }
        return removed
    }

    /// Whether the scene file is gone from its path: deleted, renamed away,
    /// or something else than a file there now (a folder). A save cannot
    /// go there; `writeUnsaved` keeps the edits.
    public var sceneFileIsGone: Bool { Posix.kind(options.scenePath) != .regular }

    /// Where `writeUnsaved` writes: `<scene>.unsaved.lua` beside the scene,
    /// else `<scene>.unsaved-N.lua` (N from 2), the first name free.
    public var unsavedPath: String {
        ScenePaths.firstFree(beside: options.scenePath) { n in
            "\(ScenePaths.baseName(options.scenePath)).unsaved\(n == 1 ? "" : "-\(n)").lua"
        }
    }

    /// Writes the scene as the last good run read it, with the pending
    /// edits carried into it, to `unsavedPath` (atomically, never over
    /// another file), for a scene file that is gone. The edits stay pending
    /// (the scene file, if it comes back, still lacks them). Returns the
    /// path written; detached edits are not in it (their calls are gone).
    ///
    /// Pending text already written there, and unchanged on disk since, is
    /// not written again: its path is returned (a second `Ctrl+S`, or
    /// quitting after one, names the file that holds the edits instead of
    /// writing `<scene>.unsaved-2.lua` with the same bytes).
    public func writeUnsaved() throws -> String {
        guard let text = sceneText else { throw SaveError(message: "not written: the scene's text was never read") }
        let saved = detached
        detached = []
        defer { detached = saved }
        let out = try merged(into: text)
        if let last = lastUnsaved, last.bytes == out, Posix.kind(last.path, follow: false) == .regular,
           (try? Posix.readFile(last.path)) == out {
            return last.path
        }
        let path = unsavedPath
        do {
            // `.fresh`: never over anything there, a link planted meanwhile too.
            try AtomicFile.write(out, to: path, name: .fresh)
        } catch is MediaError where Posix.kind(path, follow: false) != nil {
            throw SaveError(message: "not written: \(ScenePaths.shown(path)) appeared meanwhile (save again)")
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not written: \(error)")
        }
        lastUnsaved = (path, out)
        return path
    }

    /// The last file `writeUnsaved` wrote and its bytes.
    private var lastUnsaved: (path: String, bytes: [UInt8])?

    /// Why the pending edits cannot be saved into the scene file as it is
    /// now (a conflict with another program's save), nil when they can.
    public func mergeProblem() -> String? {
        guard hasUnsavedEdits else { return nil }
        if let gone = goneProblem() { return gone.message }
        do {
            _ = try merged(into: try Posix.readFile(options.scenePath))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The scene file as a save would write it now (the pending edits
    /// carried into it; the file itself when there are none), or why not.
    public func editedText() throws -> [UInt8] {
        let disk: [UInt8]
        do { disk = try Posix.readFile(options.scenePath) } catch { throw SaveError(message: "\(error)") }
        return hasUnsavedEdits ? try merged(into: disk) : disk
    }

    /// `disk` with the pending edits carried into it.
    private func merged(into disk: [UInt8]) throws -> [UInt8] {
        guard let runText = sceneText, let runSource = sceneSource else {
            throw SaveError(message: "not saved: the scene's text was never read")
        }
        if let d = detached.first { throw SaveError(message: "not saved: \(d.message)") }
        // `loop()` switched first: the sketches are then found in that
        // text by their identity (a line more or less changes none).
        var disk = disk
        do {
            // The timeline's deletions first (by line, as the run read them;
            // refused when such a line changed), then the baked block.
            if !edits.removedKicks.isEmpty {
                if disk != runText {
                    let runLines = LoopSource.lineTexts(runText), diskLines = LoopSource.lineTexts(disk)
                    for l in edits.removedKicks where runLines[l] != diskLines[l] {
                        throw SaveError(message: "not saved: \(options.scenePath):\(l) changed on disk; the deleted kick stays pending (Ctrl+Z undoes it)")
                    }
                }
                disk = try TimelineSource.removingKicks(disk, lines: edits.removedKicks, name: options.scenePath)
            }
            if let loop = edits.loop {
                // (Lines after a deleted kick moved up.)
                func moved(_ w: StillWait) -> StillWait {
                    var w = w
                    w.line = w.line.map { l in l - edits.removedKicks.filter { $0 < l }.count }
                    return w
                }
                let period = (loop ? periodWait : nil).map { p -> LoopSource.PeriodWait in
                    var p = p
                    p.replacing = p.replacing.map(moved)
                    return p
                }
                disk = try LoopSource.switched(disk, on: loop, waits: stillWaits.map(moved), period: period, name: options.scenePath)
            }
            if let baked = edits.baked { disk = try TimelineSource.withPerform(disk, baked, name: options.scenePath) }
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
        let diskSource = disk == runText ? runSource : SketchSource(text: disk)
        var sources: [[UInt8]: SketchSource] = [runText: runSource]
        sources[disk] = diskSource
        var rewrites: [SketchSource.Edit] = []
        for (ordinal, state) in edits.calls.sorted(by: { $0.key < $1.key }) {
            let base = callBases[ordinal] ?? editBase ?? runText
            let baseSource = sources[base] ?? SketchSource(text: base)
            sources[base] = baseSource
            let (call, problem) = editableCall(ordinal)
            guard let call, let old = baseState(ordinal) else {
                throw SaveError(message: "not saved: \(problem ?? "a sketch cannot be edited")")
            }
            // The call in the text the edits were made on, then in the file
            // now, by its identity; a rename on disk goes in unless the
            // studio renamed the call too.
            let renames = state.name != old.name
            let onDisk: SketchSource.Call
            switch SourceMerge.counterpart(of: call, in: runSource, through: baseSource, to: diskSource, allowRename: !renames) {
            case .success(let c): onDisk = c
            case .failure(let problem):
                let tail = problem == .changed || problem == .renamed
                    ? "the edits stay pending (Ctrl+Z undoes them)" : "the edit stays pending — Ctrl+Z drops it"
                throw SaveError(message: "not saved: \(label(call)) \(problem.phrase); \(tail)")
            }
            rewrites.append(SketchSource.Edit(call: onDisk, old: old, new: state))
        }
        for a in edits.added {
            if let name = a.name, let lines = diskSource.names[name] {
                throw SaveError(message: "not saved: the added region's name \(name) is used on line \(lines[0]) of \(options.scenePath) now; rename it")
            }
        }
        do {
            return try diskSource.rewritten(rewrites, added: edits.added)
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
    }

    /// The sketches and live models at frame `k` with the call that made
    /// each (the studio's handles).
    public func handleShapes(atFrame k: Int) -> [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] {
        guard let clip else { return [] }
        let snap = clip.timeline.snapshot(at: Double(k) / clip.fps)
        var out: [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] = []
        for (i, s) in snap.sketches.enumerated() {
            out.append((s, i < snap.sketchOrigins.count ? snap.sketchOrigins[i] : nil, false))
        }
        for m in snap.models { out.append((m.shape, m.origin, true)) }
        return out
    }

    // MARK: Performed events

    /// Replaces the performed events without running the scene.
    public func setPerformed(_ events: [PerformedEvent]) {
        performed = events
    }

    // MARK: Frames

    /// The frame index shown at time `t` (the latest frame at or before it).
    public func frameIndex(at t: Double) -> Int {
        guard let clip else { return 0 }
        let k = (t * clip.fps + 1e-6).rounded(.down)
        guard k.isFinite, k >= 0 else { return 0 }
        return Int(Swift.min(k, 1e12))
    }

    /// The state of frame `k` of the clip (frames past the end go on in
    /// closed form: the models keep moving as their impulses say).
    public func frameState(_ k: Int) -> FrameState? {
        clip?.frame(Swift.max(0, k))
    }

    /// Renders `state` exactly as a headless render does (`--overlay` off
    /// unless the scene's `overlay(true)` asks), then paints `extra`
    /// shapes on it (handles), all through `Compositor`.
    public func render(_ state: FrameState, extra: [RegionShape] = []) throws -> RGBAImage {
        let r = try currentRenderer()
        return try Compositor.frame(state, renderer: r, extra: extra)
    }

    /// The size frames are rendered at: nil for the source image's size, or
    /// a smaller one (the studio on a screen smaller than the picture): the
    /// frame is then what `wobble-run --width W --height H` renders.
    public var outputSize: (width: Int, height: Int)? {
        didSet { if outputSize.map({ $0.width <= 0 || $0.height <= 0 }) ?? false { outputSize = nil } }
    }

    /// How source pixels map to the frames `render` makes, once an image is loaded.
    public var mapping: OutputMapping? {
        guard let img = image else { return nil }
        let size = outputSize ?? (img.width, img.height)
        return OutputMapping(sourceWidth: img.width, sourceHeight: img.height, outputWidth: size.width, outputHeight: size.height)
    }

    /// Makes the renderer instead of `options.backend` (the studio: a GLES
    /// renderer in its window's context); setting it drops the current one.
    public var makeRenderer: ((_ source: RGBAImage, _ mapping: OutputMapping) throws -> FrameRenderer)? {
        didSet { dropRenderer() }
    }

    /// Forgets the renderer (the next frame makes one again): its GL names
    /// go while their context is still alive.
    public func dropRenderer() {
        renderer = nil
        rendererImagePath = nil
        rendererStamp = nil
    }

    /// The renderer for the current image and output size (made on first
    /// use, and again when either changed).
    public func frameRenderer() throws -> FrameRenderer { try currentRenderer() }

    /// The renderer for the current image and output size, made again when
    /// either changed.
    private func currentRenderer() throws -> FrameRenderer {
        guard let img = image, let path = imagePathInUse, let m = mapping else { throw SessionError("no image loaded") }
        if let r = renderer, rendererImagePath == path, rendererStamp == imageStamp, r.mapping == m {
            return r
        }
        renderer = nil
        let r: FrameRenderer
        if let make = makeRenderer {
            r = try make(img, m)
        } else {
            r = try FrameRenderers.make(options.backend, source: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight,
                                        verbose: options.verbose)
        }
        renderer = r
        rendererImagePath = path
        rendererStamp = imageStamp
        return r
    }
}

/// A background run's mailbox: the worker puts the outcome in, the
/// session's thread takes it out; the session's thread cancels, the
/// worker's script polls that.
final class RunTicket: Sendable {
    private let state = Mutex<(outcome: RunOutcome?, cancelled: Bool)>((nil, false))
    /// Left when the worker is done with the run.
    let group = DispatchGroup()

    var isCancelled: Bool { state.withLock { $0.cancelled } }
    func cancel() { state.withLock { $0.cancelled = true } }
    func deliver(_ outcome: RunOutcome) { state.withLock { $0.outcome = outcome } }
    func take() -> RunOutcome? {
        state.withLock { s in
            defer { s.outcome = nil }
            return s.outcome
        }
    }
}

/// An error of the session itself (an image that cannot be read).
public struct SessionError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
