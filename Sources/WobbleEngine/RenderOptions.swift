import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleSystem

/// What one render of a scene (or `--assemble`) is asked to do: the
/// settings every front end hands the engine's `Runner`, `PresetRun` and
/// `Assembler` (the command line fills them from its option table, the
/// studio from its session), and how the run is controlled (`control`).
package struct RenderOptions: Sendable {
    package var scene: String?
    /// `--assemble DIR`: no scene; the PNG frames of DIR joined into
    /// `output` (`Assembler`).
    package var assemble: String?
    /// The output path as given (`-o`; `-` is stdout); nil: the script's
    /// `output(...)`, else a name made from the scene's.
    package var output: String?
    /// The folder a made-up output name goes into (`<scene>.gif`, a
    /// preset's `<scene>-telegram.webm`); nil: the current folder. The
    /// studio renders the scene's folder's file without changing the
    /// process's folder.
    package var outputFolder: String?
    /// `output` is a name the engine made up (a preset's own runs pass
    /// theirs on as `output`): a link there is replaced, never followed.
    package var outputMadeUp = false
    package var format: OutputFormat?
    package var fps: Double?
    package var width: Int?
    package var height: Int?
    package var image: String?
    package var frames: ClosedRange<Int>?
    package var overlay = false
    package var backend: Backend = .auto
    package var check = false
    package var seed = 0
    package var timeout: Double?
    /// The motion models the scene may name (a front end's own catalog).
    package var motions: MotionCatalog = .standard
    package var maxFrames = RenderOptions.defaultMaxFrames
    /// The `--max-frames` default.
    package static let defaultMaxFrames = 100_000
    package var quality: Int?
    package var matte: Matte?
    package var preset: Preset?
    package var allowIO = false
    package var quiet = false
    package var verbose = false
    package var loop = 0
    /// `--loop` was given (a preset honours it, or refuses it).
    package var loopGiven = false
    package var scriptArguments: [String] = []
    /// Stopping, progress and the hard deadline of the run.
    package var control = RunControl()

    package init() {}

    /// The scene-run options, as every front end hands them to the engine.
    package var sceneRun: SessionOptions {
        var s = SessionOptions(scenePath: scene ?? "")
        s.imagePath = image
        s.arguments = scriptArguments
        s.seed = seed
        s.fps = fps
        s.allowIO = allowIO
        s.timeout = timeout
        s.backend = backend
        s.verbose = verbose
        s.motions = motions
        return s
    }

    /// A name the engine makes up (not given with `-o`), in `outputFolder`.
    func placed(_ name: String) -> String {
        guard let folder = outputFolder, !name.hasPrefix("/") else { return name }
        return ScenePaths.join(folder, name)
    }
}
