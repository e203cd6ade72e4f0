import Foundation
import WobbleCore

import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// `--assemble DIR`: joins the PNG frames `frame_NNNNN.png` of DIR (for
/// example slices rendered with `--frames` on several machines into one
/// folder) into `-o` — an animated GIF or a video — at `--fps`, else the
/// rate the first frame records (`PNGFrameRate`), else 30, honouring `--loop`, `--width`/`--height` (frames are scaled with
/// the CPU renderer: area-averaged when smaller, bilinear when larger) and
/// `--frames A-B` (only those indices). With `--check` (or `--format null`) every frame is read and
/// checked and nothing is written.
///
/// The indices may start anywhere but must be contiguous; the first gap is
/// an error. Each frame keeps its timeline index, so GIF delays match a
/// direct render of the same frames. The GIF palette comes from the first
/// frame: a direct render builds it from the still image instead, which
/// equals frame 0 whenever nothing moves at time 0 (the usual case: an
/// impulse at t = 0 has not displaced anything yet) — then the bytes are
/// identical; otherwise the frames decode the same up to quantisation.
package struct Assembler {
    package let options: RenderOptions
    package let directory: String
    package var report = RunReport(json: false)

    package init(options: RenderOptions, directory: String) {
        self.options = options
        self.directory = directory
    }

    /// One input frame: its timeline index and file.
    package struct Frame {
        package var index: Int
        package var path: String
    }

    /// Assembles (or with `--check` reads) the frames; the `--check` line
    /// for them (`Runner.okLine`).
    @discardableResult
    package func run() throws -> String {
        let o = options
        if o.overlay { throw UsageError("--overlay does not apply to --assemble (the frames are already drawn)") }
        if o.image != nil { throw UsageError("--image does not apply to --assemble") }
        if o.preset != nil { throw UsageError("--preset renders a scene; it does not apply to --assemble") }
        let plan: OutputPlan
        if o.check || o.format == .null {
            plan = .null   // read and check every frame, write nothing
        } else {
            guard let output = o.output else {
                throw UsageError("--assemble needs -o OUTPUT (x.gif, x.webp, x.apng, x.mp4, x.webm, x.mov)")
            }
            plan = try OutputPlan.decide(path: output, format: o.format)
        }
        if plan.format == .png {
            throw UsageError("--assemble writes a GIF or a video, not PNG frames ('\(o.output ?? "")')")
        }
        var frames = try Assembler.list(directory)
        // Outputs never replace inputs: not a frame, not a sound slice
        // (links followed), whatever --frames keeps.
        let inputs = frames.compactMap { InputFile(role: .frame, path: $0.path) }
            + Assembler.slices(directory).compactMap { InputFile(role: .soundSlice, path: ScenePaths.join(directory, $0.1)) }
        try Runner(options: o).refuseToReplaceInputs(plan, inputs: inputs, frames: 0...0)
        let folderLast = frames[frames.count - 1].index
        if let r = o.frames {
            frames = frames.filter { r.contains($0.index) }
            guard !frames.isEmpty else {
                throw RunError("\(Runner.describe(frames: r)) selects no frame of '\(directory)'")
            }
        }
        guard frames.count <= o.maxFrames else {
            throw RunError("'\(directory)' has \(frames.count) frames, more than --max-frames \(o.maxFrames)")
        }
        // The first frame, read once (it may be a FIFO), and the rate it
        // records (PNGFrameRate), unless --fps says it.
        let (first, recorded) = try deadline.reading("image '\(frames[0].path)'") { () throws -> (RGBAImage, Double?) in
            do {
                let bytes = try ImageIO.readFile(path: frames[0].path)
                return (try ImageIO.decode(bytes, name: frames[0].path), PNGFrameRate.read(bytes: bytes))
            } catch let e as MediaError {
                throw RunError(e.message)
            }
        }
        let fps = o.fps ?? recorded ?? 30
        if o.fps == nil && recorded == nil {
            report.warn("'\(frames[0].path)' records no frame rate: assembling at 30 fps (give --fps)")
        }
        report.fps = fps
        report.frames = frames.count
        let seconds = Double(frames.count) / fps
        report.duration = seconds
        let reporter = ProgressReporter(total: frames.count, quiet: o.quiet, observer: o.control.progress)

        let (w, h) = try outputSize(first.width, first.height)
        func prepare(_ img: RGBAImage, _ f: Frame) throws -> RGBAImage {
            guard img.width == first.width, img.height == first.height else {
                throw RunError("frame '\(f.path)' is \(img.width)×\(img.height), the first frame \(first.width)×\(first.height)")
            }
            guard w != img.width || h != img.height else { return img }
            // The CPU renderer with nothing moving is a scaler (area-averaging down, bilinear up).
            let r = CPURenderer(source: img, outputWidth: w, outputHeight: h)
            return try r.render(FrameState(index: f.index, time: 0, regions: []))
        }
        let firstOut = try prepare(first, frames[0])

        report.width = w
        report.height = h
        var spec = OutputPlan.Frames(width: w, height: h, fps: fps, count: frames.count, fullRender: true,
                                     loop: o.loop, quality: o.quality, alpha: first.hasTransparentPixels, matte: o.matte)
        // The slices' sound, joined (a WAV in a private temporary folder).
        let sound = try joinSound(frames, fps: fps, folderLast: folderLast)
        defer { sound?.folder.remove() }
        if let joined = sound?.path {
            if plan.format.video != nil {
                let start = Double(frames[0].index) / fps
                spec.audio = VideoSink.Audio(path: joined, offset: start, start: start,
                                             end: Double(frames[frames.count - 1].index + 1) / fps)
            } else if plan.format != .null {
                report.warn(Runner.soundless(plan))
            }
        }
        try plan.checkFits(spec, pathGiven: true)
        let sink = try plan.makeSink(spec) { firstOut }
        let outputName = plan.path
        report.output = outputName
        try streamFrames(Array(frames.enumerated()), into: sink, reporter: reporter, control: o.control) { n, f in
            (n == 0 ? firstOut : try prepare(try load(f), f), f.index)
        }
        report.record(sink)
        let what = outputName.map { "wrote \($0)" } ?? "read"
        reporter.finish(String(format: "%@: %d frame%@ (%d-%d), %d×%d at %@ fps, in %.2f s", what, frames.count, frames.count == 1 ? "" : "s",
                               frames[0].index, frames[frames.count - 1].index, w, h, NumberText.rate(fps), reporter.elapsed))
        return Runner.okLine(frames: frames.count, seconds: seconds, fps: fps, width: w, height: h)
    }

    /// The sound slices of the folder (`sound_NNNNN.wav`, `AudioSlice`)
    /// for `frames`, joined end to end into a WAV in a private temporary
    /// folder (`ScratchFolder`: mode 0700, a fresh name, so nothing planted
    /// in `TMPDIR` is written through); nil when the folder has none. Each
    /// slice must hold exactly the samples of the frames from its first to
    /// the next slice's (or the last frame). Each slice is read under
    /// `--timeout`, as the frames are (a FIFO nobody writes to).
    package func joinSound(_ frames: [Frame], fps: Double, folderLast: Int) throws -> (folder: ScratchFolder, path: String)? {
        let first = frames[0].index, last = frames[frames.count - 1].index
        let all = Assembler.slices(directory)
        var slices = all
        guard !slices.isEmpty else { return nil }
        // Slices that start before the frames chosen (--frames) are cut; those after them are left out.
        if let i = slices.lastIndex(where: { $0.0 <= first }) { slices.removeFirst(i) }
        slices.removeAll { $0.0 > last }
        guard let head = slices.first, head.0 <= first else {
            throw RunError("--assemble '\(directory)': the sound slices start at frame \(slices.first?.0 ?? 0), after the first frame \(first) (render that slice again)")
        }
        let rate = Double(VideoSink.Audio.rate)
        func sample(_ frame: Int) -> Int { Int((Double(frame) / fps * rate).rounded()) }
        var pcm: [UInt8] = []
        for (index, name) in slices {
            // A slice holds the samples up to the next slice, the last one
            // up to the folder's last frame (whatever --frames keeps).
            let end = all.first(where: { $0.0 > index })?.0 ?? folderLast + 1
            let path = ScenePaths.join(directory, name)
            let bytes: [UInt8]
            do {
                bytes = try deadline.reading("sound slice '\(PathBytes.display(path))'") { try AudioSlice.readPCM(path) }
            } catch let e as MediaError { throw RunError(e.message) }
            let expected = (sample(end) - sample(index)) * AudioSlice.frameBytes
            let from = (sample(max(index, first)) - sample(index)) * AudioSlice.frameBytes
            // Every slice holds its frames' samples exactly.
            guard bytes.count == expected else {
                throw RunError("--assemble '\(directory)': '\(name)' holds \(bytes.count / AudioSlice.frameBytes) samples, not the \(expected / AudioSlice.frameBytes) of frames \(index)-\(end - 1) at \(NumberText.rate(fps)) fps (render that slice again, at this frame rate)")
            }
            pcm += bytes[from..<(sample(min(end, last + 1)) - sample(index)) * AudioSlice.frameBytes]
        }
        // (In a temporary folder: the frames' folder may be read-only.)
        do {
            let folder = try ScratchFolder(room: pcm.count + (1 << 20))
            let path = folder.path + "/sound.wav"
            do {
                try AtomicFile.write(AudioSlice.wav(pcm: pcm), to: path, name: .fresh)
            } catch {
                folder.remove()
                throw error
            }
            return (folder, path)
        } catch {
            throw RunError("--assemble '\(directory)': cannot write the joined sound (\(error))")
        }
    }

    /// The sound slices of `dir` (`sound_NNNNN.wav`), by first frame.
    package static func slices(_ dir: String) -> [(Int, String)] {
        guard let fd = try? Posix.open(dir, O_RDONLY | O_DIRECTORY) else { return [] }
        defer { Posix.closeQuietly(fd) }
        let names = (try? Posix.list(fd, shown: dir)) ?? []
        return names.compactMap { n in AudioSlice.index(ofName: n).map { ($0, n) } }.sorted { $0.0 < $1.0 }
    }

    package func load(_ f: Frame) throws -> RGBAImage {
        try deadline.reading("image '\(f.path)'") { try Runner.loadImage(f.path) }
    }

    /// `--timeout`: each frame must be read within it.
    package var deadline: ReadDeadline? { ReadDeadline(seconds: options.timeout, control: options.control) }

    /// `--width`/`--height` as for a render; the frames' own size without them.
    package func outputSize(_ sw: Int, _ sh: Int) throws -> (Int, Int) {
        try Runner(options: options).outputSize(sw, sh)
    }

    /// The `frame_NNNNN.png` files of `dir`, by index; they must be
    /// contiguous (the first gap is an error).
    package static func list(_ dir: String) throws -> [Frame] {
        // Through the POSIX layer: names that are not UTF-8 stay exact.
        guard let kind = Posix.kind(dir) else { throw RunError("--assemble '\(dir)': no such folder") }
        guard kind == .directory else { throw RunError("--assemble '\(dir)': not a folder") }
        let names: [String]
        do {
            let fd = try Posix.open(dir, O_RDONLY | O_DIRECTORY)
            defer { Posix.closeQuietly(fd) }
            names = try Posix.list(fd, shown: dir)
        } catch {
            throw RunError("--assemble '\(dir)': cannot read the folder (\(error))")
        }
        var frames: [Frame] = []
        var seen: [Int: String] = [:]
        for name in names {
            guard let index = frameIndex(name) else { continue }
            guard index <= Limits.maxFrameIndex else {
                throw RunError("--assemble '\(dir)': '\(name)': the frame index is more than \(Limits.maxFrameIndex)")
            }
            if let other = seen[index] {
                throw RunError("--assemble '\(dir)': frame \(index) is there twice ('\(min(other, name))' and '\(max(other, name))')")
            }
            seen[index] = name
            let path = ScenePaths.join(dir, name)
            // A device is refused before it is opened (/dev/zero never
            // ends); a FIFO is read, under --timeout.
            switch Posix.kind(path) {
            case .characterDevice?, .blockDevice?, .socket?, .directory?:
                throw RunError("frame '\(PathBytes.display(path))': \(Posix.kind(path)?.described ?? "not a file"), not a PNG file")
            case nil where Posix.kind(path, follow: false) == .link:
                throw RunError("frame '\(PathBytes.display(path))': a dangling link, not a PNG file")
            default: break
            }
            frames.append(Frame(index: index, path: path))
        }
        frames.sort { $0.index < $1.index }
        guard !frames.isEmpty else {
            throw RunError("--assemble '\(dir)': no frame_NNNNN.png files in it")
        }
        for (a, b) in zip(frames, frames.dropFirst()) where b.index != a.index + 1 {
            let missing = a.index + 1 == b.index - 1 ? "frame \(a.index + 1) is missing"
                                                     : "frames \(a.index + 1)-\(b.index - 1) are missing"
            throw RunError("--assemble '\(dir)': \(missing) (\(ScenePaths.name(a.path)) is followed by \(ScenePaths.name(b.path)))")
        }
        return frames
    }

    /// The index in `frame_NNNNN.png` (five or more digits), or nil; a
    /// number too large for `Int` is `Int.max` (refused by `list`).
    package static func frameIndex(_ name: String) -> Int? {
        guard name.hasPrefix("frame_"), name.hasSuffix(".png"), name.utf8.count >= 15 else { return nil }
        let digits = name.dropFirst(6).dropLast(4)
        guard digits.count >= 5, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(digits: digits) ?? Int.max
    }
}
