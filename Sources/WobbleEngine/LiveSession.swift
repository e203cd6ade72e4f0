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
    public internal(set) var clip: Clip?
    /// The duration of the scene without the events performed after its
    /// end (a take starts there).
    public internal(set) var scriptedDuration: Double = 0
    /// The error of the last run, nil when it succeeded.
    public internal(set) var error: ScriptError?
    /// Events performed so far, in the order they were added.
    public internal(set) var performed: [PerformedEvent] = []
    /// Files the last run read or named (resolved), and the image in use.
    public internal(set) var inputs: [String] = []
    /// The image of the last good run.
    public internal(set) var image: RGBAImage?
    /// Where it came from.
    public internal(set) var imagePathInUse: String?
    /// Counts successful runs (a new clip).
    public internal(set) var generation = 0

    /// The text the last save wrote (its run is no change by another program).
    var savedText: [UInt8]?
    /// The last save until the run of its text lands: the text the run
    /// before it read (`from`), the text written, and the sketches it wrote
    /// by call. Meanwhile a call's own sketch is the one saved, and an edit
    /// is made on the saved text (the studio's own save is no conflict).
    var pendingSave: (from: [UInt8], text: [UInt8], states: [Int: SketchState])?
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
    var rerunForMovedEdits = false

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
    public internal(set) var sound: SceneSound?
    /// The kicks the script gave in the last good run (the timeline's ticks).
    public internal(set) var scriptKicks: [ScriptKick] = []
    /// What a headless render of the last good run would warn about (a
    /// touch that hits nothing with its line, nothing moving, a GIF that
    /// ends while moving, sketches never prepared...), one line each.
    public internal(set) var warnings: [String] = []
    /// The events of the scene's own `perform{...}` block (a baked take), as
    /// the last good run read them.
    public internal(set) var sceneBaked: [PerformedEvent] = []
    /// The baked events as the edits have them now.
    public var baked: [PerformedEvent] { edits.baked ?? sceneBaked }
    /// The `untilStill` calls of the last good run and how long each waited.
    public internal(set) var stillWaits: [StillWait] = []
    /// The wait the last good run added to end at the loop's period (`L`).
    public internal(set) var periodWait: LoopSource.PeriodWait?
    /// Whether the scene's own text calls `loop()` (as the last good run read it).
    public var sceneLoops: Bool { sceneText.map(LoopSource.callsLoop) ?? false }
    /// The `addSketch` calls of the last good run.
    public internal(set) var sketchCalls: [SketchCall] = [] { didSet { callsByLine = nil } }
    /// The calls made from each line of the scene file (built when first asked).
    var callsByLine: [Int: [Int]]?
    /// The scene's text as the last good run read it, and its calls.
    public internal(set) var sceneText: [UInt8]?
    public internal(set) var sceneSource: SketchSource?
    /// The text the first unsaved edit was made on (a save merges the edits
    /// into the file as it is then: `SourceMerge`).
    public internal(set) var editBase: [UInt8]?
    /// The text each edited call was first edited on, by call: a call edited
    /// only after a reload was edited on the reloaded text, so another
    /// program's change to it before then is no conflict.
    var callBases: [Int: [UInt8]] = [:]

    /// Whether there are edits not in the file: pending (`edits`) or
    /// detached from their calls (`detached`).
    public var hasUnsavedEdits: Bool { !edits.isEmpty || !detached.isEmpty }

    func noteEdit() {
        guard !edits.isEmpty else {
            editBase = nil
            callBases = [:]
            return
        }
        let base = pendingSave?.text ?? sceneText
        if editBase == nil { editBase = base }
        for n in Array(edits.calls.keys) + edits.deleted where callBases[n] == nil { callBases[n] = base }
        for n in callBases.keys where edits.calls[n] == nil && !edits.deleted.contains(n) { callBases[n] = nil }
    }

    /// The sketch the n-th call of the last good run made from its own
    /// argument (before any edit): points, parameters, the local's name;
    /// after a save whose run has not landed, the sketch saved.
    public func baseState(_ ordinal: Int) -> SketchState? {
        guard sketchCalls.indices.contains(ordinal) else { return nil }
        if let saved = pendingSave?.states[ordinal] { return saved }
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

    var cache: ImageCache = [:]
    var soundCache: SoundCache = [:]
    /// The cutouts of the last runs (`CutoutKey`): a run makes only those
    /// whose image, region or mask file changed.
    var cutoutCache: CutoutCache = [:]
    /// How many cutout layers (GrabCut and inpainting, or a mask file read
    /// and inpainted) the runs made so far; those found again are not counted.
    public internal(set) var cutoutsMade = 0
    var renderer: FrameRenderer?
    var rendererImagePath: String?
    var rendererStamp: FileStamp?
    /// The stamp of the image file when `image` was decoded from it.
    var imageStamp: FileStamp?

    public init(options: SessionOptions) {
        self.options = options
    }

    // (Stored here for the extensions in LiveSession+*.swift.)
    /// The clip is a still of the image the scene names, shown while its
    /// first run goes on (`showProvisionalStill`): no sketches, one frame.
    public internal(set) var isProvisional = false
    /// The one thread runs compute on (serial: one run at a time, so one
    /// Lua VM at a time), and the run in flight on it.
    let worker = SerialQueue(label: "wobble-run.live-session.run")
    var inFlight: RunTicket?
    /// A run was asked for while one was in flight: it starts when that one ends.
    var runAgain = false
    /// Edits whose calls are gone from the scene file (newest last).
    public internal(set) var detached: [DetachedEdit] = []
    /// The masks the last save wrote (`<scene>-masks/<name>.png`).
    public internal(set) var savedMasks: [String] = []
    /// The masks the last save removed (no sketch names them any more).
    public internal(set) var removedMasks: [String] = []
    /// The masks the last save left although no sketch names them any
    /// more, each with why (`m.png: a symbolic link, left as it is`): one
    /// phrase each, for the save's status.
    public internal(set) var keptMasks: [String] = []
    /// The last file `writeUnsaved` wrote and its bytes.
    var lastUnsaved: (path: String, bytes: [UInt8])?
    /// The size frames are rendered at: nil for the source image's size, or
    /// a smaller one (the studio on a screen smaller than the picture): the
    /// frame is then what `wobble-run --width W --height H` renders.
    public var outputSize: (width: Int, height: Int)? {
        didSet { if outputSize.map({ $0.width <= 0 || $0.height <= 0 }) ?? false { outputSize = nil } }
    }
    /// Makes the renderer instead of `options.backend` (the studio: a GLES
    /// renderer in its window's context); setting it drops the current one.
    public var makeRenderer: ((_ source: RGBAImage, _ mapping: OutputMapping) throws -> FrameRenderer)? {
        didSet { dropRenderer() }
    }
}

/// An error of the session itself (an image that cannot be read).
public struct SessionError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
