import Foundation
import WobbleCore
import WobbleSystem

/// Video containers `VideoSink` writes, and how it encodes them.
public enum VideoFormat: String, Sendable, CaseIterable {
    /// H.264 (libx264, else MPEG-4 part 2), yuv420p, in MP4.
    case mp4
    /// H.264 in QuickTime.
    case mov
    /// H.264 in Matroska.
    case mkv
    /// VP9 (libvpx-vp9, else VP8) with alpha (yuva420p), in WebM.
    case webm

    /// The format a path's extension names, or nil.
    public init?(path: String) {
        let ext = ScenePaths.fileExtension(path).lowercased()
        self.init(rawValue: ext)
    }

    /// ffmpeg's muxer name (`-f`).
    var muxer: String {
        switch self {
        case .mp4: "mp4"
        case .mov: "mov"
        case .mkv: "matroska"
        case .webm: "webm"
        }
    }

    /// True for the 4:2:0 H.264 family, which needs even dimensions.
    var needsEvenSize: Bool { self != .webm }

    /// The audio codec for a soundtrack (`-c:a`) among the installed
    /// `encoders`, with its settings: AAC in MP4 and Matroska, Opus (else
    /// Vorbis) in WebM, 16-bit PCM in QuickTime; nil when none is there.
    func audioCodec(_ encoders: Set<String>) -> (name: String, args: [String])? {
        switch self {
        case .mp4, .mkv:
            return encoders.contains("aac") ? ("aac", ["-c:a", "aac", "-b:a", "192k"]) : nil
        case .webm:
            if encoders.contains("libopus") { return ("libopus", ["-c:a", "libopus", "-b:a", "128k", "-vbr", "off"]) }
            if encoders.contains("libvorbis") { return ("libvorbis", ["-c:a", "libvorbis", "-q:a", "5"]) }
            return nil
        case .mov:
            return encoders.contains("pcm_s16le") ? ("pcm_s16le", ["-c:a", "pcm_s16le"]) : nil
        }
    }

    /// True when the video keeps the alpha channel (WebM, yuva420p; a MOV
    /// of frames with alpha is ProRes 4444 and keeps it too).
    public func keepsAlpha(sourceHasAlpha: Bool) -> Bool { self == .webm || (self == .mov && sourceHasAlpha) }
}

/// Writes frames as a video by piping raw RGBA frames to `ffmpeg` (found
/// on `PATH`). `.mp4` (and `.mov`, `.mkv`) is H.264 yuv420p (MPEG-4 part 2
/// when the installed ffmpeg lacks libx264); an odd width or height is
/// padded by one pixel that repeats the last column or row (`encodedWidth`,
/// `encodedHeight` say the size written), and frames are composited over
/// black (these videos have no alpha). `.webm` is VP9 (VP8 without
/// libvpx-vp9) in yuva420p, which keeps the alpha channel. `.mov` with
/// `alpha` is ProRes 4444 with its alpha plane (`prores_ks`,
/// yuva444p10le), any size, for video editors.
///
/// Every video is converted with the BT.709 matrix to limited ("tv")
/// range and tagged so (`color_space`, `color_primaries`, `color_transfer`
/// bt709, `color_range` tv): players need not guess.
///
/// The bytes go to a `ByteStream`, and are the same whichever it is:
/// ffmpeg always writes a seekable file (an MP4's index at its start), and
/// the stream gets it only when ffmpeg exited with status 0 *and* the file
/// is a complete container (`VideoContainer.verify`: ffmpeg 5 exits 0 even
/// when the disk filled up under it). To a file (`AtomicFile`) ffmpeg
/// writes the temporary file beside the target that we created and hold
/// open (passed as its descriptor 3), which then replaces the target. To a
/// pipe, device or memory, ffmpeg writes a private scratch file
/// (`ScratchFile`: unnamed in `TMPDIR`, or in memory for a memory output)
/// that `finish()` copies into the stream with checked writes, so a full
/// disk or a closed reader is an error; a pipe then gets the video at the
/// end, not as it is encoded.
///
/// ffmpeg runs in its own process group (a Ctrl-C reaches only us) and
/// dies with us (`PR_SET_PDEATHSIG`, SIGKILL, tied to the thread that
/// created the sink: create it on a thread that outlives it, such as the
/// main thread). When ffmpeg fails, the error ends with the last lines of
/// its stderr. SIGPIPE is ignored process-wide (a dying ffmpeg must be an
/// error, not a crash).
///
/// With `audio`, ffmpeg also reads the sound file and muxes the samples of
/// the frames' time span as the video's audio stream (48 kHz stereo:
/// AAC, Opus or PCM, `VideoFormat.audioCodec`): silence where the sound
/// has not started or has ended, exactly the video's length, with
/// bit-exact flags so the same inputs give the same bytes. The encoder's
/// delay (AAC priming) is the container's business: ffmpeg writes the
/// edit list (MP4/MOV) or the codec delay (WebM) that players honour.
public final class VideoSink: FrameSink {
    /// The sound a video carries: the file, where its time 0 falls on the
    /// clip, and the clip's time span the frames cover (`--frames`).
    public struct Audio: Sendable, Equatable {
        public var path: String
        /// Clip time of the sound's time 0 (seconds; negative cuts its start).
        public var offset: Double
        /// Clip time of the first frame written.
        public var start: Double
        /// Clip time just after the last frame written.
        public var end: Double

