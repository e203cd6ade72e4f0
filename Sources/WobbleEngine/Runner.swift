import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript

import WobbleSystem

/// Writes the frames `produce` makes for `items` into `sink` (nil: render
/// only), polling `control` (a signal, a cancel) between frames, and finishes the sink;
/// on any error the sink is aborted, so nothing half-written remains.
package func streamFrames<C: Collection>(_ items: C, into sink: FrameSink?, reporter: ProgressReporter, control: RunControl,
                                 produce: (C.Element) throws -> (image: RGBAImage, index: Int)) throws {
    try streamFrames(items, into: sink, reporter: reporter, control: control, produceChanged: { item in
        let (image, index) = try produce(item)
        return (image, index, nil)
    })
}

/// As `streamFrames(_:into:reporter:produce:)`, for frames that come with
/// the boxes where they differ from the frame before (`RegionFrames`).
package func streamFrames<C: Collection>(_ items: C, into sink: FrameSink?, reporter: ProgressReporter, control: RunControl,
                                 produceChanged produce: (C.Element) throws -> (image: RGBAImage, index: Int, changed: [PixelRect]?)) throws {
    do {
        for item in items {
            try control.check()
            let (image, index, changed) = try produce(item)
            try sink?.write(image, index: index, changed: changed)
            reporter.frameDone()
        }
        try control.check()
        try sink?.finish()
    } catch {
        sink?.abort()
        throw error
    }
}

