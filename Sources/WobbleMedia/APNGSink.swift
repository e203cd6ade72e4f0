import Foundation
import WobbleCore
import WobbleSystem

/// Writes the frames as one APNG (animated PNG): lossless RGBA with 8-bit
/// alpha, readable by browsers, Pillow and ffmpeg, and shown as its first
/// frame by a viewer that knows only PNG.
///
/// libpng compresses each frame (`PNGCodec`: filtered rows, zlib), and the
/// three APNG chunks are ours (Debian's libpng has no APNG API): `acTL`
/// (frame count, plays) before the first `IDAT`; per frame an `fcTL`
/// (rectangle, delay, dispose and blend) and its data (`IDAT` for the
/// first frame, `fdAT` after), sequence numbers shared by `fcTL` and
/// `fdAT` from 0.
///
/// - The first frame is the whole canvas; each later one is the smallest
///   rectangle that changed since the frame before, an unchanged frame a
///   1×1 transparent pixel blended over (every frame keeps its delay). The
///   rectangle replaces the canvas there ("source"), or, when every pixel
///   written is opaque or fully transparent (the unchanged ones) and it
///   compresses smaller, is blended over it: a blend whose result cannot
///   depend on a decoder's rounding. Every frame is disposed "none" (the
///   canvas keeps it): "previous" (the canvas goes back to what it was
///   before the frame) saved a few bytes where a wobble swings back to the
///   still picture, but decoders get it wrong (Pillow drew such frames one
///   to eleven levels off; ImageSharp, zune and image-rs had the same kind
///   of bug), so it is never written.
/// - The file is tagged sRGB (an `sRGB` chunk, perceptual), as every
///   input image is converted to sRGB on load.
/// - Each frame's delay is exactly 1/fps (`delay_num/delay_den`, the best
///   fraction with 16-bit terms where 1/fps has none).
/// - Streaming: a frame is compressed and written as it comes; memory is
///   two frames (the canvas, the new one).
///   The frame count is written first, so it must be known (`frameCount`).
/// - The bytes go to a `ByteStream`: a file appears at `path` only when
///   `finish()` succeeds (`AtomicFile`); a pipe or device is written in
///   place; memory keeps them.
public final class APNGSink: FrameSink {
    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Double
    public let frameCount: Int
    private let file: ByteStream
    private let plays: Int
    private let level: Int
    /// What a decoder shows after the frames written so far (nil before
    /// the first frame).
    private var canvas: RGBAImage?
    private var sequence: UInt32 = 0
    private var written = 0
    private var lastIndex: Int?
    private var closed = false

    /// The zlib levels, with all five filters: 9 for the first frame (the
    /// whole picture, once), 6 for the rectangles after it (level 9 there
    /// made the benchmark clip 0.8% smaller and its encoding slower than
    /// ffmpeg's apng encoder).
    public static let firstFrameLevel = 9
    public static let compressionLevel = 6

    /// - Parameters:
    ///   - frameCount: the frames that will be written (the `acTL` count).
    ///   - loop: `--loop` (0 forever, -1 once, N repeat N more times).
    public convenience init(path: String, width: Int, height: Int, fps: Double, frameCount: Int, loop: Int = 0) throws {
        try self.init(stream: try ByteStreams.open(path), shown: path, width: width, height: height, fps: fps,
                      frameCount: frameCount, loop: loop)
    }

    /// Writes to the stream `stream` makes (opened once the parameters are
    /// checked); `shown` names the output in messages.
    public init(stream: @autoclosure () throws -> ByteStream, shown path: String, width: Int, height: Int, fps: Double,
                frameCount: Int, loop: Int = 0) throws {
        let what = "output '\(path)'"
        guard (1...65535).contains(width), (1...65535).contains(height) else {
            throw MediaError("\(what): an APNG here is 1 to 65535 pixels wide and high, not \(width)x\(height)")
        }
        guard fps.isFinite, fps > 0 else { throw MediaError("\(what): frame rate must be positive, not \(fps)") }
        guard frameCount >= 1, frameCount <= Int(Int32.max) / 2 else {
            throw MediaError("\(what): an APNG holds 1 to \(Int32.max / 2) frames, not \(frameCount)")
        }
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.frameCount = frameCount
        plays = AnimationTiming.plays(loop: loop)
        level = Self.compressionLevel
        file = try stream()
    }

