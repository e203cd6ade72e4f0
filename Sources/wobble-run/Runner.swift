import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSession

/// An error outside the script: printed as `wobble-run: <message>`, exit 1.
struct RunError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Holds the image the script (or `--image`) loaded.
final class ImageBox {
    var image: RGBAImage?
    var path: String?
}

/// Writes the frames `produce` makes for `items` into `sink` (nil: render
/// only), polling for SIGINT/SIGTERM between frames, and finishes the sink;
/// on any error the sink is aborted, so nothing half-written remains.
func streamFrames<C: Collection>(_ items: C, into sink: FrameSink?, reporter: ProgressReporter,
                                 produce: (C.Element) throws -> (image: RGBAImage, index: Int)) throws {
    do {
        for item in items {
            try Interrupt.check()
            let (image, index) = try produce(item)
            try sink?.write(image, index: index)
            reporter.frameDone()
        }
        try Interrupt.check()
        try sink?.finish()
    } catch {
        sink?.abort()
        throw error
    }
}

/// Where the frames go, decided from `-o`, `--format` and the script.
enum OutputPlan {
    case gif(String)
    case png(PNGOutput)
    case video(String)
    case null
}

/// One run of a scene: script on the virtual clock, then the frames.
struct Runner {
    let options: Options

    /// The files the latest run named (resolved: the image, traces, modules)
    /// and the image it used, for `--watch`: they may be outside the
    /// scene's folder. Set and read on the main thread only (runs and
    /// `--watch` polling take turns there).
    nonisolated(unsafe) static var lastInputs: [String] = []

    /// What a run produced, for the summary line.
    struct Summary {
        var frames: Int
        var width: Int
        var height: Int
        var clip: Clip
        var output: String?
        var seconds: Double
    }

    func run() throws -> Summary {
        let o = options
        let scenePath = o.scene!
        let box = ImageBox()
        var override: (width: Int, height: Int)?
        let deadline = ReadDeadline(seconds: o.timeout)
        if let p = o.image {
            let img = try deadline.reading("image '\(p)'") { try Runner.loadImage(p) }
            box.image = img
            box.path = p
            override = (img.width, img.height)
        }
        guard Posix.kind(scenePath) != nil else {
            throw RunError("scene '\(scenePath)': no such file")
        }
        var so = ScriptOptions(scriptPath: scenePath, imageLoader: { path in
            let img = try deadline.reading("image '\(path)'") { try Runner.loadImage(path) }
            box.image = img
            box.path = path
            return (img.width, img.height)
        })
        so.arguments = o.scriptArguments
        so.seed = o.seed
        so.timeout = o.timeout
        so.allowIO = o.allowIO
        so.outputGiven = o.output != nil
        so.fixedFPS = o.fps
        so.maxFrames = o.maxFrames
        so.imageOverride = override
        so.shouldAbort = { Interrupt.signal != nil }
        var named: [String] = []
        so.onPath = { named.append($0) }
        defer { Runner.lastInputs = named + (box.path.map { [$0] } ?? []) }
        // The count hook cannot fire inside one long C call of Lua's own
        // libraries (a pathological string.find pattern): past the timeout
        // and a grace period, stop the process (nothing is written yet).
        let watchdog = o.timeout.map { t in
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + t + 2)
            timer.setEventHandler {
                printError("\(scenePath): script timed out after \(CommandLine_.fmt(t)) s (--timeout), inside a library call")
                TemporaryPaths.removeAll()
                _exit(1)
            }
            timer.resume()
            return timer
        }
        defer { watchdog?.cancel() }
        // The scene file is read (by Lua) inside ScriptHost.run: its clock
        // stops once the chunk is loaded.
        let sceneRead = deadline?.begin("scene '\(scenePath)'")
        so.onLoaded = { if let sceneRead { deadline?.end(sceneRead) } }
        defer { if let sceneRead { deadline?.end(sceneRead) } }
        let result: ScriptResult
        do {
            result = try ScriptHost(options: so).run()
        } catch let e as ScriptError where e.kind == .interrupted {
            throw Interrupted(signal: Interrupt.signal ?? SIGINT)
        }
        watchdog?.cancel()
        let clip = result.clip
        let selection = try frameSelection(clip)
        let reporter = ProgressReporter(total: selection.count, quiet: o.quiet)

