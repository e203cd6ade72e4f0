import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// A live session's run lifecycle: a run on this thread, the provisional still before the first run, runs in the background (requested, collected, waited for, abandoned).
extension LiveSession {
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
            // The saved text's run (or a newer text's) gives the calls'
            // sketches from now on; a run that read the text before the save
            // does not.
            // (A save that left the text as it was, a mask replaced under
            // its name, lands with the run of that text.)
            if let p = pendingSave, text != p.from || text == p.text { pendingSave = nil }
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

    func startRun() {
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