    deinit { abort() }

    public var bytesWritten: Int? { file.committedSize }

    public func write(_ frame: RGBAImage, index: Int) throws {
        try write(frame, index: index, changed: nil)
    }

    /// As `write(_:index:)`; the changed rectangles are looked for only in
    /// `changed` (the boxes outside which the frame equals the one before;
    /// nil: all).
    public func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws {
        guard !closed else { throw MediaError("output '\(path)': the APNG is already finished or aborted") }
        guard frame.width == width, frame.height == height else {
            throw MediaError("output '\(path)': frame \(index) is \(frame.width)x\(frame.height), the APNG \(width)x\(height)")
        }
        if let last = lastIndex, index <= last {
            throw MediaError("output '\(path)': frame \(index) comes after frame \(last)")
        }
        guard written < frameCount else {
            throw MediaError("output '\(path)': more than the \(frameCount) frames announced")
        }
        lastIndex = index
        do {
            let whole = PixelRect(width: width, height: height)
            try add(frame, changed: changed.map { $0.reduce(PixelRect(x0: 0, y0: 0, x1: 0, y1: 0)) { $0.union($1) }
                .clipped(width: width, height: height) } ?? whole)
            written += 1
        } catch {
            abort()
            throw error
        }
    }

    public func finish() throws {
        guard !closed else { throw MediaError("output '\(path)': the APNG is already finished or aborted") }
        closed = true
        do {
            guard written == frameCount else {
                throw MediaError("output '\(path)': \(written) frames written, \(frameCount) announced")
            }
            try file.write(APNGChunks.chunk("IEND", []))
            try file.commit()
            canvas = nil
        } catch {
            file.abort()
            throw error
        }
    }

    public func abort() {
        closed = true
        canvas = nil
        file.abort()
    }

    // MARK: - Frames

    /// The smallest rectangle where two frames differ, and whether every
    /// pixel that differs is opaque in `frame`; nil when they are equal.
    struct Changed {
        var box: PixelRect
        var allOpaque: Bool
    }

    /// Looked for in `box` only, which must hold every pixel that differs.
    private func changed(_ frame: RGBAImage, from canvas: RGBAImage, within box: PixelRect) -> Changed? {
        let w = width
        var minX = w, minY = height, maxX = -1, maxY = -1
        var allOpaque = true
        frame.pixels.withUnsafeBytes { fb in
            canvas.pixels.withUnsafeBytes { cb in
                let f = fb.bindMemory(to: UInt32.self), c = cb.bindMemory(to: UInt32.self)
                let fp = fb.bindMemory(to: UInt8.self)
                for y in box.y0..<box.y1 {
                    let row = y * w
                    if memcmp(fb.baseAddress! + (row + box.x0) * 4, cb.baseAddress! + (row + box.x0) * 4, box.width * 4) == 0 { continue }
                    for x in box.x0..<box.x1 where f[row + x] != c[row + x] {
                        minX = min(minX, x); maxX = max(maxX, x)
                        minY = min(minY, y); maxY = max(maxY, y)
                        if fp[(row + x) * 4 + 3] != 255 { allOpaque = false }
                    }
                }
            }
        }
        return maxX < 0 ? nil : Changed(box: PixelRect(x0: minX, y0: minY, x1: maxX + 1, y1: maxY + 1), allOpaque: allOpaque)
    }