        public init(path: String, offset: Double, start: Double, end: Double) {
            self.path = path
            self.offset = offset
            self.start = start
            self.end = end
        }

        /// Sample rate of the muxed audio.
        public static let rate = 48_000

        /// The samples of `[start, end)` at `rate`: silence first
        /// (`delay`), where the sound starts in them (`skip`), how many in
        /// all. Bounds are rounded on one grid, so consecutive slices tile
        /// the clip's samples exactly.
        public func span(rate: Int = Audio.rate) -> (delay: Int, skip: Int, count: Int) {
            let r = Double(rate)
            let first = Int((start * r).rounded()), last = Int((end * r).rounded())
            let origin = Int((offset * r).rounded())
            return (max(0, origin - first), max(0, first - origin), max(0, last - first))
        }

        /// ffmpeg's audio filter: resample, stereo, cut, delay, pad and
        /// trim to exactly `count` samples, timestamps from 0.
        var filter: String {
            let (delay, skip, count) = span()
            var f = "aresample=\(Audio.rate),aformat=sample_fmts=fltp:channel_layouts=stereo"
            if skip > 0 { f += ",atrim=start_sample=\(skip)" }
            f += ",asetpts=N/SR/TB"
            if delay > 0 { f += ",adelay=delays=\(delay)S:all=1" }
            f += ",apad=whole_len=\(count),atrim=end_sample=\(count),asetpts=N/SR/TB"
            return f
        }
    }

    /// One pass of a two-pass VP9 encode in constrained-quality mode: pass
    /// 1 writes the statistics of the frames to `statistics`-0.log (ffmpeg
    /// names the file: `-passlogfile`), pass 2 reads them and encodes at
    /// about `bitrate` bits a second, its quality capped by the CRF of
    /// `quality` (an easy clip stops there, below the bitrate). Pass 2
    /// needs the same frames as pass 1; the statistics serve any number of
    /// second passes. libvpx-vp9 only (`supportsTwoPass`).
    public struct TwoPass: Sendable, Equatable {
        public enum Pass: Int, Sendable { case first = 1, second = 2 }
        public var pass: Pass
        /// The statistics' path less ffmpeg's "-0.log" (a private folder's file).
        public var statistics: String
        /// Bits a second aimed at (`-b:v`).
        public var bitrate: Int
        /// The best quality (1...100, the CRF it maps to: `-crf`).
        public var quality: Int
        /// The clip is one period of a loop (`loop()`): the last frame
        /// flows into the first, so the still background must not change
        /// on the way. libvpx spends the bits a clip leaves below the
        /// bitrate on coding the still background again, finer, part way
        /// through (a step of about a level on most of the picture, once);
        /// the first frame, the key frame, keeps the coarser one, so every
        /// play stepped at the seam. Here libvpx may undershoot the
        /// bitrate as far as it likes (`-undershoot-pct 100`): it codes
        /// each frame at the quality asked and nothing again (smaller, and
        /// a few dB lower against the frames than the refined file).
        public var seamless: Bool

        public init(pass: Pass, statistics: String, bitrate: Int, quality: Int, seamless: Bool = false) {
            self.pass = pass
            self.statistics = statistics
            self.bitrate = bitrate
            self.quality = quality
            self.seamless = seamless
        }

        /// The file ffmpeg writes the statistics to (its one video stream's).
        public static func statisticsFile(_ statistics: String) -> String { statistics + "-0.log" }
    }

