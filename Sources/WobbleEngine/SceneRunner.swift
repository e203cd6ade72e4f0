import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem
import WobbleVision

/// The one scene runner: a render, `--check`, `--watch`, the studio's
/// background runs and the check of a take all run their scene here. The
/// script's options are built one way from the scene-run options (`--image`,
/// `--fps`, `--seed`, `--timeout`, `--allow-io`, the script arguments); an
/// `--image` is loaded first and its size overrides the script's image; a
/// scene file that is not there is `missingScene`'s error; every image goes
/// through one reader (`loadImage`: a front end adds its read deadline or
/// its cache), and the files the script names are recorded, also when the
/// run fails (what a watcher watches).
public final class SceneRunner {
    public let options: SessionOptions
    /// Reads an image file; its errors end the run as they are.
    public let loadImage: (String) throws -> RGBAImage
    /// Decodes a sound file (`sound(path)`) to mono samples at 44 100 Hz (the mean of its channels),
    /// refusing one longer than the given seconds: ffmpeg's decoder, or a
    /// front end's cache over it.
    public var loadSound: (_ path: String, _ maxSeconds: Double) throws -> CheckedArray<Float> = { path, maxSeconds in
        try AudioDecoder.decode(path: path, maxSeconds: maxSeconds)
    }
    /// The files the script named so far (images, traces, modules).
    public private(set) var named: [String] = []
    /// The image the run uses (`--image`, else the script's), once loaded.
    public private(set) var image: RGBAImage?
    /// Its path.
    public private(set) var imagePath: String?

    /// Makes one cutout's layer (mask and plate) for the run's image: a
    /// front end puts its cache in front of the default (the live session
    /// does not run GrabCut again while the image and the region stay).
    public var makeCutout: (CutoutRequest, RGBAImage) throws -> CutoutLayer = { try Cutouts.layer($0, image: $1) }

    public init(options: SessionOptions, loadImage: @escaping (String) throws -> RGBAImage) {
        self.options = options
        self.loadImage = loadImage
    }

    /// Runs the scene on the virtual clock. `configure` sets what only this
    /// front end sets (limits, performed events, sketch edits, hooks).
    public func run(missingScene: (String) -> Error,
                    configure: (inout ScriptOptions) -> Void = { _ in }) throws -> ScriptResult {
        var override: (width: Int, height: Int)?
        if let p = options.imagePath {
            let img = try loadImage(p)
            image = img
            imagePath = p
            override = (img.width, img.height)
        }
        guard Posix.kind(options.scenePath) != nil else { throw missingScene(options.scenePath) }
        var so = ScriptOptions(scriptPath: options.scenePath) { [unowned self] path in
            let img = try self.loadImage(path)
            self.image = img
            self.imagePath = path
            return (img.width, img.height)
        }
        so.arguments = options.arguments
        so.seed = options.seed
        so.timeout = options.timeout
        so.allowIO = options.allowIO
        so.fixedFPS = options.fps
        so.imageOverride = override
        so.onPath = { [unowned self] in self.named.append($0) }
        so.soundLoader = loadSound
        so.motions = options.motions
        configure(&so)
        var result = try ScriptHost(options: so).run()
        // Cutouts: masks and plates, once per run, before any frame.
        if let image, !result.clip.cutoutRequests.isEmpty {
            result.clip.cutouts = try Cutouts.make(for: result.clip, image: image, layer: makeCutout)
        }
        return result
    }
}