    /// Writes the next frame: the first whole, each later one as the
    /// rectangle where it differs from the canvas (the frame before).
    /// `changed`: a box holding every pixel where `frame` differs from the
    /// frame before it.
    private func add(_ frame: RGBAImage, changed: PixelRect) throws {
        guard let canvas else {
            // The first frame: the whole canvas (IDAT).
            let png = APNGChunks.split(PNGCodec.encode(frame, level: Self.firstFrameLevel))
            var out = APNGChunks.signature
            out += APNGChunks.chunk("IHDR", png.header)
            // The colours are sRGB (inputs are converted on load); intent 0, perceptual.
            out += APNGChunks.chunk("sRGB", [0])
            out += APNGChunks.chunk("acTL", APNGChunks.be32(UInt32(frameCount)) + APNGChunks.be32(UInt32(plays)))
            out += frameControl(x: 0, y: 0, width: width, height: height, blendOver: false)
            for part in APNGChunks.parts(png.data) { out += APNGChunks.chunk("IDAT", part) }
            try file.write(out)
            self.canvas = frame
            return
        }
        try emit(frame, rect: self.changed(frame, from: canvas, within: changed), over: canvas)
        self.canvas = frame
    }

    /// Writes `frame` as its rectangle `rect` against `canvas` (nil: no
    /// change, one transparent pixel blended over).
    private func emit(_ frame: RGBAImage, rect: Changed?, over canvas: RGBAImage) throws {
        let w = width
        var width = 1, height = 1, x = 0, y = 0, over = true
        var png: [UInt8]
        if let r = rect {
            width = r.box.width
            height = r.box.height
            (x, y) = (r.box.x0, r.box.y0)
            /// The rectangle's pixels; with `blank`, those equal to the canvas's transparent (0).
            func pixels(blank: Bool) -> RGBAImage {
                var px = [UInt8](repeating: 0, count: width * height * 4)
                frame.pixels.withUnsafeBytes { fb in
                    canvas.pixels.withUnsafeBytes { cb in
                        px.withUnsafeMutableBytes { ob in
                            let f = fb.bindMemory(to: UInt32.self), c = cb.bindMemory(to: UInt32.self)
                            let o = ob.bindMemory(to: UInt32.self)
                            for row in 0..<height {
                                let src = (r.box.y0 + row) * w + r.box.x0
                                for col in 0..<width {
                                    let v = f[src + col]
                                    o[row * width + col] = blank && v == c[src + col] ? 0 : v
                                }
                            }
                        }
                    }
                }
                return RGBAImage(width: width, height: height, pixels: px)
            }
            // Replacing the rectangle ("source") is always exact; blending
            // it over the canvas with unchanged pixels transparent is exact
            // in every decoder only when every pixel written has alpha 0
            // (the canvas stays) or 255 (the pixel replaces it): a partly
            // transparent one would be blended with each decoder's own
            // rounding (Pillow's differs from ffmpeg's). That is checked on
            // the very bytes that would be written. The smaller file wins.
            // (Both encoded at once, on two threads.)
            let level = self.level
            let blanked = r.allOpaque ? pixels(blank: true) : nil
            let images = [pixels(blank: false)] + (blanked.flatMap { APNGSink.alphaIsBinary($0) ? [$0] : nil } ?? [])
            let tries = images.indices.map { $0 == 1 }
            let results = ResultSlots(tries.count, initial: [UInt8]())
            Parallel.run(tries.count) { i in
                results.set(i, APNGChunks.split(PNGCodec.encode(images[i], level: level)).data)
            }
            png = results.get(0)
            over = false
            if tries.count == 2, results.get(1).count < png.count { png = results.get(1); over = true }
        } else {
            png = APNGChunks.split(PNGCodec.encode(RGBAImage(width: 1, height: 1, pixels: [0, 0, 0, 0]), level: level)).data
        }
        var out = frameControl(x: x, y: y, width: width, height: height, blendOver: over)
        for part in APNGChunks.parts(png) {
            out += APNGChunks.chunk("fdAT", APNGChunks.be32(sequence) + part)
            sequence += 1
        }
        try file.write(out)
    }

