import Foundation
import WobbleCore
#if canImport(Glibc)
import Glibc
#endif

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
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
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

    /// True when the video keeps the alpha channel (WebM, yuva420p).
    var keepsAlpha: Bool { self == .webm }
}

/// Writes frames as a video by piping raw RGBA frames to `ffmpeg` (found
/// on `PATH`). `.mp4` (and `.mov`, `.mkv`) is H.264 yuv420p (MPEG-4 part 2
/// when the installed ffmpeg lacks libx264); an odd width or height is
/// padded by one pixel that repeats the last column or row, and frames are
/// composited over black (these videos have no alpha). `.webm` is VP9
/// (VP8 without libvpx-vp9) in yuva420p, which keeps the alpha channel.
///
/// ffmpeg writes a temporary file beside the target (registered in
/// `TemporaryPaths`); `finish()` waits for it and renames the file into
/// place with the usual permissions; `abort()` kills ffmpeg and removes the
/// temporary file. When ffmpeg fails, the error ends with the last lines of
/// its stderr. SIGPIPE is ignored process-wide (a dying ffmpeg must be an
/// error, not a crash).
public final class VideoSink: FrameSink {
    /// The target path.
    public let path: String
    /// Frame size the caller writes.
    public let width: Int
    public let height: Int
    /// Frames per second.
    public let fps: Double
    /// The container and codec family.
    public let format: VideoFormat
    /// The encoder ffmpeg uses (`libx264`, `libvpx-vp9`, …).
    public let encoder: String

