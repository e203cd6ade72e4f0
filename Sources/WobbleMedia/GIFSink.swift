import Dispatch
import Foundation
import WobbleCore
import WobbleSystem

/// Writes the frames as one animated GIF, streaming: each
/// frame is encoded and written as it comes, on a background thread, and
/// memory does not grow with the number of frames.
///
/// - One palette for the whole clip, quantised once with libimagequant from
///   `still` (the rendered frame with nothing moving): 255 colours plus a
///   reserved transparent index. Pixels equal to the still's keep the
///   still's Floyd–Steinberg-dithered index; changed pixels get their exact
///   nearest palette colour.
/// - Each frame after the first is the smallest rectangle that changed on
///   screen, unchanged pixels transparent ("do not dispose"), so only the
///   wobbling regions cost bytes. One GIF image per frame, an unchanged
///   frame as a 1×1 transparent image, each with its exact delay
///   (`delay(index:fps:)`).
/// - A pixel whose alpha is below 128 is transparent.
/// - `write` hands the frame to the encoder through a queue of three frames,
///   so rendering and encoding overlap; an encoding error is thrown by a
///   later `write` or by `finish`.
/// - The bytes go to a `ByteStream`: a file appears at its path only when
///   `finish()` succeeds (written beside it, then renamed); a pipe gets
///   them as they come; memory keeps them. The same frames give identical
///   bytes in all three.
public final class GIFSink: FrameSink {
    /// The output as the user named it (messages name it).
    public let path: String
    /// Frame width in pixels.
    public let width: Int
    /// Frame height in pixels.
    public let height: Int
    /// Frames per second, for the delays.
    public let fps: Double

    private let work: GIFWork
    /// The encoder's thread: three frames queued at most, so the renderer
    /// keeps going while the palette is built at the start.
    private let encoder = EncoderThread(depth: 3)
    private var lastIndex: Int?
    private var closed = false

    /// Opens `path` for writing (`ByteStreams.open`: a temporary file
    /// beside it, or a pipe) and starts building the palette from `still`
    /// in the background.
    public convenience init(path: String, width: Int, height: Int, fps: Double, loop: Int = 0, still: RGBAImage,
                            quality: Int? = nil, frameCount: Int? = nil) throws {
        try self.init(stream: try ByteStreams.open(path), shown: path, width: width, height: height, fps: fps, loop: loop,
                      still: still, quality: quality, frameCount: frameCount)
    }

    /// Writes the GIF to the stream `stream` makes (opened only once the
    /// parameters are checked; aborted by `abort()` or a failure) and
    /// starts building the palette from `still` in the background.
    ///
    /// - Parameters:
    ///   - width, height: the frame size (1...65535); `still` must have it.
    ///   - fps: frames per second (> 0), for the frame delays.
    ///   - loop: as in gifski and ffmpeg: 0 loops forever (the default),
    ///     -1 plays once (no NETSCAPE2.0 extension), N > 0 writes
    ///     a NETSCAPE2.0 loop count of N (up to 65535).
    ///   - still: the rendered frame with nothing moving, at output size:
    ///     the palette source.
    ///   - quality: `--quality` 1...100, nil for the defaults (255 colours,
    ///     `keepTolerance`); see `settings(quality:)`.
    ///   - frameCount: the frames the GIF will have, where known: a
    ///     one-frame GIF's palette is built faster
    ///     (`GIFPalette.OneFrame`).
    /// - Throws: `MediaError` for bad parameters or when the file cannot be
    ///   created.
    public init(stream: @autoclosure () throws -> ByteStream, shown path: String, width: Int, height: Int, fps: Double,
                loop: Int = 0, still: RGBAImage, quality: Int? = nil, frameCount: Int? = nil) throws {
        let what = "output '\(path)'"
        guard (1...65535).contains(width), (1...65535).contains(height) else {
            throw MediaError("\(what): a GIF is 1 to 65535 pixels wide and high, not \(width)x\(height)")
        }
        guard still.width == width, still.height == height else {
            throw MediaError("\(what): the still frame is \(still.width)x\(still.height), the GIF \(width)x\(height)")
        }
        guard fps.isFinite, fps > 0 else { throw MediaError("\(what): frame rate must be positive, not \(fps)") }
        guard (-1...65535).contains(loop) else {
            throw MediaError("\(what): GIF loop count must be -1 (play once), 0 (forever) or 1 to 65535, not \(loop)")
        }
        if let quality, !(1...100).contains(quality) {
            throw MediaError("\(what): quality must be 1 to 100, not \(quality)")
        }
        let (colors, tolerance) = GIFSink.settings(quality: quality)
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        let file = try stream()
        work = GIFWork(file: file, what: what)
        let work = self.work
        try encoder.queue(holdsASlot: false) {
            let cpu0 = threadCPUTime(), wall0 = monotonic()
            let palette = try GIFPalette(still: still, speed: GIFSink.quantizerSpeed, oneFrame: frameCount == 1,
                                         dithering: 1, maxColors: colors, what: what)
            work.palette = PaletteCost(colors: palette.colorCount, histogramEntries: palette.histogramEntries,
                                       cpuSeconds: threadCPUTime() - cpu0 + palette.helperCPUSeconds,
                                       wallSeconds: monotonic() - wall0)
            let writer = try GIFWriter(file: work.file, what: what, width: width, height: height,
                                       palette: palette.rgb, tableSize: palette.tableSize,
                                       background: Int(palette.transparent), loop: loop == -1 ? nil : loop)
            work.encoder = GIFEncoder(still: still, palette: palette, writer: writer, fps: fps,
                                      keepTolerance: tolerance)
        }
    }

