import WobbleCore
import WobbleEngine

/// The parsed command line of a render (`wobble-run SCENE.lua [options]`):
/// the engine's `RenderOptions` (reached as `o.output`, `o.fps`, …) and
/// what only the command line has (help, `--watch`, `--json`, …).
@dynamicMemberLookup
struct Options: SceneRunOptions {
    var render = RenderOptions()
    var json = false
    var watch = false
    var assemble: String?
    var help = false
    var version = false
    /// The `--max-frames` default.
    static let defaultMaxFrames = RenderOptions.defaultMaxFrames

    subscript<T>(dynamicMember path: WritableKeyPath<RenderOptions, T>) -> T {
        get { render[keyPath: path] }
        set { render[keyPath: path] = newValue }
    }

    // The rows shared with `edit` (`SceneRunOptions`).
    var image: String? { get { render.image } set { render.image = newValue } }
    var fps: Double? { get { render.fps } set { render.fps = newValue } }
    var seed: Int { get { render.seed } set { render.seed = newValue } }
    var timeout: Double? { get { render.timeout } set { render.timeout = newValue } }
    var backend: Backend { get { render.backend } set { render.backend = newValue } }
    var allowIO: Bool { get { render.allowIO } set { render.allowIO = newValue } }
}

enum CommandLine_ {
    static let version = "wobble-run 0.1.0"

    /// The render's option table (rows shared with `edit` are the
    /// `SceneRunOptions` rows: `.fps`, `.image`, …).
    static let specs: [OptionSpec<Options>] = [
        OptionSpec(names: ["-o", "--output"], value: "PATH",
                   help: "output: x.gif (animated GIF), x.webp (animated WebP), x.apng (animated PNG), a folder or a path ending in / (PNG frames frame_00000.png …), a pattern like out_%04d.png, x.mp4/x.webm/x.mov/x.mkv (video, needs ffmpeg; .webm keeps alpha, .mov of a transparent source is ProRes 4444 with alpha), - for stdout (a GIF, or what --format names). Default: the script's output(...), else <scene>.gif here") { o, v in o.output = v },
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
        OptionSpec(names: ["--assemble"], value: "DIR", help: "no scene: assemble the PNG frames in DIR (frame_NNNNN.png, e.g. from --frames slices) into -o (GIF or video), with their sound (sound_NNNNN.wav) in a video") { o, v in o.assemble = v },
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

    static func parse(_ args: [String]) throws -> Options {
        var o = Options()
        try OptionParser.parse(args, specs: specs, into: &o, helpHint: "--help") { o, a in
            if let scene = o.scene { throw UsageError("more than one scene given ('\(scene)', '\(a)'); script arguments go after --") }
            o.scene = a
        } rest: { o, words in
            o.scriptArguments = words
        }
        if o.help || o.version { return o }
        if o.assemble != nil {
            if o.scene != nil { throw UsageError("--assemble takes no scene") }
            return o
        }
        guard o.scene != nil else { throw UsageError("no scene given; usage: wobble-run SCENE.lua [options] [-- args...]") }
        if o.check && o.watch { throw UsageError("--check and --watch do not go together") }
        return o
    }

    static var helpText: String {
        var s = """
        wobble-run — turn a still image into a jelly animation.

        usage: wobble-run SCENE.lua [options] [-- script args...]
               wobble-run --assemble DIR -o out.gif [options]
               wobble-run edit SCENE.lua [options]   (a window: wobble-run edit --help)
               wobble-run new PHOTO [SCENE.lua]      (a starter scene for a photo)
               wobble-run cutout PHOTO --box X,Y,W,H [-o MASK.png]   (the mask cutout = "auto" finds)
               wobble-run serve SCENE.lua [--port N] [--host ADDRESS]   (the studio in a browser: wobble-run serve --help)
               wobble-run pack MANIFEST [--jobs N] [--slice I/N]   (many clips, one per row: wobble-run pack --help)

        A Lua scene script marks soft regions on an image and choreographs
        touches and shakes over virtual time; the frames are written as an
        animated GIF, PNG files or a video.

        options:

        """
        s += OptionParser.helpLines(specs)
        s += """

        exit status: 0 success, 1 the scene failed, 2 bad usage, 128+N on signal N.
        examples:
          wobble-run pudding.lua -o pudding.gif
          wobble-run pudding.lua --image cat.png --width 320 -o frames/
          wobble-run pudding.lua --frames 0-29 -o slice/ && wobble-run --assemble slice -o out.gif

        """
        return s
    }

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

}
