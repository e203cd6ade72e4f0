internal import CZlib

/// The only file that calls zlib (C stays at the edge: one Swift file per C library).
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