    deinit { abort() }

    public var bytesWritten: Int? { work.file.committedSize }

    /// What building the palette cost, once it is built (read it after
    /// `finish`): its colours, the entries the quantiser was given and the
    /// CPU seconds of the whole step (histogram, quantiser, refinement, the
    /// still's dithered remap), its helper threads' included, and its wall
    /// seconds (less than the CPU where a second core helps).
    public struct PaletteCost: Sendable {
        public var colors: Int
        public var histogramEntries: Int
        public var cpuSeconds: Double
        public var wallSeconds: Double
    }

    /// See `PaletteCost`; nil until the palette is built.
    public var paletteCost: PaletteCost? { work.palette }

    /// Queues frame `index` (timeline index, increasing) for encoding; waits
    /// while three frames are already queued.
    /// - Throws: `MediaError` for a frame of the wrong size, an index not
    ///   after the previous one, use after `finish`/`abort`, or an error the
    ///   encoder met on an earlier frame.
    public func write(_ frame: RGBAImage, index: Int) throws {
        try write(frame, index: index, changed: nil)
    }

    /// As `write(_:index:)`; the encoder maps and diffs only `changed` (the
    /// boxes outside which the frame equals the one before; nil: all).
    public func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws {
        guard !closed else { throw MediaError("output '\(path)': the GIF is already finished or aborted") }
        try encoder.rethrow()
        guard frame.width == width, frame.height == height else {
            throw MediaError("output '\(path)': frame \(index) is \(frame.width)x\(frame.height), the GIF \(width)x\(height)")
        }
        if let last = lastIndex, index <= last {
            throw MediaError("output '\(path)': frame \(index) comes after frame \(last)")
        }
        lastIndex = index
        let work = self.work
        try encoder.queue { try work.encoder?.add(frame, index: index, changed: changed) }
    }

    /// Encodes what is queued, writes the trailer and moves the file into
    /// place. On failure nothing is left behind (the target is untouched).
    public func finish() throws {
        guard !closed else { throw MediaError("output '\(path)': the GIF is already finished or aborted") }
        guard lastIndex != nil else {
            abort()
            throw MediaError("output '\(path)': no frame to write")
        }
        closed = true
        let work = self.work
        do {
            try encoder.finish {
                try work.encoder?.finish()
                work.encoder = nil
                try work.file.commit()
            }
        } catch {
            encoder.afterward { work.discard() }
            throw error
        }
    }

