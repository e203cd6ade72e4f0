internal import CZlib

/// The only file that calls zlib (C stays at the edge: one Swift file per C library):
/// inflating here (an ICC profile; the pixels of the PNGs `PNGRows` reads),
/// and gzip for the web player (`Gzip`, at the end).
///
/// PNG keeps its ICC profile (`iCCP`) zlib-compressed; libpng's simplified
/// reader, which decodes the pixels, does not hand the profile out, so we
/// inflate it ourselves. zlib reports every failure as a return code; it
/// never jumps.
enum Inflate {
    /// What inflating gave.
    enum Outcome: Equatable {
        case bytes([UInt8])
        /// Damaged or cut short.
        case damaged
        /// It would inflate to more than the limit.
        case tooLarge
    }

    /// The zlib stream `data` inflated, up to `limit` bytes.
    static func zlib(_ data: ArraySlice<UInt8>, limit: Int) -> Outcome {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return .damaged }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let input = Array(data)
        return input.withUnsafeBufferPointer { source -> Outcome in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = UInt32(source.count)
            while true {
                let (code, produced) = chunk.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    let code = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (code, buffer.count - Int(stream.avail_out))
                }
                guard code == Z_OK || code == Z_STREAM_END else { return .damaged }
                guard out.count + produced <= limit else { return .tooLarge }
                out += chunk[0..<produced]
                if code == Z_STREAM_END { return .bytes(out) }
                // No progress with no input left to read: the stream is cut short.
                if produced == 0 && stream.avail_in == 0 { return .damaged }
            }
        }
    }
}

extension Inflate {
    /// The zlib stream in `data` inflated as `rows` rows of `rowBytes`
    /// bytes each, handed to `row` one at a time (in a buffer reused for
    /// the next: no copy of the whole stream is made); false where the
    /// stream is damaged, ends sooner or later, is followed by more bytes,
    /// or `row` returns false.
    static func rows(_ data: [UInt8], rowBytes: Int, rows: Int, _ row: (UnsafePointer<UInt8>) -> Bool) -> Bool {
        Self.rows(data, runs: [(rowBytes, rows)]) { _, bytes in row(bytes) }
    }

    /// The same for a stream of several runs of rows, each run its own row
    /// length (an interlaced PNG's seven passes): `row` gets the run's
    /// index and the row. A run of no rows is skipped.
    static func rows(_ data: [UInt8], runs: [(rowBytes: Int, rows: Int)],
                     _ row: (Int, UnsafePointer<UInt8>) -> Bool) -> Bool {
        var stream = z_stream()
        let longest = runs.map(\.rowBytes).max() ?? 0
        let total = runs.reduce(0) { $0 + $1.rows }
        guard longest > 0, total > 0, longest < Int(UInt32.max), runs.allSatisfy({ $0.rowBytes > 0 && $0.rows >= 0 }),
              inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return false }
        defer { inflateEnd(&stream) }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: longest + 1)
        defer { buffer.deallocate() }
        return data.withUnsafeBufferPointer { source -> Bool in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            var done = 0
            for (index, run) in runs.enumerated() {
                for _ in 0 ..< run.rows {
                    done += 1
                    stream.next_out = buffer
                    stream.avail_out = uInt(run.rowBytes)
                    let code = CZlib.inflate(&stream, Z_SYNC_FLUSH)
                    // A short row, or the stream's end before the last row's.
                    guard stream.avail_out == 0, code == Z_OK || (code == Z_STREAM_END && done == total) else { return false }
                    guard row(index, buffer) else { return false }
                }
            }
            // The stream ends here: with a byte of room more, zlib must
            // find its end (and its check) and no byte after it (after its
            // end it says Z_STREAM_END again).
            stream.next_out = buffer
            stream.avail_out = 1
            let code = CZlib.inflate(&stream, Z_FINISH)
            return code == Z_STREAM_END && stream.avail_out == 1 && stream.avail_in == 0
        }
    }

    /// The CRC-32 of `bytes` (PNG's chunk check).
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: CZlib.crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt(bytes.count)))
    }
}

/// Pixels kept in memory deflated: each row's bytes less the bytes of the
/// pixel to their left (PNG's Sub filter), then zlib at level 1. A preset
/// keeps its frames' changed pixels so: on the gallery's photos about half
/// their size (52%, against 71% deflated unfiltered). Where zlib fails or
/// gains nothing, the pixels are kept as they are.
public struct PackedPixels: Sendable {
    private let data: [UInt8]
    private let packed: Bool
    /// The bytes the pixels take unpacked.
    public let count: Int
    /// The bytes one row takes (a row's first pixel is kept as it is).
    public let rowBytes: Int

