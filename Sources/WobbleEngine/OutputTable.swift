import Foundation
import WobbleCore

import WobbleMedia
import WobbleSystem

/// Output formats: `--format` names them, a path's extension usually says
/// them. The one table of the tool (format ↔ extensions ↔ sink): render,
/// `--assemble` and `--check` all decide and build their output here.
package enum OutputFormat: String, CaseIterable, Sendable {
    case gif, png, apng, webp, null, mp4, webm, mov, mkv
    /// A web page that plays the scene live (`-o clip.html`), or a folder
    /// for a site (`--format web -o dir/`): `WebPage`, no frames rendered.
    case html, web

    /// The extensions (lower case, with the dot) that name this format.
    package var extensions: [String] {
        switch self {
        case .gif: [".gif"]
        case .png: [".png"]
        case .apng: [".apng"]
        case .webp: [".webp"]
        case .null: []
        case .mp4: [".mp4"]
        case .webm: [".webm"]
        case .mov: [".mov"]
        case .mkv: [".mkv"]
        case .html: [".html", ".htm"]
        case .web: []
        }
    }

    /// The web outputs, which hold the scene rather than its frames.
    package var isWebPage: Bool { self == .html || self == .web }

    /// The video container ffmpeg writes, for the video formats.
    package var video: VideoFormat? { VideoFormat(rawValue: rawValue) }

    /// The format whose extension ends `path`, or nil.
    package static func byExtension(_ path: String) -> OutputFormat? {
        let lower = path.lowercased()
        return allCases.first { f in f.extensions.contains { lower.hasSuffix($0) } }
    }

    /// Every output a path can name, for messages.
    package static let spelled = "x.gif, x.webp, x.apng, a folder/ or a pattern like out_%04d.png for PNG frames, x.mp4, x.webm, x.mov, x.mkv, x.html (a live web page), '-' (stdout), or --format"

    /// The names `--format` takes, for help text and completions.
    package static let names = allCases.map(\.rawValue).joined(separator: "|")
}

