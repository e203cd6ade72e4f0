import WobbleSystem
import WobbleAudio
import WobbleCore

/// How to run a scene script (the command line's view of it).
public struct ScriptOptions {
    /// Path to the scene script as given on the command line; it names the
    /// chunk (`scene.lua:12: ...`) and its folder anchors relative paths.
    public var scriptPath: String
    /// The `arg` table: the strings after `--` (`arg[0]` is `scriptPath`).
    public var arguments: [String] = []
    /// Seed for `math.random` (`--seed`): same seed, same numbers.
    public var seed: Int = 0
    /// Wall-clock limit in seconds (`--timeout`); nil for none.
    public var timeout: Double? = nil
    /// `--allow-io`: open Lua's full standard libraries (no sandbox).
    public var allowIO: Bool = false
    /// `-o` given: the command line decides the output, so `output(path)`
    /// is not held to the path policy (its value is not used).
    public var outputGiven: Bool = false
    /// `--fps`: a fixed frame rate that `fps(n)` cannot change.
    public var fixedFPS: Double? = nil
    /// `--max-frames`: the clip may not have more frames.
    public var maxFrames: Int = 100_000
    /// `--image` given: its size; then `image(path)` loads nothing and
    /// returns this size.
    public var imageOverride: (width: Int, height: Int)? = nil
    /// Loads an image (path already resolved against the script's folder)
    /// and returns its size; the caller keeps the pixels. A thrown error's
    /// description becomes the message (`image: <description>`).
    public var imageLoader: (String) throws -> (width: Int, height: Int)
    /// Polled often (every run of the count hook, about every thousand Lua
    /// instructions): return true to stop the script (SIGINT/SIGTERM); the
    /// run then fails with `ScriptError.Kind.interrupted`. Must be cheap.
    public var shouldAbort: () -> Bool = { false }
    /// Called once the scene file has been read and compiled, before it
    /// runs (the CLI's `--timeout` clock for reading the scene stops here).
    public var onLoaded: () -> Void = {}
    /// Lua memory limit in bytes (default 1 GiB); beyond it the script gets
    /// Lua's "not enough memory" error.
    public var memoryLimit: Int = 1 << 30
    /// Touches and shakes performed live (the studio), applied to the scene
    /// at their times (`Scene.perform`).
    public var performed: [PerformedEvent] = []
    /// Called with every path the script names (resolved against its
    /// folder: the image, traces, modules, `output`), as it names it, even
    /// when the run fails later: what a live session watches.
    public var onPath: (String) -> Void = { _ in }
    /// The studio's edits: the n-th `addSketch` call of the run (0-based)
    /// makes the sketch edited instead of its own (points and parameters);
    /// sketches added are put on the control layer just before the run's
    /// first `prepare()` or clock step (at the end of the script when none).
    public var sketchEdits = SketchEdits()
    /// Where the script's `print` writes: stdout (true, the default) or
    /// stderr (false: when the frames themselves go to stdout).
    public var printToStdout: Bool = true
    /// The motion models `addSketch{motion = ...}` may name (and their keys).
    public var motions: MotionCatalog = .standard
    /// Decodes a sound file (path resolved against the script's folder) to
    /// mono samples at 44 100 Hz (the mean of its channels), refusing one longer than the given
    /// seconds; a thrown error's description becomes the message
    /// (`sound: <description>`). Nil: `sound()` is an error (the engine
    /// sets ffmpeg's decoder, `AudioDecoder`).
    public var soundLoader: ((_ path: String, _ maxSeconds: Double) throws -> CheckedArray<Float>)? = nil

    /// Options for `scriptPath`, loading images with `imageLoader`.
    public init(scriptPath: String, imageLoader: @escaping (String) throws -> (width: Int, height: Int)) {
        self.scriptPath = scriptPath
        self.imageLoader = imageLoader
    }
}

