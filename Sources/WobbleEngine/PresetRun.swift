
import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// `--preset NAME`: a render that fits a platform's rules the first time.
///
/// 1. The script runs on the virtual clock (as `--check`) to learn the
///    clip's length; a clip the platform cannot take (too long, too few or
///    too many frames) is an error naming the limit and the fix, and
///    nothing is written.
/// 2. The frame rate is capped (and for LINE chosen so the clip has 5 to
///    20 frames); where the frames would play longer than the platform's
///    limit as a player plays them (every frame shows its delay, the last
///    one too: 2 frames at 0.4 fps play 5 s), it is raised until they fit,
///    with a warning saying so. The plays follow `--loop` where the
///    platform allows it (else a usage error), or as many as fit.
/// 3. The picture is scaled to the platform's box, and the frames are
///    rendered once into memory (`FrameCollector`: each kept only where it
///    changed), centred on a transparent canvas where the platform asks
///    for a square.
/// 4. A video (Telegram's VP9) is encoded in two passes (`twoPass`: pass
///    2 at the limit's bitrate, its quality capped at 95), the quality
///    search only where that fails. For each other format the platform
///    takes (Discord: APNG and GIF) the quality is searched (`search`: each try a whole file encoded into
///    memory, through the output table: GIF's two at a time, WebP's one
///    at a time, its first predicted from a sample of the frames; the
///    quality predicted from the sizes of the first tries)
///    for the best that fits the byte limit; APNG is lossless, so there fewer colour
///    levels are tried (4 bits a channel first, alone: where it does not
///    fit, nothing does; then the level its size predicts, then the level
///    the two sizes predict: `ColourBits`). With two formats, the one whose frames are
///    closest to the rendered ones (PSNR, the GIF decoded back) wins.
///    Where even the lowest does not fit and the platform allows it, half
///    the frame rate is tried (fewer frames), twice at most.
/// 5. The chosen file is written to the output atomically; `--json` says
///    what was chosen (`preset`) and describes the file written.
package struct PresetRun {
    package let options: RenderOptions
    package let preset: Preset

    package init(options: RenderOptions, preset: Preset) {
        self.options = options
        self.preset = preset
    }

    /// The lowest quality tried (below it WebP and VP9 fall apart).
    package static let lowestQuality = 5

    package func run(report: RunReport) throws -> Runner.Summary {
        let o = options, p = preset
        if o.width != nil || o.height != nil {
            throw UsageError("--preset \(p.name) sets the size (\(p.describeFit)); drop --width/--height")
        }
        if o.quality != nil { throw UsageError("--preset \(p.name) searches the quality that fits \(Self.kb(p.byteLimit)); drop --quality") }
        let formats = try candidateFormats()
        try checkLoopOption()
        guard let scene = o.scene else { throw UsageError("--preset needs a scene") }
        let sceneBase = ScenePaths.baseName(scene) + "-\(p.name)"
        var base = o
        base.format = formats[0]
        base.output = o.output ?? o.placed(sceneBase + Preset.fileExtension(formats[0]))
        base.outputMadeUp = o.output == nil || o.outputMadeUp

        // 1. The clip's length, as --check finds it.
        var look = base
        look.check = true
        look.quiet = true
        var lookRunner = Runner(options: look)
        lookRunner.announces = false
        let first = try lookRunner.run(report: RunReport(json: false))
        let clipFPS = first.clip.fps
        report.frames = first.frames
        report.fps = clipFPS
        // The frames' play time (of the --frames part where one is asked for), as a plain run says.
        report.duration = first.clip.length(frames: first.frames)
        // The part of the clip that goes out: all of it, or --frames A-B as
        // a time window (kept when the frame rate changes).
        var window = Window(start: 0, end: first.clip.duration, clipEnd: first.clip.duration)
        if let r = o.frames {
            window.start = Double(r.lowerBound) / clipFPS
            window.end = min(first.clip.duration, Double(r.lowerBound + first.frames) / clipFPS)
        }
        // 2. The frame rate and the plays.
        let fps = try chooseFPS(requested: o.fps ?? clipFPS, window: window, frames: first.frames, formats: formats)
        let fitted = try fitPlayback(fps, window: window, formats: formats)
        if let w = fitted.warning { report.warn(w) }
        let (picture, canvas) = p.size(sourceWidth: first.width, sourceHeight: first.height)

        var chosen = base
        chosen.fps = fitted.fps
        chosen.width = picture.0
        chosen.height = picture.1
        chosen.loop = fitted.loop
        chosen.quiet = true
        if o.frames != nil { chosen.frames = window.selection(fps: fitted.fps) }
        var choice = Choice(preset: p, format: formats[0], fps: fitted.fps, canvas: canvas, picture: picture, loop: fitted.loop)
        if o.check {
            choice.frames = window.count(fps: fitted.fps)
            var runner = Runner(options: chosen)
            runner.announces = false
            var s = try runner.run(report: report)
            report.duration = Preset.played(frames: choice.frames, fps: fitted.fps, format: formats[0])
            // The file's size, as a render writes it (the picture on its canvas).
            (s.width, s.height) = canvas
            (report.width, report.height) = canvas
            report.preset = choice.json
            return s
        }

        // 3–4. Render, search; fewer frames where the quality alone is not enough.
        var rate = fitted.fps, loop = fitted.loop
        var summary: Runner.Summary?
        var best: Candidate?
        var compared: [Candidate] = []
        var smallest = Int.max
        for attempt in 0..<3 {
            if attempt > 0 {
                let lower = rate / 2
                // Fewer frames only where the platform allows them.
                if let r = p.frames, window.count(fps: lower) < r.lowerBound { break }
                if lower < 1 { break }
                let refit = try fitPlayback(lower, window: window, formats: formats)
                // Said: a pipeline would otherwise find half the frames it asked for.
                report.warn("\(p.name): no file fits the \(Self.kb(p.byteLimit)) at \(NumberText.rate(rate)) fps (the smallest \(Self.kb(smallest))): trying \(NumberText.rate(refit.fps)) fps, fewer frames")
                if let w = refit.warning { report.warn(w) }
                (rate, loop) = (refit.fps, refit.loop)
                chosen.fps = rate
                chosen.loop = loop
                if o.frames != nil { chosen.frames = window.selection(fps: rate) }
            }
            // Packed where the search's peak is this process's (WebP, APNG,
            // GIF); a video's peak is ffmpeg's own, so its frames are kept
            // as they are (unpacking them for each try costs time).
            // The changed pixels are counted for WebP's sample only.
            let collector = FrameCollector(canvas: canvas, packs: formats.contains { $0.video == nil },
                                           countsChanges: formats.contains(.webp))
            var runner = Runner(options: chosen)
            runner.announces = false
            runner.makeSink = { f, still in try collector.start(f, still: still) }
            runner.soundless = "\(p.what) (--preset \(p.name))"
            let rendering = Self.Stage()
            summary = try runner.run(report: report)
            // The file's size is the canvas's (the picture on it), also in a
            // report of a search that finds no file.
            (report.width, report.height) = canvas
            rendering.trace("render \(collector.count) frames at \(NumberText.rate(rate)) fps")
            choice.fps = rate
            choice.loop = loop
            choice.frames = collector.count
            compared = []
            for format in formats {
                // A video: two passes, and the quality search only where they fail.
                var found = try twoPass(collector, format: format, fps: rate, loop: loop, seamless: first.clip.loop != nil,
                                        smallest: &smallest)
                if found == nil { found = try search(collector, format: format, fps: rate, loop: loop, smallest: &smallest) }
                guard var c = found else { continue }
                if formats.count > 1 {
                    let measuring = Self.Stage()
                    c.psnr = try fidelity(of: c, to: collector)
                    measuring.trace("PSNR of \(c.format.rawValue) \(c.level)")
                }
                compared.append(c)
                // A lossless file cannot be beaten.
                if c.psnr == nil || c.psnr! >= Fidelity.exact { break }
            }
            best = compared.max { ($0.psnr ?? 0) < ($1.psnr ?? 0) }
            if best != nil { break }
        }
        guard let best, var s = summary else {
            throw RunError("\(p.name): even at the lowest quality and \(NumberText.rate(rate)) fps the file is \(Self.kb(smallest)), more than the \(Self.kb(p.byteLimit)) \(p.what) may have; make the clip shorter or its moving regions smaller (nothing written)")
        }

        // 5. The chosen file into place (named for its format when -o is not given).
        let path = o.output ?? o.placed(sceneBase + Preset.fileExtension(best.format))
        let bytes = best.data
        try AtomicFile.write(bytes, to: path, name: o.output == nil || o.outputMadeUp ? .madeUp : .given)
        choice.format = best.format
        choice.level = best.level
        choice.bitrate = best.bitrate
        choice.passes = best.passes
        choice.bytes = bytes.count
        choice.psnr = best.psnr
        if compared.count > 1 { choice.compared = compared }
        report.output = path
        report.bytes = bytes.count
        report.width = canvas.0
        report.height = canvas.1
        report.fps = rate
        report.frames = choice.frames
        // One play of the file, as a player plays it.
        report.duration = Preset.played(frames: choice.frames, fps: rate, format: best.format)
        report.preset = choice.json
        s.output = path
        s.width = canvas.0
        s.height = canvas.1
        // What it chose, as a plain render's summary: on a terminal or with -v.
        if !o.quiet && (o.verbose || Posix.isTerminal(2)) {
            printError("wrote \(path): \(p.what), \(best.format.rawValue.uppercased()), \(choice.frames) frame\(choice.frames == 1 ? "" : "s") at \(NumberText.rate(rate)) fps, \(canvas.0)×\(canvas.1), \(choice.levelText), \(Self.kb(bytes.count)) of \(Self.kb(p.byteLimit))")
        }
        return s
    }

    /// The formats to try: the platform's, narrowed by `--format` or by
    /// what `-o` says (`-o x.gif` with Discord: GIF only). A format the
    /// platform does not take is a usage error.
    package func candidateFormats() throws -> [OutputFormat] {
        let p = preset
        var allowed = p.formats
        if let f = options.format {
            guard allowed.contains(f) else {
                throw UsageError("--preset \(p.name) writes \(Preset.spelled(p.formats)); drop --format \(f.rawValue)")
            }
            allowed = [f]
        }
        guard let out = options.output, out != "-", !OutputTarget.namesStdout(out) else { return allowed }
        // A name that says no format (`x.jpg`, `x`) takes `--format`'s, as a plain render does.
        let plan = OutputPlan.pathFormat(out)
        if plan == nil, options.format != nil { return allowed }
        // `x.png` is a sticker's usual name for an APNG.
        var says: OutputFormat? = plan?.format
        if let plan, plan.format == .png { if case .file? = plan.png { says = .apng } else { says = nil } }
        guard let says, allowed.contains(says) else {
            let name = Preset.spelled(allowed)
            throw UsageError("--preset \(p.name) writes \(name); the output '\(PathBytes.display(out, controls: true))' is not \(allowed.count > 1 ? "one" : "a file of that kind"): name it \(allowed.map { "x" + Preset.fileExtension($0) }.joined(separator: " or "))")
        }
        return [says]
    }

    /// `--loop` where the platform cannot honour it whatever the clip: a
    /// usage error.
    package func checkLoopOption() throws {
        let o = options, p = preset
        guard o.loopGiven else { return }
        switch p.plays {
        case .any: return
        case .forever where o.loop != 0:
            throw UsageError("--preset \(p.name): \(p.what) always loop (the player repeats them; the file has no loop count); drop --loop \(o.loop)")
        case .within(let range, _) where !range.contains(AnimationTiming.plays(loop: o.loop)):
            let plays = AnimationTiming.plays(loop: o.loop)
            let asked = plays == 0 ? "forever" : "\(plays) times"
            throw UsageError("--preset \(p.name): \(p.what) play \(range.lowerBound) to \(range.upperBound) times; --loop \(o.loop) plays \(asked): use --loop -1 (once) to --loop \(range.upperBound - 1)")
        default: return
        }
    }

    /// The frame rate: the requested one capped at the platform's, and for
    /// a frame-count rule the one that brings the clip within it.
    package func chooseFPS(requested: Double, window: Window, frames: Int, formats: [OutputFormat]) throws -> Double {
        let p = preset
        let duration = window.end - window.start
        if let limit = p.maxDuration, duration > limit + 1e-9 {
            throw RunError(tooLong(limit: limit, requested: requested, window: window))
        }
        var fps = min(requested, p.maxFPS(formats))
        guard let range = p.frames else { return fps }
        // A still clip has no frames to spread; a clip that lasts but has
        // one frame at this rate gets the rate the platform's count needs.
        if duration <= 1e-9 {
            throw RunError("\(p.name): \(p.what) have \(range.lowerBound) to \(range.upperBound) frames; this clip is one still frame: let the scene run (wait) for some time (nothing written)")
        }
        if window.count(fps: fps) > range.upperBound {
            fps = Double(range.upperBound) / duration
            while window.count(fps: fps) > range.upperBound { fps *= 0.999 }
        } else if window.count(fps: fps) < range.lowerBound {
            fps = Double(range.lowerBound) / duration
            while window.count(fps: fps) < range.lowerBound && fps <= Limits.maxFPS { fps *= 1.001 }
            guard fps <= Limits.maxFPS else {
                throw RunError("\(p.name): \(p.what) have at least \(range.lowerBound) frames; this clip lasts only \(NumberText.seconds(duration)) s: let the scene run longer (nothing written)")
            }
        }
        return fps
    }

    /// The error for a clip (or the `--frames` part) longer than the
    /// platform's `limit`: its play time, its frames at the requested
    /// rate, as `--json`'s `duration` says it, and the fix: the frames
    /// that fit from the same start (`--frames` counts frames at that
    /// rate), or, where one frame alone shows longer than the limit, a
    /// higher `--fps`.
    package func tooLong(limit: Double, requested: Double, window: Window) -> String {
        let p = preset
        let played = NumberText.seconds(Double(window.count(fps: requested)) / requested)
        let start = options.frames?.lowerBound ?? 0
        let fit = Int((limit * requested + 1e-9).rounded(.down))
        let higher = "pass a higher --fps (at \(NumberText.rate(requested)) fps one frame alone shows \(NumberText.seconds(1 / requested)) s)"
        let part = "--frames \(start)-\(start + fit - 1)"
        let head = "\(p.name): \(p.what) last at most \(NumberText.plain(limit)) s; "
        if let asked = options.frames {
            return head + "the part \(Runner.describe(frames: asked)) selects lasts \(played) s: \(fit > 0 ? "take a shorter part, such as " + part : higher) (nothing written)"
        }
        return head + "this clip lasts \(played) s: end the scene sooner, or \(fit > 0 ? "take a part with " + part : higher) (nothing written)"
    }

    /// The frame rate and `--loop` for frames at `fps`, counted as a player
    /// plays them (`Preset.played`): where one play would last longer than
    /// the platform allows (the last frame shows a whole 1/fps), the rate
    /// rises to `n / limit`, the same n frames in exactly the limit, with
    /// a warning; then the plays (`--loop`, or as many as fit).
    package func fitPlayback(_ fps: Double, window: Window, formats: [OutputFormat]) throws -> (fps: Double, loop: Int, warning: String?) {
        let p = preset
        var fps = fps, warning: String?
        let n = window.count(fps: fps)
        func played(_ f: Double) -> Double { formats.map { Preset.played(frames: n, fps: f, format: $0) }.max() ?? 0 }
        if let limit = p.maxDuration, played(fps) > limit + 1e-9 {
            let raised = Double(n) / limit
            guard raised <= p.maxFPS(formats), window.count(fps: raised) == n, played(raised) <= limit + 1e-9 else {
                throw RunError("\(p.name): at \(NumberText.rate(fps)) fps the clip's \(n) frames play \(NumberText.seconds(played(fps))) s (every frame shows 1/fps, the last one too), more than the \(NumberText.plain(limit)) s \(p.what) may last; pass a higher --fps (nothing written)")
            }
            warning = "\(p.name): at \(NumberText.rate(fps)) fps the clip's \(n) frames would play \(NumberText.seconds(played(fps))) s (every frame shows 1/fps, the last one too), more than the \(NumberText.plain(limit)) s \(p.what) may last: written at \(NumberText.rate(raised)) fps (\(n) frames, \(NumberText.seconds(played(raised))) s)"
            fps = raised
        }
        return (fps, try chooseLoop(played: played(fps)), warning)
    }

    /// `--loop` for a file whose one play lasts `played` seconds: the
    /// option where the platform allows it, else forever, or (LINE) as
    /// many plays as fit in its total.
    package func chooseLoop(played: Double) throws -> Int {
        let o = options, p = preset
        switch p.plays {
        case .any: return o.loop
        case .forever: return 0
        case .within(let range, let total):
            if o.loopGiven {
                let plays = AnimationTiming.plays(loop: o.loop)
                guard Double(plays) * played <= total + 1e-9 else {
                    let fit = Int(((total + 1e-9) / played).rounded(.down))
                    throw RunError("\(p.name): \(p.what) play at most \(NumberText.plain(total)) s in all; --loop \(o.loop) plays this \(NumberText.seconds(played)) s clip \(plays) times, \(NumberText.seconds(Double(plays) * played)) s: use --loop \(fit <= 1 ? "-1" : String(fit - 1)) or less (nothing written)")
                }
                return o.loop
            }
            let plays = max(range.lowerBound, min(range.upperBound, Int(((total + 1e-9) / max(played, 1e-9)).rounded(.down))))
            return plays == 1 ? -1 : plays - 1
        }
    }

    /// The part of the clip written, in seconds: frame k at k/fps is in
    /// it when `start <= k/fps < end` (and k/fps < the clip's end).
    package struct Window {
        package var start: Double
        package var end: Double
        package let clipEnd: Double

        /// The timeline frames in the window at `fps` (at least frame 0 of a still clip).
        package func selection(fps: Double) -> ClosedRange<Int> {
            let eps = 1e-9
            var a = max(0, Int(((start - eps) * fps).rounded(.up)))
            while a > 0 && Double(a - 1) / fps >= start - eps { a -= 1 }
            var b = Int(((min(end, clipEnd) - eps) * fps).rounded(.up))
            while Double(b) / fps >= min(end, clipEnd) - eps && b > a { b -= 1 }
            while Double(b + 1) / fps < min(end, clipEnd) - eps { b += 1 }
            return a...max(a, b)
        }

        package func count(fps: Double) -> Int { selection(fps: fps).count }
    }

    /// `WOBBLE_PRESET_TRACE=1`: each stage of a preset (the render, each
    /// round of tries: levels and bytes) on stderr with its wall and CPU
    /// seconds (the whole process's), for finding where a search's time goes.
    static let tracing = Environment.all["WOBBLE_PRESET_TRACE"] == "1"

    /// A stage's start, for `tracing`.
    struct Stage {
        let wall = monotonic(), cpu = processCPUTime()
        func trace(_ what: @autoclosure () -> String) {
            guard PresetRun.tracing else { return }
            printError("wobble-run: preset trace: \(what()): \(String(format: "%.3f", monotonic() - wall)) s wall, \(String(format: "%.3f", processCPUTime() - cpu)) s CPU")
        }
    }

    package static func kb(_ n: Int) -> String { n == Int.max ? "?" : "\(Int((Double(n) / 1024).rounded(.up))) KB" }

    /// What was chosen, for `--json`.
    package struct Choice {
        package let preset: Preset
        package var format: OutputFormat
        package var fps: Double
        package let canvas: (Int, Int)
        package let picture: (Int, Int)
        package var loop: Int
        package var frames = 0
        package var level: Int?
        /// A two-pass file: the bitrate asked (bits a second) and the second passes made.
        package var bitrate: Int?
        package var passes = 0
        package var bytes: Int?
        package var psnr: Double?
        package var compared: [Candidate] = []

        package init(preset: Preset, format: OutputFormat, fps: Double, canvas: (Int, Int), picture: (Int, Int), loop: Int) {
            self.preset = preset
            self.format = format
            self.fps = fps
            self.canvas = canvas
            self.picture = picture
            self.loop = loop
        }

        package var levelText: String {
            guard let level else { return "" }
            if let bitrate { return "two-pass at \(bitrate / 1000) kbit/s, quality at most \(level)" }
            return format == .apng ? (level == 8 ? "lossless" : "\(level) bits a channel") : "quality \(level)"
        }

        package var json: String {
            var f = [
                "\"name\":\(RunReport.quote(preset.name))", "\"format\":\(RunReport.quote(format.rawValue))",
                "\"width\":\(canvas.0)", "\"height\":\(canvas.1)",
                "\"picture\":[\(picture.0),\(picture.1)]",
                "\"fps\":\(NumberText.plain((fps * 1_000_000).rounded() / 1_000_000))", "\"frames\":\(frames)",
                "\"seconds\":\(NumberText.seconds(Preset.played(frames: frames, fps: fps, format: format)))",
                "\"plays\":\(AnimationTiming.plays(loop: loop))", "\"limit\":\(preset.byteLimit)",
            ]
            if let bitrate { f += ["\"rate_control\":\"two-pass\"", "\"bitrate\":\(bitrate)", "\"passes\":\(passes + 1)"] }
            if let level {
                f.append(format == .apng ? "\"colour_bits\":\(level)" : "\"quality\":\(level)")
            }
            if let bytes { f.append("\"bytes\":\(bytes)") }
            if let psnr { f.append("\"psnr\":\(NumberText.plain((psnr * 100).rounded() / 100))") }
            if !compared.isEmpty { f.append("\"compared\":[" + compared.map(\.json).joined(separator: ",") + "]") }
            return "{" + f.joined(separator: ",") + "}"
        }
    }
}

