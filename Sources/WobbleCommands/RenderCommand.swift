import Foundation
import WobbleCore
import WobbleEngine
import WobbleSystem

/// The parsed command line of a render (`wobble-run SCENE.lua [options]`,
/// `--assemble DIR`): the engine's `RenderOptions` (reached as `o.output`,
/// `o.fps`, …) and what only the command line has (help, `--watch`,
/// `--json`, …).
@dynamicMemberLookup
package struct RenderCommand: SceneRunOptions {
    package var render = RenderOptions()
    package var json = false
    package var watch = false
    package var help = false
    package var version = false

    package init() {}

    package subscript<T>(dynamicMember path: WritableKeyPath<RenderOptions, T>) -> T {
        get { render[keyPath: path] }
        set { render[keyPath: path] = newValue }
    }

    // The rows shared with `edit` (`SceneRunOptions`).
    package var image: String? { get { render.image } set { render.image = newValue } }
    package var fps: Double? { get { render.fps } set { render.fps = newValue } }
    package var seed: Int { get { render.seed } set { render.seed = newValue } }
    package var timeout: Double? { get { render.timeout } set { render.timeout = newValue } }
    package var backend: Backend { get { render.backend } set { render.backend = newValue } }
    package var allowIO: Bool { get { render.allowIO } set { render.allowIO = newValue } }

    /// What `--version` prints.
    package static let version = "wobble-run 0.1.0"

    /// The render's option table (rows shared with `edit` are the
    /// `SceneRunOptions` rows: `.fps`, `.image`, …).
    package static let specs: [OptionSpec<RenderCommand>] = [
        OptionSpec(names: ["-o", "--output"], value: "PATH",
                   help: "output: x.gif (animated GIF), x.webp (animated WebP), x.apng (animated PNG), a folder or a path ending in / (PNG frames frame_00000.png …), a pattern like out_%04d.png, x.mp4/x.webm/x.mov/x.mkv (video, needs ffmpeg; .webm keeps alpha, .mov of a transparent source is ProRes 4444 with alpha), x.html (one self-contained web page with a live, pokeable player), - for stdout (a GIF, or what --format names). Default: the script's output(...), else <scene>.gif here") { o, v in o.output = v },
        OptionSpec(names: ["--format"], value: OutputFormat.names,
                   help: "output format when the path does not say it (with -o -: what goes to stdout); null renders every frame and writes nothing (timing)") { o, v in
            guard let f = OutputFormat(rawValue: v.lowercased()) else {
                throw UsageError("--format: '\(v)' is not one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            o.format = f
        },
        .fps,
        OptionSpec(names: ["--width"], value: "N", help: "output width in pixels; the height keeps the aspect ratio unless given") { o, v in
            o.width = try integer(v, "--width", min: 1, max: Limits.maxImageSide)
        },
        OptionSpec(names: ["--height"], value: "N", help: "output height in pixels; the width keeps the aspect ratio unless given") { o, v in
            o.height = try integer(v, "--height", min: 1, max: Limits.maxImageSide)
        },
        .image,
        OptionSpec(names: ["--frames"], value: "A-B", help: "render only frames A..B (0-based, inclusive; also A- or A); files keep their timeline index") { o, v in
            o.frames = try frameRange(v)
        },
        OptionSpec(names: ["--overlay"], value: nil, help: "draw the control layer (sketch edges, corners, Bezier boundary, center) over the frames") { o, _ in o.overlay = true },
        .backend,
        OptionSpec(names: ["--check"], value: nil, help: "run the script on the virtual clock and report errors; render and write nothing") { o, _ in o.check = true },
        .seed,
        .timeout,
        OptionSpec(names: ["--max-frames"], value: "N", help: "refuse to write more than N frames, before writing any (default 100000); with --frames it counts the frames selected") { o, v in
            o.maxFrames = try integer(v, "--max-frames", min: 1, max: Limits.maxFrameIndex)
        },
        .allowIO,
        OptionSpec(names: ["--loop"], value: "N", help: "GIF, WebP and APNG looping: 0 forever (default), -1 play once, N repeat N times") { o, v in
            o.loop = try integer(v, "--loop", min: -1, max: 65535)
            o.loopGiven = true
        },
        OptionSpec(names: ["--watch"], value: nil, help: "render, then render again whenever the scene, a module it requires or its image changes (Ctrl-C ends)") { o, _ in o.watch = true },
        OptionSpec(names: ["--assemble"], value: "DIR", help: "no scene: assemble the PNG frames in DIR (frame_NNNNN.png, e.g. from --frames slices) into -o (GIF or video), with their sound (sound_NNNNN.wav) in a video") { o, v in o.render.assemble = v },
        OptionSpec(names: ["--json"], value: nil, help: "print one JSON object on stdout at the end (on stderr, as its last line, with -o -): frames, fps, duration, width, height, output, bytes, still, warnings, and error on failure") { o, _ in o.json = true },
        OptionSpec(names: ["--quality"], value: "Q", help: "1..100: GIF palette size and how far a changed pixel may stay as it was; WebP: lossy quality, lossless at 100; video: the CRF. Default: 255 colours (as 75), WebP 82, CRF 18") { o, v in
            o.quality = try integer(v, "--quality", min: 1, max: 100)
        },
        OptionSpec(names: ["--matte"], value: "COLOR", help: "GIF: blend partly transparent pixels onto COLOR (#rrggbb, #rgb, white, black, …), as a page's background would show them, instead of making pixels under 50% alpha transparent") { o, v in
            o.matte = try CommandFiles.matte(v)
        },
        OptionSpec(names: ["--preset"], value: Preset.names, help: "fit a platform's sticker or emoji rules: format, size, fps, then the quality searched so the file fits the byte limit (see docs/CLI.md, Where clips go)") { o, v in
            o.preset = try Preset.named(v)
        },
        OptionSpec(names: ["-q", "--quiet"], value: nil, help: "no progress output") { o, _ in o.quiet = true },
        OptionSpec(names: ["-v", "--verbose"], value: nil, help: "print details: EGL platform and GL renderer, timings") { o, _ in o.verbose = true },
        .help,
        OptionSpec(names: ["--version"], value: nil, help: "show the version") { o, _ in o.version = true },
    ]

    package static func parse(_ args: [String]) throws -> RenderCommand {
        var o = RenderCommand()
        try OptionParser.parse(args, specs: specs, into: &o, helpHint: "--help") { o, a in
            if let scene = o.scene { throw UsageError("more than one scene given ('\(scene)', '\(a)'); script arguments go after --") }
            o.scene = a
        } rest: { o, words in
            o.scriptArguments = words
        }
        if o.help || o.version { return o }
        if o.render.assemble != nil {
            if o.scene != nil { throw UsageError("--assemble takes no scene") }
            return o
        }
        guard o.scene != nil else { throw UsageError("no scene given; usage: wobble-run SCENE.lua [options] [-- args...]") }
        if o.check && o.watch { throw UsageError("--check and --watch do not go together") }
        return o
    }

    /// The render's row of the table (no word: `wobble-run SCENE.lua`).
    package static let subcommand = Subcommand(
        name: "",
        synopsis: ["SCENE.lua [options] [-- script args...]", "--assemble DIR -o out.gif [options]"],
        summary: "render a scene",
        about: """
        A Lua scene script marks soft regions on an image and choreographs
        touches and shakes over virtual time; the frames are written as an
        animated GIF, PNG files or a video.

        """,
        options: specs.map(OptionRow.init),
        footer: """
        exit status: 0 success, 1 the scene failed, 2 bad usage, 128+N on signal N.
        examples:
          wobble-run pudding.lua -o pudding.gif
          wobble-run pudding.lua --image cat.png --width 320 -o frames/
          wobble-run pudding.lua --frames 0-29 -o slice/ && wobble-run --assemble slice -o out.gif

        """,
        operands: .scene,
        run: { RenderCommand.main($0) })

    static func number(_ v: String, _ name: String, min: Double, exclusiveMin: Bool = false, max: Double) throws -> Double {
        try OptionParser.number(v, name, min: min, exclusiveMin: exclusiveMin, max: max)
    }

    static func integer(_ v: String, _ name: String, min: Int, max: Int) throws -> Int {
        try OptionParser.integer(v, name, min: min, max: max)
    }

    /// `A-B`, `A` (one frame) or `A-` (to the end).
    static func frameRange(_ v: String) throws -> ClosedRange<Int> {
        try OptionParser.frameRange(v, "--frames")
    }

    /// `wobble-run SCENE.lua [options]` (and `--assemble`, `--check`,
    /// `--watch`, `--help`, `--version`): the exit status.
    static func main(_ args: [String]) -> Int32 {
        // A usage error is reported as JSON too when --json was asked for.
        let report = RunReport(json: args.prefix { $0 != "--" }.contains("--json"))
        // With the frames on stdout the object goes to stderr, usage errors too.
        report.toStderr = namesStdoutOutput(args.prefix { $0 != "--" })
        do {
            let command = try parse(args)
            if command.help {
                print(Commands.renderHelpText, terminator: "")
                return 0
            }
            if command.version {
                print(version)
                return 0
            }
            Interrupt.install()
            // --timeout also bounds waiting for a child's answer (ffmpeg's probe).
            ChildProcess.answerLimit = command.timeout
            if command.watch { return WatchLoop.run(command) }
            _ = try command.runOnce(report: report)
            return 0
        } catch {
            return Failure.report(error, report: report)
        }
    }

    /// Whether the arguments send the output to stdout (`-o -`, `--output=-`,
    /// `-o /dev/stdout`, …).
    static func namesStdoutOutput<C: Collection>(_ args: C) -> Bool where C.Element == String {
        var previous = ""
        for a in args {
            var value: String?
            if previous == "-o" || previous == "--output" { value = a }
            if a.hasPrefix("--output=") { value = String(a.dropFirst(9)) }
            if let value, OutputPlan(format: .gif, path: value).isStdout { return true }
            previous = a
        }
        return false
    }

    /// Runs one render (or `--check`, or `--assemble`) through the engine's
    /// one entry; throws the run's error. Prints the `--check` line and the
    /// JSON object on success.
    func runOnce(report: RunReport) throws -> RenderEntry.Result {
        var options = render
        // Signals stop the run; a read or a library call past --timeout ends the process.
        options.control = Interrupt.control
        let result = try RenderEntry.run(options, report: report)
        if options.check && !options.quiet { printError(result.okLine) }
        try report.printJSON()
        return result
    }

    /// `runOnce` for `--watch`, which goes on after a failure: the exit
    /// status and the files the run read besides the scene (also when it
    /// failed: the report has them).
    func runReporting() -> (status: Int32, inputs: [String]) {
        let report = RunReport(json: json)
        let status: Int32
        do {
            _ = try runOnce(report: report)
            status = 0
        } catch {
            status = Failure.report(error, report: report)
        }
        return (status, report.inputs.filter { $0 != render.scene })
    }
}