/// A script that ran to its end: the clip to render.
public struct ScriptResult {
    /// Frames as a pure function of time (its cutouts are made after the
    /// script, by the engine's scene runner).
    public var clip: Clip
    /// `output(...)` resolved against the script's folder, if called.
    public let outputPath: String?
    /// The image in effect (resolved against the script's folder), if the
    /// script called `image(path)` without `--image`.
    public let imagePath: String?
    /// Every file the scene read: the scene, its image (not `--image`),
    /// motion traces, modules, `dofile`/`loadfile` files. No output may
    /// replace one of them.
    public let inputs: [InputFile]
    /// The virtual time at which the script returned, before the events
    /// performed after its end (`ScriptOptions.performed`) went on.
    public var scriptEnd: Double = 0
    /// Every `addSketch` call of the run, in order (the studio's handles).
    public var sketchCalls: [SketchCall] = []
    /// The kicks the script gave (impulses, touches, shakes, trace
    /// samples), in the order given, with their lines (the studio's ticks).
    public var kicks: [ScriptKick] = []
    /// The `untilStill` calls, in order, with how long each waited.
    public var stillWaits: [StillWait] = []
    /// The studio's loop with its period (`SketchEdits.loopPeriod`): the
    /// wait that made the script end at the period (nil: none was needed).
    public var periodWait: LoopSource.PeriodWait?
    /// The events the scene file's own `perform{...}` gave (a baked take).
    public var scenePerformed: [PerformedEvent] = []
    /// What the script did that is probably a mistake (a `touch` that hit
    /// no live region, with its line), one line each.
    public var warnings: [String] = []
    /// The sound `soundtrack()` chose for the video, if any.
    public var soundtrack: Soundtrack?
    /// That sound decoded (the studio plays it and draws its beats).
    public var soundtrackSound: Sound?
}

/// The sound a video carries (`soundtrack(handle [, offset])`): the file
/// as the script named it and resolved, where its time 0 falls on the
/// clip (`offset` seconds, may be negative: the sound's start is cut).
public struct Soundtrack: Sendable, Equatable {
    /// The file, resolved against the script's folder.
    public var path: String
    /// As the script wrote it, for messages.
    public var shown: String
    /// Clip time of the sound's time 0, in seconds.
    public var offset: Double
    /// The sound's length in seconds.
    public var duration: Double

    public init(path: String, shown: String, offset: Double, duration: Double) {
        self.path = path
        self.shown = shown
        self.offset = offset
        self.duration = duration
    }
}

/// A kick the script gave: when (scene seconds), what (`impulse`,
/// `touch`, `shake`, `trace sample`) and the line of the call (nil when
/// not known), in the scene or, named by `file`, in a module.
public struct ScriptKick: Sendable, Equatable {
    public var time: Double
    public var kind: String
    public var line: Int?
    /// The module's file name when the call was made in one (nil: the scene).
    public var file: String?
    public init(time: Double, kind: String, line: Int?, file: String? = nil) {
        self.time = time
        self.kind = kind
        self.line = line
        self.file = file
    }
}

/// One `addSketch` call of a run: where it was made and what it made
/// (before any override).
public struct SketchCall: Sendable, Equatable {
    /// The chunk name of the calling function (`@scene.lua`), nil when the
    /// caller was not a Lua function.
    public var source: String?
    /// The caller's current line, nil as `source`.
    public var line: Int?
    /// The points the call's own argument gives.
    public var points: SketchPoints
    /// The parameters the call's own argument gives.
    public var parameters: WobbleParameters = .original

    public init(source: String?, line: Int?, points: SketchPoints, parameters: WobbleParameters = .original) {
        self.source = source
        self.line = line
        self.points = points
        self.parameters = parameters
    }
}

/// A scene that failed. `message` is the one clear first line
/// (`scene.lua:12: impulse: direction must be non-zero`, Lua's own
/// `scene.lua:3: ...`, or `wobble-run: ...` for errors after the script);
/// `details` is the Lua traceback when there is one.
public struct ScriptError: Error, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable, Equatable {
        /// The script could not be read or compiled.
        case load
        /// The script raised an error (its own or an API function's).
        case runtime
        /// `--timeout` ran out.
        case timeout
        /// `shouldAbort` returned true.
        case interrupted
        /// The script returned, but its clip is unusable (`scene.finish()`).
        case finish
    }

    public let message: String
    public let details: String?
    public let kind: Kind

    public init(message: String, details: String? = nil, kind: Kind) {
        self.message = message
        self.details = details
        self.kind = kind
    }

    public var description: String { message }
}

/// Runs a scene script: a fresh Lua VM (sandboxed unless `allowIO`), the
/// Lua API bound to a `Scene`, then `scene.finish()`.
public final class ScriptHost {
    public let options: ScriptOptions

    public init(options: ScriptOptions) {
        self.options = options
    }

    /// Loads and runs the script to its end on the virtual clock and returns
    /// the clip. Each call uses a new VM and a new scene.
    /// - Throws: `ScriptError` (kinds `.load`, `.runtime`, `.timeout`,
    ///   `.interrupted`, `.finish`).
    public func run() throws -> ScriptResult {
        try ScriptSession(options: options).run()
    }
}