        guard let source = box.image else { throw RunError("no image: the scene loads none and no --image was given") }
        let (w, h) = try outputSize(source.width, source.height)

        // --image is an input too (the scene records the rest).
        let inputs = result.inputs + (o.image.flatMap { InputFile(role: .image, path: $0) }.map { [$0] } ?? [])
        if o.check {
            // The same output checks as a render (a bad -o fails both alike).
            let plan = try outputPlan(scriptOutput: result.outputPath, scenePath: scenePath)
            if case .png(let output) = plan { try output.validate(frameCount: selection.count) }
            try refuseToReplaceInputs(plan, inputs: inputs, frames: selection)
            return Summary(frames: selection.count, width: w, height: h, clip: clip, output: nil, seconds: reporter.elapsed)
        }
        let plan = try outputPlan(scriptOutput: result.outputPath, scenePath: scenePath)
        try refuseToReplaceInputs(plan, inputs: inputs, frames: selection)

        let renderer: FrameRenderer
        switch o.backend {
        case .cpu: renderer = CPURenderer(source: source, outputWidth: w, outputHeight: h)
        case .gles: renderer = try GLESRenderer(source: source, outputWidth: w, outputHeight: h, verbose: o.verbose)
        }

        func renderFrame(_ k: Int) throws -> RGBAImage {
            // The overlay is painted by the one compositor every front end uses.
            try Compositor.frame(clip.frame(k, overlay: o.overlay), renderer: renderer)
        }