    /// Packs `pixels` (RGBA rows of `rowBytes` bytes each); with `pack`
    /// false they are kept as they are.
    public init(_ pixels: [UInt8], rowBytes: Int, pack: Bool = true) {
        count = pixels.count
        self.rowBytes = rowBytes
        guard pack, rowBytes > 4, pixels.count >= rowBytes, pixels.count % rowBytes == 0,
              let out = Self.deflate(filtered: Self.subFiltered(pixels, rowBytes: rowBytes), below: pixels.count) else {
            data = pixels
            packed = false
            return
        }
        data = out
        packed = true
    }

    /// Each row's bytes less those of the pixel to their left.
    private static func subFiltered(_ pixels: [UInt8], rowBytes: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pixels.count) { f, n in
            pixels.withUnsafeBufferPointer { p in
                var row = 0
                while row < p.count {
                    for i in row..<(row + 4) { f[i] = p[i] }
                    for i in (row + 4)..<(row + rowBytes) { f[i] = p[i] &- p[i - 4] }
                    row += rowBytes
                }
            }
            n = pixels.count
        }
    }

    /// `bytes` deflated at level 1, nil where zlib fails or the stream
    /// would take `below` bytes or more.
    private static func deflate(filtered bytes: [UInt8], below: Int) -> [UInt8]? {
        var stream = z_stream()
        guard deflateInit2_(&stream, 1, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var out = [UInt8](repeating: 0, count: bound)
        let code = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { b in
                stream.next_in = UnsafeMutablePointer(mutating: b.baseAddress)
                stream.avail_in = uInt(b.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        let size = Int(stream.total_out)
        guard code == Z_STREAM_END, size < below else { return nil }
        // A copy of exactly the stream's size (the buffer's capacity is
        // the bound, more than the pixels).
        return Array(out[0..<size])
    }

    /// The bytes deflated (or as they are) that this keeps.
    public var storedBytes: Int { data.count }

    /// The pixels as they were given.
    public func unpack() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { p, n in
            if let base = p.baseAddress { unpack(into: UnsafeMutableRawPointer(base), rowStride: rowBytes) }
            n = count
        }
    }

    /// Writes the pixels' rows at `destination`, row `y` at `y × rowStride`
    /// bytes (a box inside a bigger picture): unfiltered as they are
    /// inflated, with no array of their own.
    public func unpack(into destination: UnsafeMutableRawPointer, rowStride: Int) {
        let rowBytes = self.rowBytes, rows = rowBytes > 0 ? count / rowBytes : 0
        guard packed else {
            data.withUnsafeBytes { d in
                for y in 0..<rows { (destination + y * rowStride).copyMemory(from: d.baseAddress! + y * rowBytes, byteCount: rowBytes) }
            }
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { out in
            var size = uLong(count)
            let code = data.withUnsafeBufferPointer { d in uncompress(out.baseAddress, &size, d.baseAddress, uLong(d.count)) }
            // Our own stream, inflated into exactly its size: a failure is out of memory.
            guard code == Z_OK, Int(size) == count else { fatalError("PackedPixels: zlib could not inflate its own stream (code \(code))") }
            let src = UnsafePointer(out.baseAddress!)
            for y in 0..<rows {
                let s = src + y * rowBytes
                let d = (destination + y * rowStride).assumingMemoryBound(to: UInt8.self)
                for i in 0..<4 { d[i] = s[i] }
                for i in 4..<rowBytes { d[i] = s[i] &+ d[i - 4] }
            }
        }
    }
}

/// gzip (RFC 1952) at zlib's best compression: the web player inside a
/// `clip.html`, unpacked by the browser's `DecompressionStream`.
public enum Gzip {
    /// `data` gzipped; nil only when zlib cannot start (out of memory).
    public static func compress(_ data: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer.
        guard deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                             Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(data.count))) + 32)
        let done = data.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { dest -> Bool in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = dest.baseAddress
                stream.avail_out = UInt32(dest.count)
                return deflate(&stream, Z_FINISH) == Z_STREAM_END
            }
        }
        guard done else { return nil }
        return Array(out.prefix(Int(stream.total_out)))
    }
}
