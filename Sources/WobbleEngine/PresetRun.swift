
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
///    memory, through the output table, two at a time; the quality
///    predicted from the sizes of the first tries) for the best
///    that fits the byte limit; APNG is lossless, so there fewer colour
///    levels are tried (8 and 7 bits a channel, then the level their sizes
///    predict: `ColourBits`). With two formats, the one whose frames are
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
            let collector = FrameCollector(canvas: canvas, packs: formats.contains { $0.video == nil })
            var runner = Runner(options: chosen)
            runner.announces = false
            runner.makeSink = { f, still in try collector.start(f, still: still) }
            runner.soundless = "\(p.what) (--preset \(p.name))"
            summary = try runner.run(report: report)
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
                if formats.count > 1 { c.psnr = try fidelity(of: c, to: collector) }
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

    /// A try: its format, size, level (quality, or APNG colour bits), its
    /// bytes where it fits (a try over the limit keeps only its size), and
    /// how close it is to the frames (PSNR, dB; measured only when formats
    /// are compared).
    package struct Candidate {
        package let format: OutputFormat
        package let bytes: Int
        package let level: Int
        package var data: [UInt8] = []
        package var psnr: Double?
        /// A two-pass file's bitrate asked (bits a second; `level` is then
        /// the quality cap) and its second passes.
        package var bitrate: Int?
        package var passes = 0

        package init(format: OutputFormat, bytes: Int, level: Int, data: [UInt8] = []) {
            self.format = format
            self.bytes = bytes
            self.level = level
            self.data = data
        }

        package var json: String {
            var f = ["\"format\":\(RunReport.quote(format.rawValue))"]
            if let bitrate { f += ["\"rate_control\":\"two-pass\"", "\"bitrate\":\(bitrate)"] }
            f += [format == .apng ? "\"colour_bits\":\(level)" : "\"quality\":\(level)", "\"bytes\":\(bytes)"]
            if let psnr { f.append("\"psnr\":\(NumberText.plain((psnr * 100).rounded() / 100))") }
            return "{" + f.joined(separator: ",") + "}"
        }
    }

    /// The best level of `format` (quality, or APNG colour bits) whose file
    /// fits, or nil. Tries run two at a time (each on a thread of its own,
    /// the frames shared, not copied; WebP's one after the other), in rounds:
    ///
    /// - APNG (lossless, fewer colour levels): 8 and 7 bits, then the
    ///   level their sizes predict (`ColourBits`); the most bits that fit.
    /// - A quality (WebP, video, GIF): bytes against quality are smooth,
    ///   close to exponential, so the search predicts instead of bisecting.
    ///   Round 1 tries the top (`QualityModel.top`, done when it fits) and a
    ///   second point below it; round 2 the quality that the line through
    ///   the logarithms of the nearest two sizes says fits at the limit,
    ///   beside a slightly lower one; round 3, only where neither fitted,
    ///   one correction from the sizes then known, beside the lowest quality.
    ///   The best that fitted wins; where the lowest does not fit, nothing does.
    package func search(_ frames: FrameCollector, format: OutputFormat, fps: Double, loop: Int,
                smallest: inout Int) throws -> Candidate? {
        let p = preset
        let apng = format == .apng
        let spec = OutputPlan.Frames(width: frames.canvas.0, height: frames.canvas.1, fps: fps,
                                     count: frames.count, fullRender: true, loop: loop,
                                     quality: nil, alpha: true, matte: options.matte)
        /// Each of `levels` encoded into memory at once; the files' sizes,
        /// and the bytes of those that fit.
        func encode(_ levels: [Int]) throws -> [Candidate] {
            let results = Mutex<[Result<Candidate, any Error>?]>(Array(repeating: nil, count: levels.count))
            // WebP's encoder holds several whole canvases (8.6 MB at 512×512)
            // and already codes on a second thread: its tries run one after
            // the other, which kept WhatsApp's peak at 1.48× a plain encode
            // instead of 1.71×.
            let together = format != .webp
            let one = { (i: Int) in
                let r = Result { try self.encode(frames, spec: spec, format: format, level: levels[i]) }
                results.withLock { $0[i] = r }
            }
            if together {
                Parallel.run(levels.count, one)
            } else {
                for i in levels.indices { one(i) }
            }
            let done = try results.withLock { try $0.map { try $0!.get() } }
            smallest = min(smallest, done.map(\.bytes).min() ?? Int.max)
            return done
        }
        if apng { return try ColourBits.search(limit: p.byteLimit, encode: encode) }
        return try QualityModel.search(limit: p.byteLimit, encode: encode)
    }

    /// One try: `frames` encoded into memory as `format` at `level`
    /// (quality, or APNG colour bits), or as one pass of a two-pass video.
    /// A try over the limit keeps only its size, not its bytes.
    package func encode(_ frames: FrameCollector, spec: OutputPlan.Frames, format: OutputFormat, level: Int,
                        twoPass: VideoSink.TwoPass? = nil) throws -> Candidate {
        let p = preset
        let apng = format == .apng
        // Named for messages (and a video's container) only: nothing is written there.
        let what = twoPass.map { "pass \($0.pass.rawValue) at \($0.bitrate / 1000) kbit/s" }
            ?? (apng ? "\(level) bits" : "quality \(level)")
        let name = "\(p.name) try at \(what)\(format.extensions.first ?? "")"
        let plan = OutputPlan(format: format, path: name)
        let memory = MemoryStream(shown: name, cap: p.byteLimit)
        var s = spec
        s.quality = apng ? nil : level
        s.twoPass = twoPass
        var replay = frames.replay()
        guard let sink = try plan.makeSink(s, to: memory, still: { frames.still ?? replay.frame(0).image }) else {
            throw RunError("\(p.name): no output")
        }
        replay = frames.replay()
        try streamFrames(0..<frames.count, into: sink, reporter: ProgressReporter(total: frames.count, quiet: true),
                         control: options.control) { k in
            let f = replay.frame(k)
            return (apng ? Posterize.apply(f.image, bits: level) : f.image, k, f.changed)
        }
        let bytes = sink.bytesWritten ?? Int.max
        return Candidate(format: format, bytes: bytes, level: level, data: memory.overflowed ? [] : memory.take())
    }

    /// How far above the limit's bitrate (limit × 8 / seconds) pass 2
    /// aims: libvpx's rate control undershoots the rate asked.
    package static let twoPassAim = 1.05
    /// The most second passes; then the quality is searched.
    package static let secondPasses = 3

    /// A video's file in two passes (`VideoSink.TwoPass`): pass 1's
    /// statistics, then pass 2 in constrained quality, the quality capped at
    /// the search's top (`QualityModel.top`: an easy clip stops there, under
    /// the limit) and the bitrate that fills the limit (`twoPassAim`), so a
    /// hard clip is held to it. Where the file is over the limit, pass 2
    /// again at the bitrate scaled by limit / size × 0.95 (the statistics
    /// serve again), `secondPasses` in all. The statistics live in a
    /// private folder (`ScratchFolder`), removed on every way out. Nil
    /// where the quality must be searched instead: no VP9 encoder, no
    /// folder for the statistics (said with `-v`), or still over the limit.
    /// `seamless`: the clip is one period of a loop (`VideoSink.TwoPass.seamless`).
    package func twoPass(_ frames: FrameCollector, format: OutputFormat, fps: Double, loop: Int, seamless: Bool = false,
                         smallest: inout Int) throws -> Candidate? {
        let p = preset, o = options
        func note(_ line: String) { if o.verbose && !o.quiet { printError("wobble-run: \(p.name): \(line)") } }
        guard format.video == .webm, frames.count > 0 else { return nil }
        // A platform's WebM is VP9 (Telegram refuses VP8, which an ffmpeg
        // without libvpx-vp9 would write); where ffmpeg cannot tell, the
        // search's sink says why.
        switch VideoSink.hasVP9() {
        case false?:
            throw RunError("\(p.name): \(p.what) take VP9 only, and the installed ffmpeg has no VP9 encoder (libvpx-vp9): install an ffmpeg built with libvpx")
        case nil:
            return nil
        case true?:
            break
        }
        let folder: ScratchFolder
        do {
            // (The statistics: a few hundred bytes a frame.)
            folder = try ScratchFolder(room: 1 << 20)
        } catch let e as MediaError {
            note("no two-pass encode (\(e.message)): the quality is searched instead")
            return nil
        }
        defer { folder.remove() }
        let spec = OutputPlan.Frames(width: frames.canvas.0, height: frames.canvas.1, fps: fps,
                                     count: frames.count, fullRender: true, loop: loop,
                                     quality: nil, alpha: true, matte: options.matte)
        let seconds = max(Preset.played(frames: frames.count, fps: fps, format: format), 1e-3)
        let top = QualityModel.top
        var bitrate = max(1000, Int((Double(p.byteLimit) * 8 / seconds * Self.twoPassAim).rounded(.down)))
        let statistics = folder.path + "/pass", statisticsFile = VideoSink.TwoPass.statisticsFile("pass")
        func pass(_ n: VideoSink.TwoPass.Pass) throws -> Candidate {
            try encode(frames, spec: spec, format: format, level: top,
                       twoPass: VideoSink.TwoPass(pass: n, statistics: statistics, bitrate: bitrate, quality: top,
                                                  seamless: seamless))
        }
        _ = try pass(.first)
        // ffmpeg ends pass 1 with success even where TMPDIR filled up under
        // it and its statistics are empty: pass 2 could not use them.
        guard let written = folder.size(of: statisticsFile), written > 0 else {
            let state = folder.size(of: statisticsFile) == nil ? "missing" : "empty"
            note("no two-pass encode (pass 1's statistics in \(PathBytes.display(folder.path)) are \(state); is TMPDIR full?): the quality is searched instead")
            return nil
        }
        for n in 1...Self.secondPasses {
            var c = try pass(.second)
            smallest = min(smallest, c.bytes)
            if c.bytes <= p.byteLimit {
                c.bitrate = bitrate
                c.passes = n
                return c
            }
            let next = max(1000, Int((Double(bitrate) * Double(p.byteLimit) / Double(c.bytes) * 0.95).rounded(.down)))
            note("pass 2 at \(bitrate / 1000) kbit/s made \(Self.kb(c.bytes)), over \(Self.kb(p.byteLimit))"
                 + (n < Self.secondPasses ? "; again at \(next / 1000) kbit/s" : ": the quality is searched instead"))
            bitrate = next
        }
        return nil
    }

    /// The search's picture of bytes against quality: the qualities tried,
    /// their files, and the next quality to try.
    package struct QualityModel {
        /// The first try (done when it fits) and the point tried beside it.
        package static let top = 95, second = 80
        package let limit: Int
        package private(set) var tried: [Candidate] = []

        package init(limit: Int) { self.limit = limit }

        package mutating func add(_ cs: [Candidate]) { tried += cs }

        /// The rounds of `search` for a quality: `encode` makes the files of
        /// the qualities it is given; the best that fits, or nil.
        package static func search(limit: Int, encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var model = QualityModel(limit: limit)
            let first = try encode([top, second])
            model.add(first)
            if first[0].bytes <= limit { return first[0] }
            let predicted = model.predict()
            var round = [predicted]
            if let below = model.hedge(below: predicted) { round.append(below) }
            model.add(try encode(round))
            if let best = model.best { return best }
            // One correction, beside the lowest: where even it does not fit, nothing does.
            let corrected = model.predict()
            let lowest = PresetRun.lowestQuality
            model.add(try encode(corrected > lowest ? [corrected, lowest] : [lowest]))
            return model.best
        }

        /// The highest quality tried that fits.
        package var best: Candidate? { tried.filter { $0.bytes <= limit }.max { $0.level < $1.level } }
        /// The highest quality known to fit, and the lowest known not to.
        private var fitting: Int { best?.level ?? (lowestQuality - 1) }
        private var failing: Int { tried.filter { $0.bytes > limit }.map(\.level).min() ?? (Self.top + 1) }
        private var lowestQuality: Int { PresetRun.lowestQuality }

        /// The quality the line through the logarithms of the two sizes
        /// nearest the limit (one on each side where there are both) says
        /// fits at the limit, strictly between the best fitting and the
        /// lowest failing quality; their middle where the sizes do not fall
        /// with the quality.
        package func predict() -> Int {
            let lo = fitting, hi = failing
            guard hi - lo > 1 else { return max(lowestQuality, lo) }
            let byLevel = Dictionary(tried.map { ($0.level, $0.bytes) }, uniquingKeysWith: { a, _ in a })
            let points = byLevel.sorted { $0.key < $1.key }
            let below = points.filter { $0.value <= limit }.last
            let above = points.filter { $0.value > limit }.first
            let pair: [(key: Int, value: Int)]
            if let below, let above {
                pair = [below, above]
            } else {
                // All on one side: the two nearest the limit.
                pair = Array((below == nil ? points.prefix(2) : points.suffix(2)))
            }
            var q = (lo + hi) / 2
            if pair.count == 2, pair[1].value > pair[0].value, pair[1].key > pair[0].key, pair[0].value > 0 {
                let slope = (log(Double(pair[1].value)) - log(Double(pair[0].value))) / Double(pair[1].key - pair[0].key)
                let at = Double(pair[0].key) + (log(Double(limit)) - log(Double(pair[0].value))) / slope
                if at.isFinite { q = Int(at.rounded(.down)) }
            }
            return min(hi - 1, max(lo + 1, max(lowestQuality, q)))
        }

        /// A quality two below `q`, tried beside it in case the prediction
        /// is just over the limit; nil where none lies above the best
        /// fitting quality.
        package func hedge(below q: Int) -> Int? {
            let lower = q - 2
            return lower > fitting && lower >= lowestQuality ? lower : nil
        }
    }

    /// The search for an APNG's colour bits (8 lossless, down to 4): the
    /// most bits whose file fits. Round 1 tries 8 and 7 bits; a file's size
    /// falls smoothly with the bits, close to a constant ratio a bit, so
    /// each later round tries the level that the two sizes nearest the
    /// limit say fits, beside the level above it (a prediction a level too
    /// low), or the lowest unknown level alone where even that is predicted
    /// not to fit — until every level above the best that fitted is known
    /// not to fit. Where sizes fall with the bits this keeps what trying
    /// 8, 7, 6, 5, 4 in turn keeps, in fewer tries (Discord on the cat at
    /// 15 fps: 8, 7, then 5 and 4, instead of a round of 6 and 5 between).
    package enum ColourBits {
        package static let top = 8, lowest = 4

        package static func search(limit: Int, encode: ([Int]) throws -> [Candidate]) throws -> Candidate? {
            var tried: [Int: Candidate] = [:]
            for c in try encode([top, top - 1]) { tried[c.level] = c }
            while true {
                let fitting = tried.values.filter { $0.bytes <= limit }.max { $0.level < $1.level }
                let failing = tried.values.filter { $0.bytes > limit }.map(\.level).min() ?? (top + 1)
                // The levels not known yet: above the best that fitted, below
                // the lowest that did not (none where sizes did not fall).
                let above = (fitting?.level ?? lowest - 1) + 1
                guard above < failing else { return fitting }
                let open = (above ..< failing).filter { tried[$0] == nil }
                guard let low = open.first, let high = open.last else { return fitting }
                let p = predict(tried.values.map { ($0.level, $0.bytes) }, limit: limit)
                let round: [Int]
                if let p, p < low {
                    round = [low]
                } else {
                    let at = min(high, max(low, p ?? (low + high) / 2))
                    round = at + 1 <= high ? [at + 1, at] : (at - 1 >= low ? [at, at - 1] : [at])
                }
                for c in try encode(round) { tried[c.level] = c }
            }
        }

        /// The most bits that the sizes of `tried` (bits, bytes) say fit
        /// `limit`: the ratio a bit of the two sizes nearest the limit (the
        /// lowest levels tried over it, or the pair around it), carried on
        /// from the lower; nil where the sizes do not fall with the bits.
        static func predict(_ tried: [(Int, Int)], limit: Int) -> Int? {
            let points = tried.sorted { $0.0 < $1.0 }
            let over = points.filter { $0.1 > limit }, under = points.filter { $0.1 <= limit }
            let pair: [(Int, Int)]
            if let below = under.last, let above = over.first {
                pair = [below, above]
            } else if over.count >= 2 {
                pair = Array(over.prefix(2))
            } else {
                return nil
            }
            let (l0, b0) = pair[0], (l1, b1) = pair[1]
            guard l1 > l0, b1 > b0, b0 > 0 else { return nil }
            let perBit = (log(Double(b1)) - log(Double(b0))) / Double(l1 - l0)
            let at = Double(l0) + (log(Double(limit)) - log(Double(b0))) / perBit
            return at.isFinite ? Int(at.rounded(.down)) : nil
        }
    }

    /// How close `c`'s frames, as a player shows them, are to `frames`:
    /// APNG is lossless (its frames are the posterized ones), a GIF is
    /// decoded back (`GIFReader`).
    package func fidelity(of c: Candidate, to frames: FrameCollector) throws -> Double {
        var sum = Fidelity()
        var replay = frames.replay()
        switch c.format {
        case .apng:
            for k in 0..<frames.count {
                let f = replay.frame(k).image
                sum.add(Posterize.apply(f, bits: c.level), f)
            }
        case .gif:
            var k = 0
            try GIFReader.frames(bytes: c.data, shown: "the GIF try") { shown, _ in
                if k < frames.count { sum.add(shown, replay.frame(k).image) }
                k += 1
            }
        default:
            return 0
        }
        return sum.psnr
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

/// The PSNR of frames against the frames meant (dB over every channel of
/// every frame, colour premultiplied by alpha: a colour counts as much as
/// it shows; `exact` when they are equal).
package struct Fidelity {
    package static let exact = 99.0
    private var squared = 0.0
    private var values = 0

    package mutating func add(_ got: RGBAImage, _ meant: RGBAImage) {
        guard got.width == meant.width, got.height == meant.height else { values += 1; squared += 255 * 255; return }
        var se = 0.0
        got.pixels.withUnsafeBufferPointer { g in
            meant.pixels.withUnsafeBufferPointer { m in
                var i = 0
                while i < g.count {
                    let ga = Int(g[i + 3]), ma = Int(m[i + 3])
                    for c in 0..<3 {
                        let d = Double(Int(g[i + c]) * ga - Int(m[i + c]) * ma) / 255
                        se += d * d
                    }
                    let da = Double(ga - ma)
                    se += da * da
                    i += 4
                }
            }
        }
        squared += se
        values += got.pixels.count
    }

    package var psnr: Double {
        guard values > 0, squared > 0 else { return Self.exact }
        return min(Self.exact, 10 * log10(255 * 255 / (squared / Double(values))))
    }
}

/// Collects the rendered frames in memory, centred on a transparent canvas,
/// each kept once and only where it changed: the first frame (and any whose
/// changed boxes are not known) whole, each later one as the boxes where it
/// differs from the frame before (`FrameSink.write(_:index:changed:)`),
/// those pixels packed (`PackedPixels`, about half their size on photos).
/// A clip whose regions cover a fifth of the picture keeps about a fifth
/// of its frames' pixels, packed to about half that. `replay()` gives them back whole, with their boxes.
package final class FrameCollector {
    package let canvas: (Int, Int)
    /// One frame: whole, or the boxes (canvas pixels) and their pixels,
    /// packed (`PackedPixels`: about half their size on photos).
    private struct Kept {
        var whole: RGBAImage?
        var boxes: [(PixelRect, PackedPixels)]
    }
    private var kept: [Kept] = []
    private(set) var still: RGBAImage?

    /// Whether the changed pixels are packed (`PackedPixels`).
    package let packs: Bool

    package init(canvas: (Int, Int), packs: Bool = true) {
        self.canvas = canvas
        self.packs = packs
    }

    /// The frames collected.
    package var count: Int { kept.count }

    package func start(_ f: OutputPlan.Frames, still: () throws -> RGBAImage) throws -> FrameSink {
        self.still = pad(try still())
        return Sink(self)
    }

    /// Where a picture of `w × h` sits on the canvas.
    private func offset(_ w: Int, _ h: Int) -> (Int, Int) { ((canvas.0 - w) / 2, (canvas.1 - h) / 2) }

    package func pad(_ img: RGBAImage) -> RGBAImage {
        let (cw, ch) = canvas
        if img.width == cw && img.height == ch { return img }
        var px = [UInt8](repeating: 0, count: cw * ch * 4)
        let (ox, oy) = offset(img.width, img.height)
        for y in 0..<min(img.height, ch) {
            let s = y * img.width * 4, d = ((y + oy) * cw + ox) * 4
            px.replaceSubrange(d..<(d + min(img.width, cw) * 4), with: img.pixels[s..<(s + min(img.width, cw) * 4)])
        }
        return RGBAImage(width: cw, height: ch, pixels: px)
    }

    /// Keeps `frame`: whole where `changed` is nil or it is the first,
    /// else only the pixels inside `changed`.
    fileprivate func add(_ frame: RGBAImage, changed: [PixelRect]?) {
        guard let changed, !kept.isEmpty, frame.width <= canvas.0, frame.height <= canvas.1 else {
            kept.append(Kept(whole: pad(frame), boxes: []))
            return
        }
        let (ox, oy) = offset(frame.width, frame.height)
        var boxes: [(PixelRect, PackedPixels)] = []
        for r in changed {
            let x0 = max(0, r.x0), y0 = max(0, r.y0), x1 = min(frame.width, r.x1), y1 = min(frame.height, r.y1)
            guard x1 > x0, y1 > y0 else { continue }
            var px: [UInt8] = []
            px.reserveCapacity((x1 - x0) * (y1 - y0) * 4)
            for y in y0..<y1 { px += frame.pixels[((y * frame.width + x0) * 4)..<((y * frame.width + x1) * 4)] }
            boxes.append((PixelRect(x0: x0 + ox, y0: y0 + oy, x1: x1 + ox, y1: y1 + oy), PackedPixels(px, rowBytes: (x1 - x0) * 4, pack: packs)))
        }
        kept.append(Kept(whole: nil, boxes: boxes))
    }

    /// The frames whole again, in order (each replay its own running frame).
    package func replay() -> Replay { Replay(owner: self) }

    package struct Replay {
        fileprivate let owner: FrameCollector
        private var current: RGBAImage?
        private var next = 0

        fileprivate init(owner: FrameCollector) { self.owner = owner }

        /// Frame `k` (0, 1, 2, … in order) and the canvas boxes outside
        /// which it equals frame `k - 1` (nil: all).
        package mutating func frame(_ k: Int) -> (image: RGBAImage, changed: [PixelRect]?) {
            precondition(k == next, "frames are replayed in order")
            next = k + 1
            let kept = owner.kept[k]
            if let whole = kept.whole {
                current = whole
                return (whole, nil)
            }
            var img = current!
            let cw = img.width
            img.pixels.withUnsafeMutableBufferPointer { dst in
                for (r, packed) in kept.boxes {
                    let px = packed.unpack()
                    let row = (r.x1 - r.x0) * 4
                    px.withUnsafeBufferPointer { src in
                        for y in r.y0..<r.y1 {
                            let d = (y * cw + r.x0) * 4, s = (y - r.y0) * row
                            UnsafeMutableRawPointer(dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: row)
                        }
                    }
                }
            }
            current = img
            return (img, kept.boxes.map(\.0))
        }
    }

    private final class Sink: FrameSink {
        package let owner: FrameCollector
        package init(_ owner: FrameCollector) { self.owner = owner }
        package func write(_ frame: RGBAImage, index: Int) throws { owner.add(frame, changed: nil) }
        package func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws { owner.add(frame, changed: changed) }
        package func finish() throws {}
        package func abort() { owner.kept.removeAll() }
        package var bytesWritten: Int? { nil }
    }
}

/// Fewer colour levels for APNG (`bits` per channel, 8 = unchanged):
/// each value rounded to the nearest of 2^bits evenly spaced levels.
package enum Posterize {
    package static func apply(_ img: RGBAImage, bits: Int) -> RGBAImage {
        guard bits < 8 else { return img }
        let levels = Double((1 << bits) - 1)
        let table: [UInt8] = (0..<256).map { UInt8((Double($0) / 255 * levels).rounded() / levels * 255 + 0.5) }
        var px = img.pixels
        px.withUnsafeMutableBufferPointer { p in
            for i in 0..<p.count where i & 3 != 3 { p[i] = table[Int(p[i])] }
        }
        return RGBAImage(width: img.width, height: img.height, pixels: px)
    }
}
