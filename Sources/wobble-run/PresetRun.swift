import WobbleEngine
import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// `--preset NAME`: a render that fits a platform's rules the first time.
///
/// 1. The script runs on the virtual clock (as `--check`) to learn the
///    clip's length; a clip the platform cannot take (too long, too few or
///    too many frames) is an error naming the limit and the fix, and
///    nothing is written.
/// 2. The frame rate is capped (and for LINE chosen so the clip has 5 to
///    20 frames), the picture scaled to the platform's box, and the frames
///    are rendered once into memory, centred on a transparent canvas where
///    the platform asks for a square.
/// 3. The quality is bisected (each try a whole file in a private
///    temporary folder, through the output table) for the best that fits
///    the byte limit; APNG is lossless, so there fewer colour levels are
///    tried (8, 7, … 4 bits a channel). Where even the lowest does not
///    fit and the platform allows it, half the frame rate is tried (fewer
///    frames), twice at most.
/// 4. The chosen file is written to the output atomically; `--json` says
///    what was chosen (`preset`).
struct PresetRun {
    let options: Options
    let preset: Preset

    /// The lowest quality tried (below it WebP and VP9 fall apart).
    static let lowestQuality = 5

    func run(report: RunReport) throws -> Runner.Summary {
        let o = options, p = preset
        if o.width != nil || o.height != nil {
            throw UsageError("--preset \(p.name) sets the size (\(p.describeFit)); drop --width/--height")
        }
        if o.quality != nil { throw UsageError("--preset \(p.name) searches the quality that fits \(Self.kb(p.byteLimit)); drop --quality") }
        if let f = o.format, f != p.format {
            throw UsageError("--preset \(p.name) writes \(p.format.rawValue.uppercased()); drop --format \(f.rawValue)")
        }
        guard let scene = o.scene else { throw UsageError("--preset needs a scene") }
        var base = o
        base.format = p.format
        base.output = o.output ?? URL(fileURLWithPath: scene).deletingPathExtension().lastPathComponent + "-\(p.name)" + p.defaultExtension

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
        report.duration = first.clip.duration
        // The part of the clip that goes out: all of it, or --frames A-B as
        // a time window (kept when the frame rate changes).
        var window = Window(start: 0, end: first.clip.duration, clipEnd: first.clip.duration)
        if let r = o.frames {
            window.start = Double(r.lowerBound) / clipFPS
            window.end = min(first.clip.duration, Double(r.lowerBound + first.frames) / clipFPS)
        }
        let duration = window.end - window.start
        let fps = try chooseFPS(requested: o.fps ?? clipFPS, window: window, frames: first.frames)
        let loop = p.loop(duration: duration)
        let (picture, canvas) = p.size(sourceWidth: first.width, sourceHeight: first.height)

        var chosen = base
        chosen.fps = fps
        chosen.width = picture.0
        chosen.height = picture.1
        chosen.loop = loop
        chosen.quiet = true
        if o.frames != nil { chosen.frames = window.selection(fps: fps) }
        var choice = Choice(preset: p, fps: fps, canvas: canvas, picture: picture, loop: loop)
        if o.check {
            choice.frames = window.count(fps: fps)
            var runner = Runner(options: chosen)
            runner.announces = false
            let s = try runner.run(report: report)
            report.preset = choice.json
            return s
        }

        // 2–3. Render, search; fewer frames where the quality alone is not enough.
        let trials = try TrialFolder()
        defer { trials.remove() }
        var rate = fps
        var summary: Runner.Summary?
        var best: (bytes: Int, path: String, level: Int)?
        var smallest = Int.max
        for attempt in 0..<3 {
            if attempt > 0 {
                let lower = rate / 2
                // Fewer frames only where the platform allows them.
                if let r = p.frames, window.count(fps: lower) < r.lowerBound { break }
                if lower < 1 { break }
                rate = lower
                chosen.fps = rate
                if o.frames != nil { chosen.frames = window.selection(fps: rate) }
            }
            let collector = FrameCollector(canvas: canvas)
            var runner = Runner(options: chosen)
            runner.announces = false
            runner.makeSink = { f, still in try collector.start(f, still: still) }
            summary = try runner.run(report: report)
            let frames = collector.frames
            choice.fps = rate
            choice.frames = frames.count
            best = try search(frames, still: collector.still, fps: rate, loop: loop, in: trials, smallest: &smallest)
            if best != nil { break }
        }
        guard let best, var s = summary else {
            throw RunError("\(p.name): even at the lowest quality and \(NumberText.plain(rate)) fps the file is \(Self.kb(smallest)), more than the \(Self.kb(p.byteLimit)) \(p.what) may have; make the clip shorter or its moving regions smaller (nothing written)")
        }

        // 4. The chosen file into place.
        let path = base.output ?? ""
        let bytes = try ImageIO.readFile(path: best.path)
        try AtomicFile.write(bytes, to: path)
        choice.level = best.level
        choice.bytes = bytes.count
        report.output = path
        report.bytes = bytes.count
        report.width = canvas.0
        report.height = canvas.1
        report.fps = rate
        report.frames = choice.frames
        report.duration = window.end - window.start
        report.preset = choice.json
        s.output = path
        s.width = canvas.0
        s.height = canvas.1
        if !o.quiet {
            printError("wrote \(path): \(p.what), \(choice.frames) frames at \(NumberText.plain(rate)) fps, \(canvas.0)×\(canvas.1), \(choice.levelText), \(Self.kb(bytes.count)) of \(Self.kb(p.byteLimit))")
        }
        return s
    }

