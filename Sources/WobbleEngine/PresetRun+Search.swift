import Foundation
import WobbleCore
import WobbleSystem
import WobbleMedia
import Synchronization

/// A preset's search: each try a whole file encoded into memory (`Candidate`), the quality searched for the best that fits, a video's two passes.
extension PresetRun {
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
        /// The whole encodes the search made to find it (a sample's are
        /// not counted).
        package var tries = 0

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
    /// - APNG (lossless, fewer colour levels): 4 bits alone (the choice
    ///   where 5 bits are predicted over the limit from the first picture's
    ///   ratio: `ColourBits.stillRatio`), then the level its size predicts,
    ///   then the levels the sizes predict (`ColourBits`); the most bits
    ///   that fit.
    /// - WebP: one try at a time (`QualityModel.searchOneByOne`): first the
    ///   quality a sample of the frames predicts within 93% of the limit
    ///   (`WebPSample`; 80 where the clip is too short for one), then the
    ///   qualities the sizes predict.
    /// - A quality (video, GIF): bytes against quality are smooth,
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
        var tries = 0
        /// Each of `levels` encoded into memory at once; the files' sizes,
        /// and the bytes of those that fit.
        func encode(_ levels: [Int]) throws -> [Candidate] {
            tries += levels.count
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
            let round = Stage()
            if together {
                Parallel.run(levels.count, one)
            } else {
                for i in levels.indices { one(i) }
            }
            let done = try results.withLock { try $0.map { try $0!.get() } }
            round.trace("\(format.rawValue) \(done.map { "\($0.level): \($0.bytes)" }.joined(separator: ", ")) (limit \(p.byteLimit))")
            smallest = min(smallest, done.map(\.bytes).min() ?? Int.max)
            return done
        }
        var found: Candidate?
        if apng {
            var replay = frames.replay()
            let ratio = ColourBits.stillRatio(frames.still ?? replay.frame(0).image)
            found = try ColourBits.search(limit: p.byteLimit, nextRatio: ratio, encode: encode)
        } else if format == .webp {
            let start = try webpFirstQuality(frames, spec: spec)
            found = try QualityModel.searchOneByOne(limit: p.byteLimit, first: start?.quality ?? QualityModel.second,
                                                    slope: start?.slope, encode: encode)
        } else {
            found = try QualityModel.search(limit: p.byteLimit, encode: encode)
        }
        found?.tries = tries
        return found
    }

    /// WebP's first quality and the slope of log(bytes) against quality
    /// there, from a sample of the frames (`WebPSample`): the sample at
    /// 80, then its first part at the quality that says fits, again where
    /// the two say a quality more than `WebPSample.near` steps away (the
    /// curve bends: a slope is trusted only near where it was measured),
    /// `WebPSample.partTries` times at most; nil where the clip is too
    /// short for a sample or the sample cannot be read.
    func webpFirstQuality(_ frames: FrameCollector, spec: OutputPlan.Frames) throws -> (quality: Int, slope: Double)? {
        guard frames.changedPixels.count == frames.count, let sample = WebPSample(changed: frames.changedPixels) else { return nil }
        let limit = preset.byteLimit, prior = QualityModel.priorSlope
        /// The clip frames `list` encoded at `q`, read back frame by frame.
        func encode(_ list: [Int], _ q: Int) throws -> (bytes: [Int: Int], rest: Int)? {
            let stage = Stage()
            let c = try self.encode(frames, spec: spec, format: .webp, level: q, only: list)
            stage.trace("webp sample of \(list.count) frames at \(q): \(c.bytes) bytes")
            return c.data.isEmpty ? nil : WebPSample.frameBytes(c.data, list: list, fps: spec.fps)
        }
        let q0 = QualityModel.second
        guard let readA = try encode(sample.frames, q0) else { return nil }
        let a = sample.sizes(readA, list: sample.frames, quality: q0), partA = sample.sizes(readA, list: sample.part, quality: q0)
        guard var chosen = sample.quality(limit: limit, from: a, firstSlope: prior, addedSlope: prior) else { return nil }
        func said(_ slopes: (Double, Double)) -> String {
            "\(chosen.quality), predicted \(Int(sample.predicted(chosen.quality, from: a, firstSlope: slopes.0, addedSlope: slopes.1) ?? 0)) bytes"
        }
        Stage().trace("webp sample at \(q0): \(said((prior, prior)))")
        var measured = q0
        for _ in 0..<WebPSample.partTries where abs(chosen.quality - measured) > WebPSample.near {
            measured = chosen.quality
            guard let readB = try encode(sample.part, measured) else { break }
            let slopes = WebPSample.slopes(partA, sample.sizes(readB, list: sample.part, quality: measured))
            guard let next = sample.quality(limit: limit, from: a, firstSlope: slopes.first, addedSlope: slopes.added) else { break }
            chosen = next
            Stage().trace("webp sample slopes \(String(format: "%.4f", slopes.first)), \(String(format: "%.4f", slopes.added)) to \(measured): \(said(slopes))")
        }
        return chosen
    }

    /// One try: `frames` encoded into memory as `format` at `level`
    /// (quality, or APNG colour bits), or as one pass of a two-pass video.
    /// A try over the limit keeps only its size, not its bytes.
    /// `only`: the frames encoded (increasing; all where nil), as an
    /// animation of those frames alone (a sample: each frame's changed
    /// boxes not passed on).
    package func encode(_ frames: FrameCollector, spec: OutputPlan.Frames, format: OutputFormat, level: Int,
                        twoPass: VideoSink.TwoPass? = nil, only: [Int]? = nil) throws -> Candidate {
        let p = preset
        let apng = format == .apng
        // Named for messages (and a video's container) only: nothing is written there.
        let what = twoPass.map { "pass \($0.pass.rawValue) at \($0.bitrate / 1000) kbit/s" }
            ?? (apng ? "\(level) bits" : "quality \(level)")
        let name = "\(p.name) try at \(what)\(format.extensions.first ?? "")"
        let plan = OutputPlan(format: format, path: name)
        // (A sample is read back chunk by chunk whatever its size: a few
        // times the limit at most, where a clip is far over it.)
        let memory = MemoryStream(shown: name, cap: only == nil ? p.byteLimit : p.byteLimit * Self.sampleCap)
        var s = spec
        s.quality = apng ? nil : level
        s.twoPass = twoPass
        if let only { s.count = only.count }
        var replay = frames.replay()
        guard let sink = try plan.makeSink(s, to: memory, still: { frames.still ?? replay.frame(0).image }) else {
            throw RunError("\(p.name): no output")
        }
        replay = frames.replay()
        let items = only ?? Array(0..<frames.count)
        var next = 0
        try streamFrames(items.indices, into: sink, reporter: ProgressReporter(total: items.count, quiet: true),
                         control: options.control) { j in
            // (The frames between a sample's frames replayed and let go at once.)
            while next < items[j] {
                _ = replay.frame(next)
                next += 1
            }
            let f = replay.frame(next)
            next += 1
            return (apng ? Posterize.apply(f.image, bits: level) : f.image, j, only == nil ? f.changed : nil)
        }
        let bytes = sink.bytesWritten ?? Int.max
        return Candidate(format: format, bytes: bytes, level: level, data: memory.overflowed ? [] : memory.take())
    }

    /// How many times the limit a sample's bytes are kept up to.
    static let sampleCap = 4

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
}