/// Where the frames go, decided from `-o`, `--format` and the script: one
/// format and, but for `null`, one path.
package struct OutputPlan: Equatable {
    package var format: OutputFormat
    /// The path as given (`-` for stdout); nil for `null`.
    package var path: String?
    /// For PNG frames: the folder, pattern or single file.
    package var png: PNGOutput?
    /// Who chose the path: the user (`-o`, `output()`), or the engine
    /// (`<scene>.gif`, `<scene>-telegram.webm`), whose name a link there
    /// never leads away from (`OutputName`).
    package var name: OutputName = .given

    package init(format: OutputFormat, path: String?, png: PNGOutput? = nil) {
        self.format = format
        self.path = path
        self.png = png
    }

    package static let null = OutputPlan(format: .null, path: nil, png: nil)

    /// True when the output is standard output (`-o -`, `/dev/stdout`, …):
    /// then `print()` goes to stderr.
    package var isStdout: Bool {
        guard let path else { return false }
        return path == "-" || OutputTarget.namesStdout(path)
    }

    /// Decides the plan for `path` (`-` is stdout) and `--format`; throws
    /// `UsageError` (exit 2) when they cannot be told or contradict.
    /// `follow: false` (a name the engine made up): the path's format is
    /// read from its name alone, not from where a link there leads.
    package static func decide(path: String, format: OutputFormat?, follow: Bool = true) throws -> OutputPlan {
        if format == .null { return .null }
        // `-`, `/dev/stdout` (and its other names): a GIF unless --format says otherwise.
        let stdout = follow && (path == "-" || OutputTarget.namesStdout(path))
        let own = stdout ? nil : pathFormat(path, follow: follow)
        guard let format else {
            if stdout { return OutputPlan(format: .gif, path: path) }
            guard let own else {
                throw UsageError("cannot tell the output format of '\(path)': use \(OutputFormat.spelled)")
            }
            return own
        }
        switch (format, own?.format) {
        case (.gif, nil), (.gif, .gif?): return OutputPlan(format: .gif, path: path)
        case (.png, nil):
            if stdout { throw UsageError("PNG frames cannot go to stdout ('-o -'); write them to a folder (frames/) or a pattern (out_%04d.png)") }
            return OutputPlan(format: .png, path: path, png: .directory(path))
        case (.png, .png?): return own!
        case (.apng, nil), (.apng, .apng?): return OutputPlan(format: .apng, path: path)
        // `--format apng` for a single `x.png`: one animated PNG.
        case (.apng, .png?) where own?.png.map({ if case .file = $0 { true } else { false } }) == true:
            return OutputPlan(format: .apng, path: path)
        case (.webp, nil), (.webp, .webp?): return OutputPlan(format: .webp, path: path)
        case (.html, _) where stdout, (.web, _) where stdout:
            throw UsageError("a web page cannot go to stdout ('-o -'); write x.html, or a folder with --format web")
        case (.html, nil), (.html, .html?): return OutputPlan(format: .html, path: path)
        // `--format web` for a folder (`dir/`, or one that exists).
        case (.web, .png?) where own?.png.map({ if case .directory = $0 { true } else { false } }) == true:
            return OutputPlan(format: .web, path: path)
        case (.web, nil): return OutputPlan(format: .web, path: path)
        case (let f, nil) where f.video != nil: return OutputPlan(format: f, path: path)
        case (let f, let o?) where f == o && f.video != nil: return OutputPlan(format: f, path: path)
        default:
            throw UsageError("--format \(format.rawValue) contradicts the output '\(path)'; drop one of them")
        }
    }

    /// The format a path says by itself: an existing folder, a path ending
    /// in `/`, a printf pattern or `x.png` → PNG frames; `x.gif`; a video
    /// extension; nil when it says nothing.
    package static func pathFormat(_ path: String, follow: Bool = true) -> OutputPlan? {
        if Posix.kind(path, follow: follow) == .directory { return OutputPlan(format: .png, path: path, png: .directory(path)) }
        if let f = OutputFormat.byExtension(path), [.gif, .apng, .webp, .html].contains(f) { return OutputPlan(format: f, path: path) }
        if let output = PNGOutput.parse(path, follow: follow) { return OutputPlan(format: .png, path: path, png: output) }
        if let f = OutputFormat.byExtension(path), f.video != nil { return OutputPlan(format: f, path: path) }
        return nil
    }

    /// What a sink needs to know of the frames.
    package struct Frames {
        package var width: Int
        package var height: Int
        package var fps: Double
        package var count: Int
        package var fullRender: Bool
        package var loop: Int
        package var quality: Int?
        /// The source has transparent pixels (a MOV is then ProRes 4444 with alpha).
        package var alpha = false
        /// `--matte`: GIF pixels that are partly transparent are blended onto it.
        package var matte: Matte? = nil
        /// The soundtrack, for the video formats (`soundtrack()`).
        package var audio: VideoSink.Audio? = nil
        /// One pass of a two-pass video encode (WebM/VP9; `quality` is then unused).
        package var twoPass: VideoSink.TwoPass? = nil
        /// The sound slice committed with PNG frames into a folder (`PNGSequenceSink`).
        package var soundSlice: (name: String, wav: [UInt8])? = nil
    }

    /// Checks that the output can hold the clip (a single PNG file holds
    /// one frame; `--matte` is for GIF): a `UsageError` (exit 2) when `-o` named it, a
    /// `RunError` when the script's `output(...)` did. A render and
    /// `--check` both call it first.
    package func checkFits(_ f: Frames, pathGiven: Bool) throws {
        if f.matte != nil, format != .gif, format != .null {
            let what: String
            switch format {
            case .webp: what = "WebP keeps the alpha channel"
            case .apng: what = "APNG keeps the alpha channel"
            case .png: what = "PNG keeps the alpha channel"
            case .webm: what = "WebM keeps the alpha channel"
            case .mov: what = "MOV keeps the alpha channel (ProRes 4444) or is composited over black (H.264)"
            default: what = "\(format.rawValue.uppercased()) is H.264, composited over black (no alpha channel)"
            }
            throw UsageError("--matte applies to GIF output; \(what)")
        }
        // WebP stores the number of plays (--loop + 1) in 16 bits.
        if format == .webp, f.loop > AnimationTiming.maxWebPLoop {
            throw UsageError("--loop \(f.loop): a WebP plays at most \(AnimationTiming.maxWebPLoop + 1) times (--loop \(AnimationTiming.maxWebPLoop)); use --loop 0 to loop forever")
        }
        guard format == .png, case .file? = png, f.count != 1 else { return }
        do {
            try png?.validate(frameCount: f.count)
        } catch let e as MediaError {
            if pathGiven { throw UsageError(e.message) }
            throw RunError(e.message)
        }
    }

    /// Checks the output exactly as `makeSink` would, creating nothing
    /// (`--check`): the same errors, the same exit codes.
    package func validate(_ f: Frames) throws {
        switch format {
        case .null, .web: return
        case .png:
            try png?.validate(frameCount: f.count)
        default:
            guard let path else { return }
            // A FIFO is not opened to be checked: closing it again would hand
            // its reader an end of file before the clip (and the open that
            // writes it would then wait for a reader that has gone).
            // (A name the engine made up is looked at, never opened: a FIFO
            // there is refused here as the render refuses it.)
            if name != .given || Posix.kind(path) != .fifo,
               case .stream(let fd) = try OutputTarget.resolve(path, what: "output '\(path)'", name: name) { Posix.closeQuietly(fd) }
            if format.video != nil, ChildProcess.findExecutable("ffmpeg") == nil {
                throw MediaError("video output needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg); write a .gif or PNG frames instead")
            }
        }
    }

    /// Builds the sink; nil for `null`. `still` makes the GIF's palette.
    /// The bytes go to `stream` where one is given (a preset's tries keep
    /// them in memory), else to the path (`ByteStreams.open`: a file
    /// replaced atomically, or a pipe); PNG frames (a folder) take no stream.
    package func makeSink(_ f: Frames, to stream: ByteStream? = nil, still: () throws -> RGBAImage) throws -> FrameSink? {
        guard let path else { return nil }
        /// The output, opened once the sink has checked its parameters.
        func open() throws -> ByteStream { try stream ?? ByteStreams.open(path, name: name) }
        switch format {
        case .null, .html, .web: return nil
        case .gif:
            if let matte = f.matte {
                return try MatteSink(matte: matte) { matted in
                    try GIFSink(stream: try open(), shown: path, width: f.width, height: f.height, fps: f.fps, loop: f.loop,
                                still: matted(try still()), quality: f.quality, frameCount: f.count)
                }
            }
            return try GIFSink(stream: try open(), shown: path, width: f.width, height: f.height, fps: f.fps, loop: f.loop,
                               still: try still(), quality: f.quality, frameCount: f.count)
        case .webp:
            return try WebPSink(stream: try open(), shown: path, width: f.width, height: f.height, fps: f.fps, loop: f.loop,
                                quality: f.quality)
        case .apng:
            return try APNGSink(stream: try open(), shown: path, width: f.width, height: f.height, fps: f.fps,
                                frameCount: f.count, loop: f.loop)
        case .png:
            guard let png else { return nil }
            if stream != nil { throw MediaError("output '\(path)': PNG frames are files in a folder, not one stream") }
            return try PNGSequenceSink(output: png, fullRender: f.fullRender, frameCount: f.count, fps: f.fps,
                                       soundSlice: f.soundSlice)
        case .mp4, .webm, .mov, .mkv:
            return try VideoSink(stream: try open(), shown: path, width: f.width, height: f.height, fps: f.fps,
                                 format: format.video, quality: f.quality, alpha: f.alpha, audio: f.audio,
                                 twoPass: f.twoPass)
        }
    }
}