    private let file: AtomicFile
    private let process: Process
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
    /// installed, the target folder does not exist or ffmpeg cannot start.
    public init(path: String, width: Int, height: Int, fps: Double, format: VideoFormat? = nil) throws {
        guard width > 0, height > 0, width <= 16384, height <= 16384 else {
            throw MediaError("video '\(path)': bad frame size \(width)×\(height)")
        }
        guard fps.isFinite, fps > 0 else { throw MediaError("video '\(path)': bad frame rate \(fps)") }
        guard let ffmpeg = VideoSink.findExecutable("ffmpeg") else {
            throw MediaError("video output needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg); write a .gif or PNG frames instead")
        }
        signal(SIGPIPE, SIG_IGN)
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        let format = format ?? VideoFormat(path: path) ?? .mp4
        self.format = format
        paddedWidth = format.needsEvenSize ? (width + 1) & ~1 : width
        paddedHeight = format.needsEvenSize ? (height + 1) & ~1 : height
        let encoders = VideoSink.encoders(ffmpeg: ffmpeg)
        let codec: [String]
        switch format {
        case .webm:
            if encoders.contains("libvpx-vp9") {
                encoder = "libvpx-vp9"
                codec = ["-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", "-crf", "30", "-b:v", "0",
                         "-deadline", "good", "-cpu-used", "4", "-row-mt", "1"]
            } else if encoders.contains("libvpx") {
                encoder = "libvpx"
                codec = ["-c:v", "libvpx", "-pix_fmt", "yuva420p", "-crf", "10", "-b:v", "4M", "-auto-alt-ref", "0"]
            } else {
                throw MediaError("video '\(path)': the installed ffmpeg has no VP9 or VP8 encoder (libvpx); write .mp4, a .gif or PNG frames instead")
            }
        case .mp4, .mov, .mkv:
            if encoders.contains("libx264") {
                encoder = "libx264"
                codec = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18", "-preset", "medium"]
            } else if encoders.contains("mpeg4") {
                encoder = "mpeg4"
                codec = ["-c:v", "mpeg4", "-pix_fmt", "yuv420p", "-q:v", "2"]
            } else {
                throw MediaError("video '\(path)': the installed ffmpeg has no H.264 (libx264) or MPEG-4 encoder; write .webm, a .gif or PNG frames instead")
            }
        }
        file = try AtomicFile(target: path)
        var args = ["-hide_banner", "-nostats", "-loglevel", "error",
                    "-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(paddedWidth)x\(paddedHeight)",
                    "-framerate", VideoSink.rate(fps), "-i", "pipe:0", "-an"]
        args += codec
        if format == .mp4 || format == .mov { args += ["-movflags", "+faststart"] }
        args += ["-f", format.muxer, "-y", file.temporaryPath]

        let p = Process()
        p.executableURL = URL(fileURLWithPath: ffmpeg)
        p.arguments = args
        let stdinPipe = Pipe(), stderrPipe = Pipe()
        p.standardInput = stdinPipe
        p.standardOutput = FileHandle.nullDevice
        p.standardError = stderrPipe
        process = p
        stderrCollector = OutputCollector(stderrPipe.fileHandleForReading)
        do {
            try p.run()
        } catch {
            file.abort()
            throw MediaError("video '\(path)': cannot start ffmpeg (\(ffmpeg)): \(error.localizedDescription)")
        }
        // Our copy of the read end must go, or a dead ffmpeg would not
        // give EPIPE.
        try? stdinPipe.fileHandleForReading.close()
        try? stderrPipe.fileHandleForWriting.close()
        input = fcntl(stdinPipe.fileHandleForWriting.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        try? stdinPipe.fileHandleForWriting.close()
        stderrCollector.start()
    }

    deinit { if !finished { abort() } }

    /// Sends one frame to ffmpeg (blocks while ffmpeg catches up).
    public func write(_ frame: RGBAImage, index: Int) throws {
        guard !finished else { throw MediaError("video '\(path)': write after finish") }
        guard frame.width == width, frame.height == height else {
            throw MediaError("video '\(path)': frame \(index) is \(frame.width)×\(frame.height), not \(width)×\(height)")
        }
        if paddedWidth == width && paddedHeight == height && format.keepsAlpha {
            try frame.pixels.withUnsafeBytes { try send($0) }
        } else {
            // Repeat the last column / row to reach even dimensions, and
            // without alpha in the video, composite over black (a
            // transparent pixel's stored colour is no colour at all).
            let rowBytes = paddedWidth * 4
            let flatten = !format.keepsAlpha
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
        if let e = writeAll(input, bytes) {
            throw failure("ffmpeg stopped taking frames (\(String(cString: strerror(e))))")
        }
    }

    /// Closes ffmpeg's input, waits for it to finish the file, and renames
    /// the file over the target.
    public func finish() throws {
        guard !finished else { return }
        if frames == 0 {
            abort()
            throw MediaError("video '\(path)': no frames to write")
        }
        closeInput()
        process.waitUntilExit()
        stderrCollector.wait()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw failure("ffmpeg failed")
        }
        finished = true
        try file.commit()
    }

    /// Kills ffmpeg and removes the temporary file; the target is untouched.
    public func abort() {
        guard !finished else { return }
        finished = true
        closeInput()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        stderrCollector.wait()
        file.abort()
    }

    private func closeInput() {
        if input >= 0 { close(input); input = -1 }
    }

    /// Stops ffmpeg, removes the temporary file and describes the failure
    /// with ffmpeg's exit status and the last lines of its stderr.
    private func failure(_ what: String) -> MediaError {
        closeInput()
        if process.isRunning {
            // Give a failing ffmpeg a moment to say why, then stop it.
            let deadline = Date().addingTimeInterval(2)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        stderrCollector.wait()
        var status = ""
        if process.terminationReason == .uncaughtSignal {
            status = " (killed by signal \(process.terminationStatus))"
        } else if process.terminationStatus != 0 {
            status = " (exit status \(process.terminationStatus))"
        }
        finished = true
        file.abort()
        let lines = stderrCollector.text.split(whereSeparator: \.isNewline).suffix(6)
        var message = "video '\(path)': \(what)\(status)"
        // One clear line first, then what ffmpeg said.
        for line in lines { message += "\n  ffmpeg: " + line }
        return MediaError(message)
    }

    // MARK: - ffmpeg discovery

    /// The first executable `name` on `PATH`, or nil.
    public static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 {
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDir), !isDir.boolValue {
                    return candidate
                }
            }
        }
        return nil
    }

    private static let encoderCache = EncoderCache()

    /// The video encoders the ffmpeg at `ffmpeg` has (`ffmpeg -encoders`).
    static func encoders(ffmpeg: String) -> Set<String> {
        if let known = encoderCache.get(ffmpeg) { return known }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ffmpeg)
        p.arguments = ["-hide_banner", "-loglevel", "error", "-encoders"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        var names = Set<String>()
        if (try? p.run()) != nil {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                // " V....D libx264   libx264 H.264 / AVC ..."
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                if f.count >= 2, f[0].hasPrefix("V") { names.insert(String(f[1])) }
            }
        }
        encoderCache.set(ffmpeg, names)
        return names
    }

    /// `fps` for ffmpeg's `-framerate`: an integer, else a fraction over 1000.
    static func rate(_ fps: Double) -> String {
        if fps == fps.rounded() { return String(Int(fps)) }
        return "\(Int((fps * 1000).rounded()))/1000"
    }
}

/// Reads a pipe to its end on a background thread, keeping the text.
final class OutputCollector: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    private var started = false
    private var joined = false

    init(_ handle: FileHandle) { self.handle = handle }

    func start() {
        started = true
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                data.append(chunk)
                // Keep the tail only: ffmpeg can be chatty.
                if data.count > 64 * 1024 { data = data.suffix(32 * 1024) }
                lock.unlock()
            }
            done.signal()
        }
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

/// Encoder lists per ffmpeg path, so each run asks ffmpeg once.
final class EncoderCache: @unchecked Sendable {
    private let lock = NSLock()
    private var map: [String: Set<String>] = [:]
    func get(_ k: String) -> Set<String>? { lock.lock(); defer { lock.unlock() }; return map[k] }
    func set(_ k: String, _ v: Set<String>) { lock.lock(); map[k] = v; lock.unlock() }
}