    /// Whether the installed ffmpeg has a VP9 encoder (libvpx-vp9; without
    /// it a `.webm` is VP8); nil where ffmpeg is missing or cannot tell
    /// (the sink says so when it starts).
    public static func hasVP9() -> Bool? {
        guard let ffmpeg = ChildProcess.findExecutable("ffmpeg"),
              let encoders = try? encoders(ffmpeg: ffmpeg, what: "ffmpeg") else { return nil }
        return encoders.contains("libvpx-vp9")
    }

    /// Whether `format` can be encoded in two passes with the installed
    /// ffmpeg (WebM with libvpx-vp9).
    public static func supportsTwoPass(_ format: VideoFormat) -> Bool { format == .webm && hasVP9() == true }

    /// The soundtrack muxed, if any.
    public let audio: Audio?
    /// The target path.
    public let path: String
    /// Frame size the caller writes.
    public let width: Int
    public let height: Int
    /// Frames per second.
    public let fps: Double
    /// The container and codec family.
    public let format: VideoFormat
    /// The encoder ffmpeg uses (`libx264`, `libvpx-vp9`, `prores_ks`, …).
    public let encoder: String
    /// The size of the video written: the frame size, or one more pixel
    /// (the edge repeated) where H.264's 4:2:0 needs an even side.
    public var encodedWidth: Int { paddedWidth }
    public var encodedHeight: Int { paddedHeight }
    /// Whether the video keeps the frames' alpha.
    public let keepsAlpha: Bool

    private let stream: ByteStream
    /// ffmpeg's file where the stream has none of its own to give.
    private let scratch: ScratchFile?
    /// The seekable file ffmpeg writes (the stream's, or `scratch`).
    private let container: Int32
    private let child: ChildProcess
    private var input: Int32
    private let stderrCollector: OutputCollector
    private let paddedWidth: Int
    private let paddedHeight: Int
    private var rowBuffer: [UInt8] = []
    private var finished = false
    private var frames = 0

    /// Starts ffmpeg for a `width × height` video at `fps`. The format comes
    /// from `format`, else from the path's extension (`.mp4`, `.mov`,
    /// `.mkv`, `.webm`), else MP4. Throws `MediaError` when ffmpeg is not
    /// installed, the target is refused (`OutputTarget`) or ffmpeg cannot
    /// start.
    ///
    /// `quality` (`--quality`, 1...100; nil: the defaults) sets the
    /// encoder's constant-quality factor: CRF 51 (1) ... 0 (100) for
    /// H.264, 63 ... 0 for VP9/VP8, `-q:v` 31 ... 2 for MPEG-4 part 2.
    ///
    /// `alpha` (the frames have transparent pixels) makes a `.mov` ProRes
    /// 4444 with alpha instead of H.264; `quality` then sets `-qscale:v`
    /// 31 ... 1 (nil: prores_ks's own rate control).
    ///
    /// `twoPass` (WebM with libvpx-vp9 only; `quality` is then its cap)
    /// makes this one pass of a two-pass encode (`TwoPass`).
    public convenience init(path: String, width: Int, height: Int, fps: Double, format: VideoFormat? = nil,
                            quality: Int? = nil, alpha: Bool = false, audio: Audio? = nil, twoPass: TwoPass? = nil) throws {
        try self.init(stream: try ByteStreams.open(path), shown: path, width: width, height: height, fps: fps,
                      format: format, quality: quality, alpha: alpha, audio: audio, twoPass: twoPass)
    }