        let sink: FrameSink?
        var outputName: String?
        switch plan {
        case .null:
            sink = nil
        case .gif(let path):
            let still = try renderer.render(FrameState(index: 0, time: 0, regions: []))
            sink = try GIFSink(path: path, width: w, height: h, fps: clip.fps, loop: o.loop, still: still)
            outputName = path
        case .png(let output):
            sink = try PNGSequenceSink(output: output, fullRender: o.frames == nil, frameCount: selection.count)
            outputName = output.path
        case .video(let path):
            sink = try VideoSink(path: path, width: w, height: h, fps: clip.fps,
                                 format: o.format.flatMap { VideoFormat(rawValue: $0.rawValue) })
            outputName = path
        }
        if clip.fps > 50, case .gif = plan {
            printError("wobble-run: warning: \(CommandLine_.fmt(clip.fps)) fps is more than GIF players show (browsers slow GIFs above 50 fps down); consider --fps 25 or 50")
        }
        try streamFrames(selection, into: sink, reporter: reporter) { k in (try renderFrame(k), k) }
        let summary = Summary(frames: selection.count, width: w, height: h, clip: clip, output: outputName, seconds: reporter.elapsed)
        if o.verbose && !reporter.isTerminal {
            printError(Runner.describe(summary))
        } else {
            reporter.finish(Runner.describe(summary))
        }
        return summary
    }

    static func describe(_ s: Summary) -> String {
        let what = s.output.map { "wrote \($0)" } ?? "rendered"
        return String(format: "%@: %d frames, %d×%d, %@ s at %@ fps, in %.2f s", what, s.frames, s.width, s.height,
                      CommandLine_.seconds(s.clip.duration), CommandLine_.fmt(s.clip.fps), s.seconds)
    }

    /// Loads a PNG or JPEG; a bad file is a `RunError` naming it.
    static func loadImage(_ path: String) throws -> RGBAImage {
        do {
            return try ImageIO.load(path: path)
        } catch let e as MediaError {
            throw RunError(e.message)
        }
    }

    /// The frames to render: all, or `--frames A-B` clipped to the clip.
    func frameSelection(_ clip: Clip) throws -> ClosedRange<Int> {
        let all = 0...(clip.frameCount - 1)
        guard let r = options.frames else { return all }
        guard r.lowerBound < clip.frameCount else {
            throw RunError("\(Runner.describe(frames: r)) selects no frame: the clip has \(clip.frameCount) frame\(clip.frameCount == 1 ? "" : "s") (0-\(clip.frameCount - 1))")
        }
        return r.lowerBound...min(r.upperBound, clip.frameCount - 1)
    }

    /// `--frames A-B` as the user wrote it (`A-` for an open range).
    static func describe(frames r: ClosedRange<Int>) -> String {
        "--frames \(r.lowerBound)-\(r.upperBound == Int.max ? "" : String(r.upperBound))"
    }

    /// `--width`/`--height`: the other side keeps the aspect ratio. The
    /// size is checked against the image limits before any frame of it is
    /// allocated (`CheckedNumbers.outputSize`), in a render and `--check`
    /// alike: too large is a usage error (the options ask for it).
    func outputSize(_ sw: Int, _ sh: Int) throws -> (Int, Int) {
        do {
            return try CheckedNumbers.outputSize(sourceWidth: sw, sourceHeight: sh, width: options.width, height: options.height)
        } catch let e as LimitError {
            throw UsageError(e.message)
        }
    }

    /// Decides the output from `-o`, `--format`, `output(...)` and the scene name.
    func outputPlan(scriptOutput: String?, scenePath: String) throws -> OutputPlan {
        if options.format == .null { return .null }
        let path: String
        if let p = options.output {
            path = p
        } else if let p = scriptOutput {
            path = p
        } else {
            let base = URL(fileURLWithPath: scenePath).deletingPathExtension().lastPathComponent
            switch options.format {
            case .png: path = base + "_frames/"
            case .mp4: path = base + ".mp4"
            case .webm: path = base + ".webm"
            default: path = base + ".gif"
            }
        }
        let plan = try Runner.plan(path: path, format: options.format)
        if options.output != nil, case .png(.pattern(let p)) = plan {
            // A malformed pattern in -o is a usage error (2); in output(...) a scene error (1).
            do { _ = try FrameNamePattern(fileName: String(p.split(separator: "/", omittingEmptySubsequences: false).last ?? ""), output: p) }
            catch let e as MediaError { throw UsageError(e.message) }
        }
        return plan
    }

    static func plan(path: String, format: OutputFormat?) throws -> OutputPlan {
        // `-` is stdout: a GIF unless --format says otherwise.
        let own = path == "-" ? nil : pathFormat(path)
        guard let format else {
            if path == "-" { return .gif(path) }
            guard let own else {
                throw UsageError("cannot tell the output format of '\(path)': use x.gif, a folder/ or a pattern like out_%04d.png for PNG frames, x.mp4, or --format")
            }
            return own
        }
        switch (format, own) {
        case (.null, _): return .null
        case (.gif, nil), (.gif, .gif?): return .gif(path)
        case (.png, nil):
            if path == "-" { throw UsageError("PNG frames cannot go to stdout ('-o -'); write them to a folder (frames/) or a pattern (out_%04d.png)") }
            return .png(.directory(path))
        case (.png, .png?): return own!
        case (.mp4, nil), (.webm, nil), (.mp4, .video?), (.webm, .video?): return .video(path)
        default:
            throw UsageError("--format \(format.rawValue) contradicts the output '\(path)'; drop one of them")
        }
    }

    /// The format a path says by itself (SPEC §2): an existing folder, a
    /// path ending in `/`, a printf pattern or `x.png` → PNG frames; `x.gif`;
    /// a video extension; nil when it says nothing.
    static func pathFormat(_ path: String) -> OutputPlan? {
        let lower = path.lowercased()
        if Posix.kind(path) == .directory { return .png(.directory(path)) }
        if lower.hasSuffix(".gif") { return .gif(path) }
        if let output = PNGOutput.parse(path) { return .png(output) }
        for ext in [".mp4", ".webm", ".mkv", ".mov"] where lower.hasSuffix(ext) { return .video(path) }
        return nil
    }
}