    /// The frame rate: the requested one capped at the platform's, and for
    /// a frame-count rule the one that brings the clip within it.
    func chooseFPS(requested: Double, window: Window, frames: Int) throws -> Double {
        let p = preset
        let duration = window.end - window.start
        if let limit = p.maxDuration, duration > limit + 1e-9 {
            // --frames counts frames at the clip's rate: offered where the preset keeps it.
            let part = ", or take a part with --frames 0-\(Int((limit * requested + 1e-9).rounded(.down)) - 1)"
            throw RunError("\(p.name): \(p.what) last at most \(NumberText.plain(limit)) s; this clip lasts \(NumberText.seconds(duration)) s: end the scene sooner\(part) (nothing written)")
        }
        var fps = min(requested, p.maxFPS)
        guard let range = p.frames else { return fps }
        if frames <= 1 || duration <= 1e-9 {
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

    /// The part of the clip written, in seconds: frame k at k/fps is in
    /// it when `start <= k/fps < end` (and k/fps < the clip's end).
    struct Window {
        var start: Double
        var end: Double
        let clipEnd: Double

        /// The timeline frames in the window at `fps` (at least frame 0 of a still clip).
        func selection(fps: Double) -> ClosedRange<Int> {
            let eps = 1e-9
            var a = max(0, Int(((start - eps) * fps).rounded(.up)))
            while a > 0 && Double(a - 1) / fps >= start - eps { a -= 1 }
            var b = Int(((min(end, clipEnd) - eps) * fps).rounded(.up))
            while Double(b) / fps >= min(end, clipEnd) - eps && b > a { b -= 1 }
            while Double(b + 1) / fps < min(end, clipEnd) - eps { b += 1 }
            return a...max(a, b)
        }

        func count(fps: Double) -> Int { selection(fps: fps).count }
    }

    /// The best level (quality, or APNG colour bits) whose file fits, or nil.
    func search(_ frames: [RGBAImage], still: RGBAImage?, fps: Double, loop: Int, in trials: TrialFolder,
                smallest: inout Int) throws -> (bytes: Int, path: String, level: Int)? {
        let p = preset
        func encode(_ level: Int) throws -> (Int, String) {
            let path = trials.next(p.format.extensions.first ?? "")
            let plan = try OutputPlan.decide(path: path, format: p.format)
            let apng = p.format == .apng
            let spec = OutputPlan.Frames(width: frames[0].width, height: frames[0].height, fps: fps,
                                         count: frames.count, fullRender: true, loop: loop,
                                         quality: apng ? nil : level, alpha: true, matte: options.matte)
            guard let sink = try plan.makeSink(spec, still: { still ?? frames[0] }) else { throw RunError("\(p.name): no output") }
            try streamFrames(Array(frames.enumerated()), into: sink, reporter: ProgressReporter(total: frames.count, quiet: true)) { k, f in
                (apng ? Posterize.apply(f, bits: level) : f, k)
            }
            let size = sink.bytesWritten ?? Int.max
            smallest = min(smallest, size)
            return (size, path)
        }
        if p.format == .apng {
            for bits in stride(from: 8, through: 4, by: -1) {
                let (size, path) = try encode(bits)
                if size <= p.byteLimit { return (size, path, bits) }
            }
            return nil
        }
        // Bisection on quality for the largest that fits.
        var lo = Self.lowestQuality, hi = 95
        var found: (Int, String, Int)?
        let (topSize, topPath) = try encode(hi)
        if topSize <= p.byteLimit { return (topSize, topPath, hi) }
        // The lowest next: when even it does not fit, no bisection.
        let (lowSize, lowPath) = try encode(lo)
        guard lowSize <= p.byteLimit else { return nil }
        found = (lowSize, lowPath, lo)
        while hi - lo > 2 {
            let mid = (lo + hi) / 2
            let (size, path) = try encode(mid)
            if size <= p.byteLimit { lo = mid; found = (size, path, mid) } else { hi = mid }
        }
        return found
    }

    static func kb(_ n: Int) -> String { n == Int.max ? "?" : "\(Int((Double(n) / 1024).rounded(.up))) KB" }

    /// What was chosen, for `--json`.
    struct Choice {
        let preset: Preset
        var fps: Double
        let canvas: (Int, Int)
        let picture: (Int, Int)
        let loop: Int
        var frames = 0
        var level: Int?
        var bytes: Int?

        var levelText: String {
            guard let level else { return "" }
            return preset.format == .apng ? (level == 8 ? "lossless" : "\(level) bits a channel") : "quality \(level)"
        }

        var json: String {
            var f = [
                "\"name\":\(RunReport.quote(preset.name))", "\"format\":\(RunReport.quote(preset.format.rawValue))",
                "\"width\":\(canvas.0)", "\"height\":\(canvas.1)",
                "\"picture\":[\(picture.0),\(picture.1)]",
                "\"fps\":\(NumberText.plain((fps * 1_000_000).rounded() / 1_000_000))", "\"frames\":\(frames)",
                "\"plays\":\(AnimationTiming.plays(loop: loop))", "\"limit\":\(preset.byteLimit)",
            ]
            if let level {
                f.append(preset.format == .apng ? "\"colour_bits\":\(level)" : "\"quality\":\(level)")
            }
            if let bytes { f.append("\"bytes\":\(bytes)") }
            return "{" + f.joined(separator: ",") + "}"
        }
    }
}

/// Collects the rendered frames in memory, centred on a transparent canvas.
final class FrameCollector {
    let canvas: (Int, Int)
    private(set) var frames: [RGBAImage] = []
    private(set) var still: RGBAImage?

    init(canvas: (Int, Int)) { self.canvas = canvas }

    func start(_ f: OutputPlan.Frames, still: () throws -> RGBAImage) throws -> FrameSink {
        self.still = pad(try still())
        return Sink(self)
    }

    func pad(_ img: RGBAImage) -> RGBAImage {
        let (cw, ch) = canvas
        if img.width == cw && img.height == ch { return img }
        var px = [UInt8](repeating: 0, count: cw * ch * 4)
        let ox = (cw - img.width) / 2, oy = (ch - img.height) / 2
        for y in 0..<min(img.height, ch) {
            let s = y * img.width * 4, d = ((y + oy) * cw + ox) * 4
            px.replaceSubrange(d..<(d + min(img.width, cw) * 4), with: img.pixels[s..<(s + min(img.width, cw) * 4)])
        }
        return RGBAImage(width: cw, height: ch, pixels: px)
    }

    private final class Sink: FrameSink {
        let owner: FrameCollector
        init(_ owner: FrameCollector) { self.owner = owner }
        func write(_ frame: RGBAImage, index: Int) throws { owner.frames.append(owner.pad(frame)) }
        func finish() throws {}
        func abort() { owner.frames.removeAll() }
        var bytesWritten: Int? { nil }
    }
}

/// Fewer colour levels for APNG (`bits` per channel, 8 = unchanged):
/// each value rounded to the nearest of 2^bits evenly spaced levels.
enum Posterize {
    static func apply(_ img: RGBAImage, bits: Int) -> RGBAImage {
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

/// A private temporary folder for the tries (removed at the end, and by
/// the signal handler through `TemporaryPaths`).
final class TrialFolder {
    private let parent: Int32
    private let name: String
    private let token: TemporaryPaths.Token
    private var n = 0
    let path: String

    init() throws {
        let given = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
        let tmp = given ?? "/tmp"
        /// The folder named, and why it cannot hold the tries, in one line.
        func unusable(_ error: Error) -> RunError {
            let reason = (error as? PosixError).map { String(cString: strerror($0.code)) } ?? "\(error)"
            let named = given != nil ? "TMPDIR '\(PathBytes.display(tmp, controls: true))'" : "'/tmp' (TMPDIR is not set)"
            return RunError("--preset keeps its tries in a temporary folder, and \(named) cannot hold one: \(reason); set TMPDIR to a writable folder (nothing written)")
        }
        do {
            parent = try Posix.open(tmp, O_RDONLY | O_DIRECTORY, shown: tmp)
        } catch {
            throw unusable(error)
        }
        name = TemporaryName.make()
        do {
            try Posix.mkdir(parent, name, 0o700, shown: tmp)
        } catch {
            close(parent)
            throw unusable(error)
        }
        token = TemporaryPaths.add(dir: parent, name: name)
        path = tmp + "/" + name
    }

    func next(_ ext: String) -> String {
        n += 1
        return path + "/try\(n)" + ext
    }

    func remove() {
        Posix.removeTree(parent, name)
        TemporaryPaths.remove(token)
        close(parent)
    }
}