/// One run of a scene: script on the virtual clock, then the frames.
package struct Runner {
    package let options: RenderOptions
    /// Where the frames go instead of the output table's sink (`--preset`
    /// collects them); nil: `OutputPlan.makeSink`.
    package var makeSink: ((OutputPlan.Frames, () throws -> RGBAImage) throws -> FrameSink?)?
    /// What the frames become when it is not the output table's (a
    /// `--preset`'s platform, which takes no sound): the soundtrack warning names it.
    package var soundless: String?

    /// Whether the run ends with its own summary line (`wrote …`); a
    /// preset's inner runs leave that to the preset.
    package var announces = true

    package init(options: RenderOptions) { self.options = options }

    /// What a run produced, for the summary line.
    package struct Summary {
        package var frames: Int
        package var width: Int
        package var height: Int
        package var clip: Clip
        package var output: String?
        package var seconds: Double
        /// The files the run read, each once (resolved: the scene, the
        /// image, traces, modules) and the image it used: what `--watch`
        /// watches besides the scene's folder (they may be outside it). A
        /// run that fails has them in its report (`RunReport.inputs`).
        package var inputs: [String] = []

        /// The `--check` line for these frames (`Runner.okLine`).
        package var okLine: String {
            Runner.okLine(frames: frames, seconds: clip.length(frames: frames), fps: clip.fps, width: width, height: height)
        }
    }

    package func run(report: RunReport = RunReport(json: false)) throws -> Summary {
        let o = options
        let scenePath = o.scene!
        let control = o.control
        let deadline = ReadDeadline(seconds: o.timeout, control: control)
        // Images are read under --timeout (a FIFO or a stalled mount cannot hang the run).
        // A colour profile that cannot be used is a warning of the run's.
        let imageWarnings = ImageWarnings()
        let runner = SceneRunner(options: o.sceneRun) { path in
            try deadline.reading("image '\(path)'") { try Runner.loadImage(path, warn: imageWarnings.add) }
        }
        /// The files the run named and the image it used, each once (also
        /// when it fails: the report keeps them).
        func named() -> [String] {
            var seen: [String] = []
            for path in runner.named + (runner.imagePath.map { [$0] } ?? []) where !seen.contains(path) { seen.append(path) }
            return seen
        }
        defer {
            for path in [scenePath] + named() where !report.inputs.contains(path) { report.inputs.append(path) }
        }
        // The count hook cannot fire inside one long C call of Lua's own
        // libraries (a pathological string.find pattern): past the timeout
        // and a grace period, stop the process (nothing is written yet).
        let watchdog = o.timeout.map { t in
            Alarm(after: t + 2) {
                control.hardStop("\(scenePath): script timed out after \(NumberText.plain(t)) s (--timeout), inside a library call")
            }
        }
        defer { watchdog?.cancel() }
        // The scene file is read (by Lua) inside ScriptHost.run (after an
        // --image): its clock starts there and stops once the chunk is loaded.
        var sceneRead: ReadDeadline.Token?
        defer { if let sceneRead { deadline?.end(sceneRead) } }
        let result: ScriptResult
        do {
            result = try runner.run(missingScene: { RunError("scene '\($0)': no such file") }) { so in
                so.outputGiven = o.output != nil
                // --max-frames counts the frames written: with --frames the
                // timeline may be longer (up to the default limit, or more).
                so.maxFrames = o.frames == nil ? o.maxFrames : max(o.maxFrames, RenderOptions.defaultMaxFrames)
                so.shouldAbort = { control.stopped }
                // print() is the script's own output (stdout), unless the frames go there.
                so.printToStdout = !(o.output.map { OutputPlan(format: .gif, path: $0).isStdout } ?? false)
                let read = deadline?.begin("scene '\(scenePath)'")
                sceneRead = read
                so.onLoaded = { if let read { deadline?.end(read) } }
            }
        } catch let e as ScriptError where e.kind == .interrupted {
            throw Interrupted(signal: control.signal ?? SIGINT)
        }
        watchdog?.cancel()
        let clip = result.clip
        let selection = try frameSelection(clip)
        report.frames = selection.count
        report.fps = clip.fps
        report.duration = clip.length(frames: selection.count)
        let still = ClipWarnings.isStill(clip)
        report.still = still
        report.loop = clip.loop != nil
        for w in imageWarnings.lines + ClipWarnings.scene(result.warnings, clip: clip) { report.warn(w) }
        guard selection.count <= o.maxFrames else {
            throw RunError("\(Runner.describe(frames: o.frames ?? selection)) selects \(selection.count) frames, more than --max-frames \(o.maxFrames)")
        }
        let reporter = ProgressReporter(total: selection.count, quiet: o.quiet, observer: control.progress)

        guard let source = runner.image else { throw RunError("no image: the scene loads none and no --image was given") }
        let (w, h) = try outputSize(source.width, source.height)
        report.width = w
        report.height = h

        // --image is an input too (the scene records the rest).
        let inputs = result.inputs + (o.image.flatMap { InputFile(role: .image, path: $0) }.map { [$0] } ?? [])
        // The same output checks for a render and --check (a bad -o fails both alike).
        let plan = try outputPlan(scriptOutput: result.outputPath, scenePath: scenePath)
        if plan.isStdout { report.toStderr = true }
        var frames = OutputPlan.Frames(width: w, height: h, fps: clip.fps, count: selection.count,
                                       fullRender: o.frames == nil, loop: o.loop, quality: o.quality,
                                       alpha: source.hasTransparentPixels, matte: o.matte)
        var pngSound: (audio: VideoSink.Audio, dir: String)?
        if let track = result.soundtrack {
            let audio = VideoSink.Audio(path: track.path, offset: track.offset,
                                        start: Double(selection.lowerBound) / clip.fps,
                                        end: Double(selection.upperBound + 1) / clip.fps)
            if let soundless {
                let message = "\(soundless) have no sound: the soundtrack is left out"
                if !report.warnings.contains(message) { report.warn(message) }
            } else if plan.format.video != nil {
                frames.audio = audio
            } else if plan.format == .png, case .directory(let dir)? = plan.png {
                // PNG frames in a folder (a --frames slice): the slice's
                // sound beside them, for --assemble.
                pngSound = (audio, dir)
            } else if plan.format != .null {
                report.warn(Runner.soundless(plan))
            }
        }
        try plan.checkFits(frames, pathGiven: o.output != nil)
        try refuseToReplaceInputs(plan, inputs: inputs, frames: selection)
        if plan.format == .gif {
            if clip.fps > 50 {
                report.warn("\(NumberText.rate(clip.fps)) fps is more than GIF players show (browsers slow GIFs above 50 fps down); consider --fps 25 or 50")
            }
            // A loop() clip flows from its last frame into its first; one
            // frame shown over and over jumps nowhere.
            if selection.count > 1, let w = ClipWarnings.loopJump(clip, loops: o.loop != -1, wholeClip: o.frames == nil, still: still) { report.warn(w) }
        }
        if o.check {
            try plan.validate(frames)
            return Summary(frames: selection.count, width: w, height: h, clip: clip, output: nil, seconds: reporter.elapsed, inputs: named())
        }
        if plan.format.isWebPage, let path = plan.path {
            // The scene itself, played live by the page: no frames rendered.
            // It plays the whole scene, looping as the scene says; it is
            // shown at the output's size (--width, --height).
            if let r = o.frames {
                report.warn("a web page plays the whole scene: \(Runner.describe(frames: r)) is left out")
            }
            if o.loopGiven {
                report.warn("a web page loops as the scene does (loop=\"false\" on <wobble-view> plays it once): --loop is left out")
            }
            let title = ScenePaths.baseName(scenePath)
            if plan.format == .html {
                try WebPage.writePage(clip: clip, source: source, title: title, shownWidth: w, quality: o.quality, to: path, name: plan.name,
                                      control: control)
            } else {
                try WebPage.writeFolder(clip: clip, source: source, title: title, shownWidth: w, quality: o.quality, to: path,
                                        control: control)
            }
            report.output = path
            let summary = Summary(frames: clip.frameCount, width: source.width, height: source.height, clip: clip, output: path,
                                  seconds: reporter.elapsed)
            if announces { reporter.finish(Runner.describe(summary)) }
            return summary
        }

        let renderer = try FrameRenderers.make(o.backend, source: source, outputWidth: w, outputHeight: h, verbose: o.verbose)
        report.backend = FrameRenderers.backend(of: renderer).rawValue

        // Each frame is the one before plus the boxes of what moves
        // (the overlay painted as the one compositor paints it).
        let stream = RegionFrames(renderer: renderer)

        if Posix.isTerminal(2) { report.flushWarnings() }
        if let pngSound {
            // The slice is decoded before the render and committed with the
            // frames (one folder commit, one lock): never one run's frames
            // beside another's sound, never frames replaced and then a
            // slice refused.
            let name = AudioSlice.name(selection.lowerBound)
            do {
                frames.soundSlice = (name, try AudioSlice.wav(pngSound.audio, shown: ScenePaths.join(pngSound.dir, name)))
            } catch let e as MediaError {
                throw RunError(e.message)
            }
        }
        // What a GIF's palette is made from: the still as the first frame
        // shows it (with the overlay, whose colours the picture may not have).
        let palettePicture = { try stream.stillShown(clip.frame(selection.lowerBound, overlay: o.overlay)) }
        let sink = try makeSink.map { try $0(frames, palettePicture) } ?? plan.makeSink(frames, still: palettePicture)
        report.output = plan.path
        report.armForInterruption()
        try streamFrames(selection, into: sink, reporter: reporter, control: control, produceChanged: { k in
            let f = try stream.next(clip.frame(k, overlay: o.overlay))
            return (f.image, k, f.changed)
        })
        report.record(sink)
        if o.verbose, let deferred = renderer as? DeferredGLESRenderer, deferred.started == nil {
            printError("wobble-run: \(deferred.startedDescription)")
        }
        if o.verbose, let cost = (sink as? GIFSink)?.paletteCost {
            printError("wobble-run: GIF palette: \(cost.colors) colours from \(cost.histogramEntries) histogram entries in \(Int((cost.cpuSeconds * 1000).rounded())) ms of CPU, \(Int((cost.wallSeconds * 1000).rounded())) ms of wall time")
        }
        let summary = Summary(frames: selection.count, width: w, height: h, clip: clip, output: plan.path, seconds: reporter.elapsed, inputs: named())
        if !announces {
            // (the preset says what it wrote)
        } else if o.verbose && !reporter.isTerminal {
            printError(Runner.describe(summary))
        } else {
            reporter.finish(Runner.describe(summary))
        }
        return summary
    }

    /// The warnings the images of one run earned, each once.
    package final class ImageWarnings {
        private(set) var lines: [String] = []
        package func add(_ line: String) { if !lines.contains(line) { lines.append(line) } }
    }

    /// The warning for a soundtrack an output cannot carry.
    package static func soundless(_ plan: OutputPlan) -> String {
        let what: String
        switch plan.format {
        case .gif: what = "a GIF"
        case .webp: what = "an animated WebP"
        case .apng: what = "an APNG"
        case .html, .web: what = "a web page"
        default: what = "PNG frames"
        }
        return "'\(plan.path ?? "-")' is \(what), which has no sound: the soundtrack is left out (write .mp4, .webm or .mov to keep it)"
    }

    /// The `--check` line, a scene's and `--assemble`'s: `ok: N frames,
    /// S s at F fps, W×H`, S the frames' play time.
    package static func okLine(frames: Int, seconds: Double, fps: Double, width: Int, height: Int) -> String {
        "ok: \(frames) frame\(frames == 1 ? "" : "s"), \(NumberText.seconds(seconds)) s at \(NumberText.rate(fps)) fps, \(width)×\(height)"
    }

    /// A render's summary line: its frames (a `--frames` part's own), their
    /// play time, size and rate.
    package static func describe(_ s: Summary) -> String {
        let what = s.output.map { "wrote \($0)" } ?? "rendered"
        return String(format: "%@: %d frame%@, %d×%d, %@ s at %@ fps, in %.2f s", what, s.frames, s.frames == 1 ? "" : "s",
                      s.width, s.height, NumberText.seconds(s.clip.length(frames: s.frames)), NumberText.rate(s.clip.fps), s.seconds)
    }

    /// Loads a PNG or JPEG; a bad file is a `RunError` naming it.
    /// `warn` hears of a colour profile that cannot be used.
    package static func loadImage(_ path: String, warn: (String) -> Void = { _ in }) throws -> RGBAImage {
        do {
            return try ImageIO.load(path: path, warn: warn)
        } catch let e as MediaError {
            throw RunError(e.message)
        }
    }

    /// The frames to render: all, or `--frames A-B` clipped to the clip.
    package func frameSelection(_ clip: Clip) throws -> ClosedRange<Int> {
        let all = 0...(clip.frameCount - 1)
        guard let r = options.frames else { return all }
        guard r.lowerBound < clip.frameCount else {
            throw RunError("\(Runner.describe(frames: r)) selects no frame: the clip has \(clip.frameCount) frame\(clip.frameCount == 1 ? "" : "s") (0-\(clip.frameCount - 1))")
        }
        return r.lowerBound...min(r.upperBound, clip.frameCount - 1)
    }

    /// `--frames A-B` as the user wrote it (`A-` for an open range).
    package static func describe(frames r: ClosedRange<Int>) -> String {
        "--frames \(r.lowerBound)-\(r.upperBound == Int.max ? "" : String(r.upperBound))"
    }

    /// `--width`/`--height`: the other side keeps the aspect ratio. The
    /// size is checked against the image limits before any frame of it is
    /// allocated (`CheckedNumbers.outputSize`), in a render and `--check`
    /// alike: too large is a usage error (the options ask for it).
    package func outputSize(_ sw: Int, _ sh: Int) throws -> (Int, Int) {
        do {
            return try CheckedNumbers.outputSize(sourceWidth: sw, sourceHeight: sh, width: options.width, height: options.height)
        } catch let e as LimitError {
            throw UsageError(e.message)
        }
    }

    /// Decides the output from `-o`, `--format`, `output(...)` and the scene name.
    package func outputPlan(scriptOutput: String?, scenePath: String) throws -> OutputPlan {
        if options.format == .null { return .null }
        let path: String
        var madeUp = options.outputMadeUp
        if let p = options.output {
            path = p
        } else if let p = scriptOutput {
            path = p
        } else {
            madeUp = true
            let base = ScenePaths.baseName(scenePath)
            switch options.format {
            case .png: path = options.placed(base + "_frames/")
            case let f? where f.video != nil: path = options.placed(base + f.extensions[0])
            case .html?: path = options.placed(base + ".html")
            case .web?: path = options.placed(base + "_web/")
            default: path = options.placed(base + ".gif")
            }
        }
        // A name wobble-run chose for a file (`<scene>.gif`, a preset's
        // `<scene>-slack.gif`) where a folder is: refused, as any made-up
        // name that is not a file (its format is not read from the folder,
        // and no frames are written into it).
        if madeUp, !path.hasSuffix("/"), let kind = Posix.kind(path, follow: false), kind != .regular, kind != .link {
            throw RunError("output '\(PathBytes.display(path, controls: true))': \(OutputName.notAFile(kind))")
        }
        var plan = try OutputPlan.decide(path: path, format: options.format, follow: !madeUp)
        if madeUp {
            plan.name = .madeUp
            // A folder the engine named (`<scene>_frames/`, `<scene>_web/`)
            // is not entered through a link: its files (and a frame
            // folder's stale ones) would be written and removed wherever
            // the link leads.
            let folder: String? = switch (plan.png, plan.format) {
            case (.directory(let dir)?, _): dir
            case (_, .web): plan.path   // `<scene>_web/`: its page, script, scene and picture
            default: nil
            }
            if let dir = folder, Posix.kind(String(dir.reversed().drop(while: { $0 == "/" }).reversed()), follow: false) == .link {
                throw RunError("output '\(PathBytes.display(dir, controls: true))': a symbolic link; a folder wobble-run names itself is never followed (remove the link, or give -o)")
            }
        }
        if options.output != nil, case .pattern(let p)? = plan.png {
            // A malformed pattern in -o is a usage error (2); in output(...) a scene error (1).
            do { _ = try FrameNamePattern(fileName: String(p.split(separator: "/", omittingEmptySubsequences: false).last ?? ""), output: p) }
            catch let e as MediaError { throw UsageError(e.message) }
        }
        return plan
    }
}