    /// True when every pixel of `image` is fully transparent or opaque:
    /// blending it OVER a canvas is then the same in every decoder.
    static func alphaIsBinary(_ image: RGBAImage) -> Bool {
        image.pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 0 && p[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }

    /// An `fcTL` chunk (and the next sequence number), dispose_op none.
    private func frameControl(x: Int, y: Int, width: Int, height: Int, blendOver: Bool) -> [UInt8] {
        let (num, den) = APNGChunks.delay(fps: fps)
        var body = APNGChunks.be32(sequence)
        body += APNGChunks.be32(UInt32(width)) + APNGChunks.be32(UInt32(height))
        body += APNGChunks.be32(UInt32(x)) + APNGChunks.be32(UInt32(y))
        body += [UInt8(num >> 8), UInt8(num & 0xFF), UInt8(den >> 8), UInt8(den & 0xFF)]
        body += [0, blendOver ? 1 : 0]   // dispose_op none (0, never previous); blend_op source (0) or over (1)
        sequence += 1
        return APNGChunks.chunk("fcTL", body)
    }
}

/// PNG chunk plumbing for `APNGSink`.
enum APNGChunks {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    /// One chunk: length, type, data, CRC of type and data.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let t = Array(type.utf8)
        var crc = CRC32()
        crc.update(t)
        crc.update(data)
        return be32(UInt32(data.count)) + t + data + be32(crc.value)
    }

    /// The IHDR body and the concatenated IDAT data of a PNG libpng wrote.
    static func split(_ png: [UInt8]) -> (header: [UInt8], data: [UInt8]) {
        var header: [UInt8] = [], data: [UInt8] = []
        var i = signature.count
        while i + 8 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            let type = String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self)
            let start = i + 8, end = min(start + length, png.count)
            if type == "IHDR" { header = Array(png[start..<end]) }
            if type == "IDAT" { data += png[start..<end] }
            i = start + length + 4
        }
        return (header, data)
    }

    /// `data` in chunk-sized parts (at most 1 MiB each).
    static func parts(_ data: [UInt8]) -> [ArraySlice<UInt8>] {
        let size = 1 << 20
        return stride(from: 0, to: max(data.count, 1), by: size).map { data[$0..<min($0 + size, data.count)] }
    }

    static func chunk(_ type: String, _ data: ArraySlice<UInt8>) -> [UInt8] { chunk(type, Array(data)) }

    /// 1/fps as `delay_num/delay_den` (16 bits each): exact where such a
    /// fraction exists, else the closest one (continued fractions).
    static func delay(fps: Double) -> (UInt16, UInt16) {
        // 1/fps = 1000 / (1000 fps) when fps has at most three decimals.
        let milli = (fps * 1000).rounded()
        if abs(milli - fps * 1000) < 1e-6, milli <= 1e12 {
            var n = 1000, d = Int(milli)
            let g = gcd(n, d)
            n /= g; d /= g
            if n <= 65535, d <= 65535, d > 0 { return (UInt16(n), UInt16(d)) }
        }
        // Convergents of 1/fps with both terms within 16 bits.
        var x = 1 / fps
        var (p0, q0, p1, q1) = (0, 1, 1, 0)
        for _ in 0..<40 {
            let a = Int(x.rounded(.down))
            let p2 = a * p1 + p0, q2 = a * q1 + q0
            if p2 > 65535 || q2 > 65535 { break }
            (p0, q0, p1, q1) = (p1, q1, p2, q2)
            let frac = x - Double(a)
            if frac < 1e-12 { break }
            x = 1 / frac
        }
        return (UInt16(max(p1, 1)), UInt16(max(q1, 1)))
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}

/// CRC-32 (ISO 3309, as PNG uses it).
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
    private var crc: UInt32 = 0xFFFF_FFFF

    mutating func update(_ bytes: [UInt8]) {
        var c = crc
        bytes.withUnsafeBufferPointer { b in
            Self.table.withUnsafeBufferPointer { t in
                for byte in b { c = t[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
            }
        }
        crc = c
    }

    var value: UInt32 { crc ^ 0xFFFF_FFFF }
}