    /// Stops encoding and removes the temporary file; the target stays as
    /// it was. Idempotent.
    public func abort() {
        closed = true
        let work = self.work
        encoder.cancel()
        encoder.afterward { work.discard() }
    }

    /// libimagequant's speed for the palette (1 best ... 10 fastest). With
    /// every distinct colour of a 640×480 photo, speed 2 took 0.25 s,
    /// speed 1 0.30 s for +0.03 dB, speed 4 0.17 s for -0.1 dB. On the
    /// cubes' histogram (`GIFPalette.Histogram`) the quantiser takes
    /// 85–90 ms of the 480×360 latte still's 140 ms (wall); speed 3 saves
    /// a quarter of it but loses 0.03 dB on `Scripts/bench-gif.sh`, even
    /// with five rounds of refinement instead of three. The still's
    /// remap uses it too: at speed 1 or 2 libimagequant dithers less on
    /// edges and noise (speed 6, without that: 38.94 dB against 40.52,
    /// 4% larger, for the one-frame still).
    static let quantizerSpeed: Int32 = 2

    /// How much worse (squared RGB distance) the colour already on screen
    /// may be than the changed pixel's nearest palette colour and still be
    /// kept (written as "unchanged", i.e. transparent). Tiny colour
    /// changes at the edges of a wobble then cost nothing: on the benchmark
    /// clip 48 made the file 40% smaller for 0.25 dB of PSNR.
    static let keepTolerance: Int32 = 48

    /// `--quality Q` (1...100) as palette size and keep tolerance: the
    /// palette grows from 16 colours at 1 to 255 from 75 on; the tolerance
    /// (how far, in squared RGB distance, a changed pixel may stay as it
    /// was) falls from 480 at 1 to 0 at 100. nil (no `--quality`) is the
    /// default: 255 colours and `keepTolerance`, which Q = 75 also gives.
    public static func settings(quality: Int?) -> (colors: Int, tolerance: Int32) {
        guard let q = quality.map({ min(100, max(1, $0)) }) else { return (255, keepTolerance) }
        let colors = q >= 75 ? 255 : 16 + (255 - 16) * (q - 1) / 74
        let tolerance: Int32
        if q >= 75 {
            tolerance = Int32(48 * (100 - q) / 25)
        } else {
            tolerance = Int32(48 + (480 - 48) * (75 - q) / 74)
        }
        return (colors, tolerance)
    }

    /// The delay of frame `index` in centiseconds:
    /// `round(100(k+1)/fps) - round(100k/fps)` (half away from zero): frame
    /// k starts at the centisecond nearest to k/fps and any run of frames
    /// lasts exactly its length, rounded. At 30 fps that is 3, 4, 3, 3, 4, …
    /// (a prose example of "3, 3, 4" would be floor(); the formula
    /// is followed: it is the more accurate). Limited to
    /// 0...65535 (the GIF field); above 100 fps some delays are 0, which
    /// many viewers show slower.
    public static func delay(index: Int, fps: Double) -> Int {
        let a = (100 * (Double(index) + 1) / fps).rounded()   // (index + 1 in Int overflows at Int.max)
        let b = (100 * Double(index) / fps).rounded()
        return Int(clamping: a - b, to: 0...65535, rounding: .toNearestOrEven)
    }

    /// The delays of `frameCount` frames starting at timeline index
    /// `firstIndex` (see `delay(index:fps:)`).
    public static func delays(frameCount: Int, fps: Double, firstIndex: Int = 0) -> [Int] {
        (0..<max(frameCount, 0)).map { delay(index: firstIndex + $0, fps: fps) }
    }
}

/// The encoder's state, touched only on the sink's encoder thread.
private final class GIFWork: @unchecked Sendable {
    let file: ByteStream
    let what: String
    var encoder: GIFEncoder?
    /// Set on the encoder thread when the palette is built.
    var palette: GIFSink.PaletteCost?

    init(file: ByteStream, what: String) {
        self.file = file
        self.what = what
    }

    /// Frees the encoder and removes the temporary file (a no-op after a
    /// successful commit).
    func discard() {
        encoder?.discard()
        encoder = nil
        file.abort()
    }
}
