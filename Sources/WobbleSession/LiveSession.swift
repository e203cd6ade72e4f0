import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript

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
    /// The renderer (`--backend`).
    public var backend: Backend = .gles
    /// Print the renderer's description.
    public var verbose = false

    public init(scenePath: String) {
        self.scenePath = scenePath
    }
}

/// A scene that runs, and runs again, with events performed live on top of
/// its own (the seam of DESIGN.md "A live session"): the script on the
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

    private var cache: [String: (stamp: FileStamp, image: RGBAImage)] = [:]
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
    /// says why. Returns true on success.
    @discardableResult
    public func run() -> Bool {
        var named: [String] = []
        var loadedImage: (path: String, image: RGBAImage)?
        let loader: (String) throws -> (width: Int, height: Int) = { [unowned self] path in
            let img = try self.loadImage(path)
            loadedImage = (path, img)
            return (img.width, img.height)
        }
        var so = ScriptOptions(scriptPath: options.scenePath, imageLoader: loader)
        so.arguments = options.arguments
        so.seed = options.seed
        so.timeout = options.timeout
        so.allowIO = options.allowIO
        so.fixedFPS = options.fps
        so.performed = performed
        so.onPath = { named.append($0) }
        do {
            if let p = options.imagePath {
                let img = try loadImage(p)
                loadedImage = (p, img)
                so.imageOverride = (img.width, img.height)
            }
            guard FileManager.default.fileExists(atPath: options.scenePath) else {
                throw ScriptError(message: "wobble-run: scene '\(options.scenePath)': no such file", kind: .load)
            }
            let result = try ScriptHost(options: so).run()
            guard let loaded = loadedImage else {
                throw ScriptError(message: "wobble-run: no image: the scene loads none and no --image was given", kind: .finish)
            }
            inputs = LiveSession.unique(named.filter { $0 != result.outputPath } + [loaded.path])
            clip = result.clip
            scriptedDuration = result.scriptEnd
            image = loaded.image
            imagePathInUse = loaded.path
            imageStamp = cache[loaded.path]?.stamp
            error = nil
            generation += 1
            return true
        } catch let e as ScriptError {
            inputs = LiveSession.unique(named + (loadedImage.map { [$0.path] } ?? []))
            error = e
        } catch let e as SessionError {
            inputs = LiveSession.unique(named + (options.imagePath.map { [$0] } ?? []))
            error = ScriptError(message: "wobble-run: \(e.message)", kind: .load)
        } catch {
            self.error = ScriptError(message: "wobble-run: \(error)", kind: .load)
        }
        return false
    }

    static func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    // MARK: Performed events

    /// Adds performed events and runs the scene again (the wobble answers
    /// at once). Returns false when the run failed (the events stay).
    @discardableResult
    public func perform(_ events: [PerformedEvent]) -> Bool {
        performed.append(contentsOf: events)
        return run()
    }

    /// Drops the performed events (and runs the scene again when any).
    public func clearPerformed() {
        guard !performed.isEmpty else { return }
        performed.removeAll()
        run()
    }

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

    /// The sketches and live models' shapes at frame `k` (what the handles
    /// overlay shows).
    public func shapes(atFrame k: Int) -> [RegionShape] {
        guard let clip else { return [] }
        let snap = clip.timeline.snapshot(at: Double(k) / clip.fps)
        return snap.sketches + snap.models.map(\.shape)
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

    /// The renderer for the current image and output size, made again when
    /// either changed.
    private func currentRenderer() throws -> FrameRenderer {
        guard let img = image, let path = imagePathInUse, let m = mapping else { throw SessionError("no image loaded") }
        if let r = renderer, rendererImagePath == path, rendererStamp == imageStamp, r.mapping == m {
            return r
        }
        renderer = nil
        let r: FrameRenderer
        switch options.backend {
        case .cpu: r = CPURenderer(source: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight)
        case .gles: r = try GLESRenderer(source: img, outputWidth: m.outputWidth, outputHeight: m.outputHeight, verbose: options.verbose)
        }
        renderer = r
        rendererImagePath = path
        rendererStamp = imageStamp
        return r
    }

    // MARK: Images

    /// Decodes `path`, or returns the cached pixels when the file did not
    /// change (same mtime, size, inode).
    private func loadImage(_ path: String) throws -> RGBAImage {
        let stamp = FileStamp(path)
        if let c = cache[path], stamp != nil, c.stamp == stamp { return c.image }
        do {
            let img = try ImageIO.load(path: path)
            if let stamp { cache[path] = (stamp, img) }
            return img
        } catch let e as MediaError {
            throw SessionError(e.message)
        }
    }
}

/// An error of the session itself (an image that cannot be read).
public struct SessionError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The one place a frame is composited: the renderer's pixels, then the
/// control layer when the frame's overlay is on (`overlay(true)` or
/// `--overlay`), then any extra shapes (the studio's handles). Every front
/// end calls this instead of painting the overlay itself.
public enum Compositor {
    public static func frame(_ state: FrameState, renderer: FrameRenderer, extra: [RegionShape] = []) throws -> RGBAImage {
        var img = try renderer.render(state)
        if state.overlayOn && !state.overlay.isEmpty {
            OverlayPainter.draw(state.overlay, into: &img, mapping: renderer.mapping)
        }
        if !extra.isEmpty {
            OverlayPainter.draw(extra, into: &img, mapping: renderer.mapping)
        }
        return img
    }

    /// `shapes` drawn as the overlay draws them, on a transparent
    /// `width`×`height` layer (source pixels 1:1): a front end blends it
    /// over frames, and draws it once while the shapes stay the same.
    public static func layer(_ shapes: [RegionShape], width: Int, height: Int) -> RGBAImage {
        layer(shapes, mapping: OutputMapping(sourceWidth: width, sourceHeight: height, outputWidth: width, outputHeight: height))
    }

    /// `shapes` (source pixels) drawn on a transparent layer of the output
    /// size of `mapping`.
    public static func layer(_ shapes: [RegionShape], mapping: OutputMapping) -> RGBAImage {
        var img = RGBAImage(width: max(0, mapping.outputWidth), height: max(0, mapping.outputHeight))
        guard img.width > 0, img.height > 0 else { return img }
        OverlayPainter.draw(shapes, into: &img, mapping: mapping)
        return img
    }
}