    /// As `init(path:...)`, writing to the stream `stream` makes (opened
    /// once the parameters and ffmpeg are checked); `shown` names the output
    /// in messages, and its extension the format where `format` is nil.
    public init(stream makeStream: @autoclosure () throws -> ByteStream, shown path: String, width: Int, height: Int,
                fps: Double, format: VideoFormat? = nil, quality: Int? = nil, alpha: Bool = false, audio: Audio? = nil,
                twoPass: TwoPass? = nil) throws {
        let quality = twoPass?.quality ?? quality
        if let quality, !(1...100).contains(quality) {
            throw MediaError("video '\(path)': quality must be 1 to 100, not \(quality)")
        }
        /// `quality` on the scale `worst...best`, or `fallback`.
        func scale(_ worst: Int, _ best: Int, _ fallback: Int) -> String {
            guard let q = quality else { return String(fallback) }
            return String(Int((Double(worst) + Double(best - worst) * Double(q - 1) / 99).rounded()))
        }
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw MediaError("video '\(path)': bad frame size \(width)×\(height)")
        }
        guard fps.isFinite, fps > 0 else { throw MediaError("video '\(path)': bad frame rate \(fps)") }
        // ffmpeg is a process, fed by a thread of ours (`TaskBudget`).
        try TaskBudget.require(2, for: "a video (ffmpeg and the thread that feeds it)")
        try TaskBudget.requireDescriptors(11, for: "a video (ffmpeg's pipes)")
        guard let ffmpeg = ChildProcess.findExecutable("ffmpeg") else {
            throw MediaError("video output needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg); write a .gif or PNG frames instead")
        }
        // ffmpeg inherits the stack limit and crashes below it (VP9 at 64 KiB).
        do {
            try StackRoom.requireForChild(VideoSink.ffmpegStack, for: "ffmpeg")
        } catch let e as MediaError {
            throw MediaError("video '\(path)': \(e.message); write a .gif, PNG frames, .webp or .apng instead")
        }
        Signals.ignoreBrokenPipe()
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        let format = format ?? VideoFormat(path: path) ?? .mp4
        self.format = format
        let prores = format == .mov && alpha
        keepsAlpha = format.keepsAlpha(sourceHasAlpha: alpha)
        paddedWidth = format.needsEvenSize && !prores ? (width + 1) & ~1 : width
        paddedHeight = format.needsEvenSize && !prores ? (height + 1) & ~1 : height
        let encoders = try VideoSink.encoders(ffmpeg: ffmpeg, what: "video '\(path)'")
        let codec: [String]
        switch format {
        case .mov where prores:
            guard encoders.contains("prores_ks") else {
                throw MediaError("video '\(path)': the installed ffmpeg has no ProRes encoder (prores_ks) for a MOV with alpha; write .webm (VP9 with alpha), PNG frames or .apng instead")
            }
            encoder = "prores_ks"
            codec = ["-c:v", "prores_ks", "-profile:v", "4444", "-pix_fmt", "yuva444p10le", "-alpha_bits", "16",
                     "-vendor", "apl0"] + (quality.map { _ in ["-qscale:v", scale(31, 1, 0)] } ?? [])
        case .webm:
            if encoders.contains("libvpx-vp9") {
                encoder = "libvpx-vp9"
                // Constant quality, or (two-pass) constrained quality: the
                // bitrate aimed at, the CRF as the best quality.
                let rate = twoPass.map { ["-b:v", String($0.bitrate), "-pass", String($0.pass.rawValue),
                                          "-passlogfile", $0.statistics] + ($0.seamless ? ["-undershoot-pct", "100"] : []) }
                    ?? ["-b:v", "0"]
                codec = ["-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", "-crf", scale(63, 0, 30)] + rate
                    + ["-deadline", "good", "-cpu-used", "4", "-row-mt", "1"]
            } else if encoders.contains("libvpx") {
                encoder = "libvpx"
                codec = ["-c:v", "libvpx", "-pix_fmt", "yuva420p", "-crf", scale(63, 4, 10), "-b:v", "4M", "-auto-alt-ref", "0"]
            } else {
                throw MediaError("video '\(path)': the installed ffmpeg has no VP9 or VP8 encoder (libvpx); write .mp4, a .gif or PNG frames instead")
            }
        case .mp4, .mov, .mkv:
            if encoders.contains("libx264") {
                encoder = "libx264"
                codec = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", scale(51, 0, 18), "-preset", "medium"]
            } else if encoders.contains("mpeg4") {
                encoder = "mpeg4"
                codec = ["-c:v", "mpeg4", "-pix_fmt", "yuv420p", "-q:v", scale(31, 2, 2)]
            } else {
                throw MediaError("video '\(path)': the installed ffmpeg has no H.264 (libx264) or MPEG-4 encoder; write .webm, a .gif or PNG frames instead")
            }
        }
        if let twoPass {
            guard encoder == "libvpx-vp9" else {
                throw MediaError("video '\(path)': a two-pass encode is for WebM with libvpx-vp9, not \(encoder)")
            }
            guard twoPass.bitrate > 0, !twoPass.statistics.isEmpty else {
                throw MediaError("video '\(path)': bad two-pass bitrate \(twoPass.bitrate)")
            }
        }
        var audioArgs: [String] = []
        if let audio {
            guard let a = format.audioCodec(try VideoSink.encoders(ffmpeg: ffmpeg, what: "video '\(path)'", kind: "A")) else {
                throw MediaError("video '\(path)': the installed ffmpeg has no audio encoder for \(format.rawValue.uppercased()) (AAC, Opus or PCM) for the soundtrack")
            }
            guard Posix.kind(audio.path) != nil else {
                throw MediaError("video '\(path)': the soundtrack '\(PathBytes.display(audio.path))' is gone")
            }
            audioArgs = ["-map", "0:v", "-map", "1:a:0", "-af", audio.filter] + a.args
                + ["-ar", String(Audio.rate), "-ac", "2", "-flags:a", "+bitexact", "-fflags", "+bitexact", "-map_metadata", "-1"]
        }
        self.audio = audio
        let stream = try makeStream()
        self.stream = stream
        do {
            scratch = stream.seekableDescriptor == nil ? try ScratchFile(inMemory: stream.inMemory, shown: path) : nil
        } catch {
            stream.abort()
            throw MediaError("video '\(path)': no scratch file for ffmpeg's container: \(error)")
        }
        container = stream.seekableDescriptor ?? scratch?.fd ?? -1
        var args = ["-hide_banner", "-nostdin", "-nostats", "-loglevel", "error",
                    "-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(paddedWidth)x\(paddedHeight)",
                    "-framerate", VideoSink.rate(fps), "-i", "pipe:0"]
        if let audio {
            args += ["-i", "file:" + audio.path] + audioArgs
        } else {
            args += ["-an"]
        }
        args += codec
        // RGB to YUV with the BT.709 matrix, limited range, and the tags
        // that say so (ffmpeg's default matrix would be BT.601, untagged).
        if let i = codec.firstIndex(of: "-pix_fmt"), i + 1 < codec.count {
            // (setparams: prores_ks tags only what the frames say.)
            args += ["-vf", "scale=out_color_matrix=bt709:out_range=tv,format=\(codec[i + 1]),"
                     + "setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709:range=tv"]
        }
        args += ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]
        if format == .mp4 || format == .mov {
            // The index first, so a player can start before the end.
            args += ["-movflags", "+faststart"]
        }
        // The file we created and hold open (the temporary file beside the
        // target, or the scratch file) is ffmpeg's descriptor 3, which it
        // reopens (seekable) through /proc: its output lands in that file
        // even if the folder is renamed meanwhile. The same frames give the
        // same bytes: no random track UIDs, no date, no muxer version in
        // the container.
        args += ["-fflags", "+bitexact", "-f", format.muxer, "-y", "file:/proc/self/fd/3"]

        var pipes: [Int32] = []
        func makePipe() throws -> (read: Int32, write: Int32) {
            let fds = try Posix.pipe(shown: "ffmpeg")
            pipes += [fds.read, fds.write]
            return fds
        }
        func closeAll() { for fd in pipes { Posix.closeQuietly(fd) } }
        let stdinPipe: (read: Int32, write: Int32), stderrPipe: (read: Int32, write: Int32)
        let devNull: Int32
        do {
            stdinPipe = try makePipe()
            stderrPipe = try makePipe()
            devNull = try Posix.open("/dev/null", O_WRONLY)
            pipes.append(devNull)
            child = try ChildProcess(ffmpeg, args, stdin: stdinPipe.read, stdout: devNull,
                                     stderr: stderrPipe.write, extra: container)
        } catch {
            closeAll()
            scratch?.close()
            stream.abort()
            throw MediaError("video '\(path)': cannot start ffmpeg (\(ffmpeg)): \(error)")
        }
        // Our copies of the child's ends must go, or a dead ffmpeg would
        // not give EPIPE and its output would never end.
        Posix.closeQuietly(stdinPipe.read)
        Posix.closeQuietly(stderrPipe.write)
        Posix.closeQuietly(devNull)
        input = stdinPipe.write
        stderrCollector = OutputCollector(stderrPipe.read)
        stderrCollector.start()
    }

    deinit { if !finished { abort() } }

    public var bytesWritten: Int? { stream.committedSize }

    /// Sends one frame to ffmpeg (blocks while ffmpeg catches up).
    public func write(_ frame: RGBAImage, index: Int) throws {
        guard !finished else { throw MediaError("video '\(path)': write after finish") }
        guard frame.width == width, frame.height == height else {
            throw MediaError("video '\(path)': frame \(index) is \(frame.width)×\(frame.height), not \(width)×\(height)")
        }
        if paddedWidth == width && paddedHeight == height && keepsAlpha {
            try frame.pixels.withUnsafeBytes { try send($0) }
        } else {
            // Repeat the last column / row to reach even dimensions, and
            // without alpha in the video, composite over black (a
            // transparent pixel's stored colour is no colour at all).
            let rowBytes = paddedWidth * 4
            let flatten = !keepsAlpha
            if rowBuffer.count != rowBytes * paddedHeight { rowBuffer = [UInt8](repeating: 0, count: rowBytes * paddedHeight) }
            frame.pixels.withUnsafeBufferPointer { src in
                rowBuffer.withUnsafeMutableBufferPointer { dst in
                    for y in 0..<paddedHeight {
                        let s = min(y, height - 1) * width * 4, d = y * rowBytes
                        for x in 0..<paddedWidth {
                            let si = s + min(x, width - 1) * 4, di = d + x * 4
                            let a = src[si + 3]
                            if !flatten || a == 255 {
                                dst[di] = src[si]; dst[di + 1] = src[si + 1]; dst[di + 2] = src[si + 2]; dst[di + 3] = a
                            } else {
                                let a16 = UInt16(a)
                                dst[di] = UInt8((UInt16(src[si]) * a16 + 127) / 255)
                                dst[di + 1] = UInt8((UInt16(src[si + 1]) * a16 + 127) / 255)
                                dst[di + 2] = UInt8((UInt16(src[si + 2]) * a16 + 127) / 255)
                                dst[di + 3] = 255
                            }
                        }
                    }
                }
            }
            try rowBuffer.withUnsafeBytes { try send($0) }
        }
        frames += 1
    }

    private func send(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try Posix.write(input, bytes, shown: "ffmpeg")
        } catch let e as PosixError {
            throw failure("ffmpeg stopped taking frames (\(Posix.reason(e.code)))")
        }
    }

    /// Closes ffmpeg's input, waits for it to finish the file, checks it,
    /// and renames it over the target.
    public func finish() throws {
        guard !finished else { return }
        if frames == 0 {
            abort()
            throw MediaError("video '\(path)': no frames to write")
        }
        closeInput()
        let status = child.wait()
        stderrCollector.wait()
        guard case .exited(0) = status else { throw failure("ffmpeg failed") }
        finished = true
        do {
            // Checked before anything reaches the output.
            try VideoContainer.verify(fd: container, format: format, shown: path)
            if let scratch {
                try scratch.copy(into: stream)
                scratch.close()
            }
            try stream.commit()
        } catch {
            scratch?.close()
            stream.abort()
            throw Self.describe(error, path: path)
        }
    }

    /// Kills ffmpeg and removes the temporary file; the target is untouched.
    public func abort() {
        guard !finished else { return }
        finished = true
        closeInput()
        child.kill()
        _ = child.wait()
        stderrCollector.wait()
        scratch?.close()
        stream.abort()
    }

    private func closeInput() {
        if input >= 0 { Posix.closeQuietly(input); input = -1 }
    }

    /// A commit failure as a message that names the video.
    private static func describe(_ error: Error, path: String) -> Error {
        if error is MediaError { return error }
        return MediaError("video '\(path)': \(error)")
    }

    /// Stops ffmpeg, removes the temporary file and describes the failure
    /// with ffmpeg's exit status and the last lines of its stderr.
    private func failure(_ what: String) -> MediaError {
        closeInput()
        // Give a failing ffmpeg a moment to say why, then stop it.
        if !child.waitExited(timeout: 2) { child.kill() }
        let status = child.wait()
        stderrCollector.wait()
        var cause = what
        var detail = ""
        switch status {
        case .signalled(let s): detail = " (ffmpeg was killed by signal \(s))"
        case .exited(let c) where c != 0: detail = " (ffmpeg's exit status \(c))"
        default: break
        }
        finished = true
        scratch?.close()
        stream.abort()
        // ffmpeg's own write failing is the cause to name first (a full
        // disk stops it mid-stream: we then only see it stop taking frames).
        if stderrCollector.text.contains("No space left on device") {
            cause = "ffmpeg could not write: No space left on device; is the disk full? The old output is kept"
        }
        // A file over the size limit (`ulimit -f`) stops ffmpeg with
        // SIGXFSZ (it leaves the signal at its default): the reason a
        // write of our own gives for it (EFBIG).
        if case .signalled(let s) = status, s == SIGXFSZ {
            cause = "ffmpeg could not write: \(Posix.reason(EFBIG)) (the file size limit, ulimit -f); the old output is kept"
            detail = ""
        }
        let lines = stderrCollector.text.split(whereSeparator: \.isNewline).suffix(6)
        var message = "video '\(path)': \(cause)\(detail)"
        // One clear line first, then what ffmpeg said.
        for line in lines { message += "\n  ffmpeg: " + line }
        return MediaError(message)
    }

    // MARK: - ffmpeg discovery

    private static let encoderCache = EncoderCache()

    /// How long `ffmpeg -encoders` may take: it answers in milliseconds; one
    /// that does not answer at all must not hang the run.
    static let probeTimeout = 10.0

    /// The stack limit ffmpeg needs (it crashed at 64 KiB encoding VP9,
    /// at 48 KiB H.264): with room.
    static let ffmpegStack = 256 << 10

    /// The video encoders the ffmpeg at `ffmpeg` has (`ffmpeg -encoders`).
    ///
    /// - Throws: `MediaError` starting with `what` when the probe cannot
    ///   tell: ffmpeg could not be started (too few processes or
    ///   descriptors), did not answer within `probeTimeout`, was stopped by
    ///   a signal, or failed; a list without the needed encoder is the
    ///   caller's error.
    static func encoders(ffmpeg: String, what: String, kind: Character = "V") throws -> Set<String> {
        if let known = encoderCache.get("\(kind) \(ffmpeg)") { return known }
        var names = Set<String>()
        // Through the one spawner: its own process group, killed with us,
        // and a deadline (an ffmpeg that never answers cannot hang the run).
        let r: ChildProcess.Output
        // (--timeout shortens the wait.)
        let limit = ChildProcess.answerTimeout(probeTimeout)
        switch ChildProcess.output(ffmpeg, ["-hide_banner", "-loglevel", "error", "-encoders"], timeout: limit.seconds) {
        case .success(let output): r = output
        case .failure(.timedOut):
            throw MediaError("\(what): '\(ffmpeg) -encoders' did not answer within \(limit.shown); is this ffmpeg working?")
        case .failure(.interrupted):
            throw MediaError("\(what): interrupted while asking ffmpeg for its encoders")
        case .failure(.notStarted):
            throw MediaError("\(what): '\(ffmpeg)' could not be run (too few processes or open files allowed?)")
        }
        guard r.status == .exited(0) else {
            let how: String
            switch r.status {
            case .exited(let code): how = "exit status \(code)"
            case .signalled(let sig): how = "killed by signal \(sig)"
            case .running: how = "still running"
            }
            throw MediaError("\(what): '\(ffmpeg) -encoders' failed (\(how)); is this ffmpeg working?")
        }
        for line in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n") {
            // " V....D libx264   libx264 H.264 / AVC ..."
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if f.count >= 2, f[0].hasPrefix(String(kind)) { names.insert(String(f[1])) }
        }
        encoderCache.set("\(kind) \(ffmpeg)", names)
        return names
    }

    /// `fps` for ffmpeg's `-framerate`: an integer, else the fraction
    /// whose frames last exactly APNG's delay (`APNGChunks.delay`: 29.97 is
    /// 2997/100, a third of a frame a second 1/3), so that n frames last
    /// n/fps where that is a fraction with 16-bit terms (a fraction over
    /// 1000 made 1/3 fps 333/1000, 3.003 s a frame).
    static func rate(_ fps: Double) -> String {
        if fps == fps.rounded() { return String(Int(fps)) }
        let (num, den) = APNGChunks.delay(fps: fps)
        return "\(den)/\(num)"
    }

    /// How long `n` frames at `fps` last in a video (seconds): `rate`'s
    /// fraction, in the whole milliseconds of WebM's timestamps.
    public static func duration(frames n: Int, fps: Double) -> Double {
        let seconds: Double
        if fps == fps.rounded() {
            seconds = Double(n) / fps
        } else {
            let (num, den) = APNGChunks.delay(fps: fps)
            seconds = Double(n) * Double(num) / Double(den)
        }
        return (seconds * 1000).rounded() / 1000
    }
}

