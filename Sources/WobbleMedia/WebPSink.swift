import WobbleCore
import WobbleSystem

/// Writes the frames as one animated WebP (`WebPAnimation`): lossy with
/// alpha by default, lossless at quality 100. Frame `k` starts at
/// `AnimationTiming.millisecond(k)` after the first frame written, so the
/// durations are whole milliseconds that add up to the clip's length.
/// `loop` is `--loop` (0 forever, -1 once, N repeat N more times).
///
/// Each frame is encoded as it comes, on the encoder's own thread beside the
/// producer's (`EncoderThread`: three frames queued at most, an encoding
/// error thrown by a later `write` or by `finish`; the encoder keeps only
/// the changed rectangle of each, compressed); `finish()` writes the whole file to its
/// `ByteStream`: a file beside the target renamed over it (`AtomicFile`),
/// a pipe or device in place, or memory.
public final class WebPSink: FrameSink {
    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Double
    private let file: ByteStream
    /// Touched only on the encoder thread once the sink is made.
    private let work: WebPWork
    private let encoder = EncoderThread(depth: 3)
    private var firstIndex: Int?
    private var lastIndex: Int?
    private var written = 0
    private var closed = false

    /// Writes `path` (`ByteStreams.open`).
    public convenience init(path: String, width: Int, height: Int, fps: Double, loop: Int = 0, quality: Int? = nil) throws {
        try self.init(stream: try ByteStreams.open(path), shown: path, width: width, height: height, fps: fps, loop: loop,
                      quality: quality)
    }

    /// Writes to the stream `stream` makes (opened once the parameters are
    /// checked); `shown` names the output in messages.
    public init(stream: @autoclosure () throws -> ByteStream, shown path: String, width: Int, height: Int, fps: Double,
                loop: Int = 0, quality: Int? = nil) throws {
        let what = "output '\(path)'"
        guard fps.isFinite, fps > 0 else { throw MediaError("\(what): frame rate must be positive, not \(fps)") }
        if let quality, !(1...100).contains(quality) {
            throw MediaError("\(what): quality must be 1 to 100, not \(quality)")
        }
        guard loop <= AnimationTiming.maxWebPLoop else {
            throw MediaError("\(what): a WebP plays at most \(AnimationTiming.maxWebPLoop + 1) times, not \(loop + 1)")
        }
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        let animation = try WebPAnimation(width: width, height: height, settings: .init(quality: quality),
                                          loopCount: AnimationTiming.plays(loop: loop), what: what)
        file = try stream()
        work = WebPWork(animation)
    }

    deinit { abort() }

    public var bytesWritten: Int? { file.committedSize }

    public func write(_ frame: RGBAImage, index: Int) throws {
        guard !closed else { throw MediaError("output '\(path)': the WebP is already finished or aborted") }
        if let last = lastIndex, index <= last {
            throw MediaError("output '\(path)': frame \(index) comes after frame \(last)")
        }
        let first = firstIndex ?? index
        firstIndex = first
        lastIndex = index
        let work = self.work, timestamp = start(index, first)
        do {
            try encoder.queue { try work.animation?.add(frame, timestamp: timestamp) }
            written += 1
        } catch {
            abort()
            throw error
        }
    }

    public func finish() throws {
        guard !closed else { throw MediaError("output '\(path)': the WebP is already finished or aborted") }
        guard let first = firstIndex, let last = lastIndex else {
            abort()
            throw MediaError("output '\(path)': no frame to write")
        }
        closed = true
        let work = self.work, file = self.file, written = self.written
        let end = start(last + 1, first), firstEnd = start(first + 1, first)
        do {
            try encoder.finish {
                guard let animation = work.animation else { return }
                let bytes = try animation.assemble(end: end, firstEnd: firstEnd, frames: written)
                work.close()
                try file.write(bytes)
                try file.commit()
            }
        } catch {
            encoder.afterward { work.close() }
            file.abort()
            throw error
        }
    }

    public func abort() {
        closed = true
        let work = self.work
        encoder.cancel()
        encoder.afterward { work.close() }
        file.abort()
    }

    /// Frame `index`'s start in ms after frame `first`'s.
    private func start(_ index: Int, _ first: Int) -> Int {
        AnimationTiming.millisecond(index: index, fps: fps) - AnimationTiming.millisecond(index: first, fps: fps)
    }
}

/// The WebP sink's encoder, touched only on its encoder thread (or on the
/// caller's while that thread is idle).
private final class WebPWork: @unchecked Sendable {
    var animation: WebPAnimation?

    init(_ animation: WebPAnimation) { self.animation = animation }

    /// Frees the encoder (once).
    func close() {
        animation?.close()
        animation = nil
    }
}

/// The frames of an animated WebP as its file stores them: each `ANMF`
/// chunk's size (its 8-byte header and padding included) and duration
/// (ms). Frames libwebp merged into the one before (equal pixels) are not
/// there; their time is in that frame's duration. Nil where `file` is not
/// a RIFF WebP or a chunk runs past its end.
public enum WebPFrames {
    public static func sizes(_ file: [UInt8]) -> [(bytes: Int, duration: Int)]? {
        guard file.count >= 12, file[0..<4].elementsEqual("RIFF".utf8), file[8..<12].elementsEqual("WEBP".utf8) else { return nil }
        func le(_ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(file[i + $1]) << (8 * $1) } }
        var out: [(bytes: Int, duration: Int)] = []
        var i = 12
        while i + 8 <= file.count {
            let size = le(i + 4, 4), padded = size + (size & 1)
            guard i + 8 + size <= file.count else { return nil }
            if file[i..<(i + 4)].elementsEqual("ANMF".utf8) {
                // X, Y, width − 1, height − 1 (3 bytes each), then the duration (3 bytes).
                guard size >= 16 else { return nil }
                out.append((bytes: 8 + padded, duration: le(i + 8 + 12, 3)))
            }
            i += 8 + padded
        }
        return out
    }
}