/// Reads a pipe to its end on a background thread, keeping the text.
final class OutputCollector: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var data: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)
    private var started = false
    private var joined = false

    /// Takes ownership of the read end `fd`.
    init(_ fd: Int32) { self.fd = fd }

    func start() {
        started = SystemThread.detach { [self] in
            var buffer = [UInt8](repeating: 0, count: 16384)
            while true {
                let n = (try? buffer.withUnsafeMutableBytes { try Posix.read(fd, into: $0, shown: "ffmpeg") }) ?? 0
                if n <= 0 { break }
                lock.lock()
                data += buffer[0..<n]
                // Keep the tail only: ffmpeg can be chatty.
                if data.count > 64 * 1024 { data = Array(data.suffix(32 * 1024)) }
                lock.unlock()
            }
            Posix.closeQuietly(fd)
            done.signal()
        }
        // No thread: nobody reads ffmpeg's messages (its writes fail).
        if !started { Posix.closeQuietly(fd) }
    }

    /// Waits until the writer closed the pipe.
    func wait() {
        guard started, !joined else { return }
        done.wait()
        joined = true
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Checks that a video file ffmpeg wrote is complete: ffmpeg 5 exits with
/// status 0 even when its writes failed (a full disk), leaving a truncated
/// file. MP4/MOV: the top-level boxes must tile the file exactly and
/// include `moov` and `mdat`. Matroska/WebM: an EBML header, then a
/// Segment whose size (ffmpeg writes it last) ends exactly at the end of
/// the file.
enum VideoContainer {
    static func verify(fd: Int32, format: VideoFormat, shown: String) throws {
        let size = Int(try Posix.fstat(fd, shown: shown).st_size)
        func incomplete(_ why: String) -> MediaError {
            MediaError("video '\(shown)': ffmpeg's file is incomplete (\(why)); is the disk full? The old output is kept")
        }
        func read(_ count: Int, at offset: Int) throws -> [UInt8] {
            var b = [UInt8](repeating: 0, count: count)
            let n = try b.withUnsafeMutableBytes { try Posix.pread(fd, into: $0, at: offset, shown: shown) }
            return Array(b[0..<n])
        }
        guard size > 0 else { throw incomplete("it is empty") }
        switch format {
        case .mp4, .mov:
            var offset = 0
            var types = Set<String>()
            while offset < size {
                let h = try read(16, at: offset)
                guard h.count >= 8 else { throw incomplete("a box header is cut off at byte \(offset)") }
                var boxSize = h[0..<4].reduce(0) { $0 << 8 | Int($1) }
                var header = 8
                if boxSize == 1 {
                    guard h.count == 16 else { throw incomplete("a box header is cut off at byte \(offset)") }
                    boxSize = h[8..<16].reduce(0) { ($0 << 8) | Int($1) }
                    header = 16
                } else if boxSize == 0 {
                    boxSize = size - offset
                }
                guard boxSize >= header, boxSize <= size - offset else {
                    throw incomplete("a box at byte \(offset) runs past the end")
                }
                types.insert(String(decoding: h[4..<8], as: UTF8.self))
                offset += boxSize
            }
            guard types.contains("moov"), types.contains("mdat") || types.contains("moof") else {
                throw incomplete("no \(types.contains("moov") ? "mdat" : "moov") box")
            }
        case .webm, .mkv:
            let h = try read(64, at: 0)
            /// An EBML variable-size integer at `i`: (value, length, all ones).
            func vint(_ i: Int) -> (Int, Int, Bool)? {
                guard i < h.count, h[i] != 0 else { return nil }
                let len = h[i].leadingZeroBitCount + 1
                guard i + len <= h.count else { return nil }
                var v = Int(h[i]) & ((1 << (8 - len)) - 1)
                var ones = v == (1 << (8 - len)) - 1
                for k in 1..<len {
                    v = v << 8 | Int(h[i + k])
                    ones = ones && h[i + k] == 0xFF
                }
                return (v, len, ones)
            }
            guard h.count >= 4, h[0..<4] == [0x1A, 0x45, 0xDF, 0xA3], let (ebmlSize, l1, _) = vint(4) else {
                throw incomplete("no EBML header")
            }
            let seg = 4 + l1 + ebmlSize
            guard seg + 4 <= h.count, h[seg..<(seg + 4)] == [0x18, 0x53, 0x80, 0x67], let (segSize, l2, unknown) = vint(seg + 4) else {
                throw incomplete("no Segment after the header")
            }
            guard !unknown else { throw incomplete("the Segment's size was never written") }
            let end = seg + 4 + l2 + segSize
            guard end == size else { throw incomplete("the Segment ends at byte \(end), the file at \(size)") }
        }
    }
}

/// Encoder lists per ffmpeg path, so each run asks ffmpeg once.
final class EncoderCache: @unchecked Sendable {
    private let lock = NSLock()
    private var map: [String: Set<String>] = [:]
    func get(_ k: String) -> Set<String>? { lock.lock(); defer { lock.unlock() }; return map[k] }
    func set(_ k: String, _ v: Set<String>) { lock.lock(); map[k] = v; lock.unlock() }
}
