internal import CGIF
import Foundation
import WobbleSystem

/// Bytes from giflib's encoder, buffered and appended to a `ByteStream`.
/// giflib calls `gifOutput` with its `UserData` pointing here.
private final class GIFByteOutput {
    let file: ByteStream
    var buffer: [UInt8] = []
    /// The first write error; giflib only learns that a write failed.
    var error: Error?
    /// Set by `GIFWriter.discard()`: swallow giflib's last bytes.
    var discarding = false

    init(file: ByteStream) {
        self.file = file
        buffer.reserveCapacity(1 << 16)
    }

    func append(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if discarding { return true }
        if error != nil { return false }
        buffer.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
        if buffer.count >= 1 << 16 { return flush() }
        return true
    }

    func flush() -> Bool {
        guard error == nil, !buffer.isEmpty else { return error == nil }
        do { try file.write(buffer) } catch { self.error = error; return false }
        buffer.removeAll(keepingCapacity: true)
        return true
    }
}

/// giflib's `OutputFunc`: forwards to the `GIFByteOutput` in `UserData`.
private let gifOutput: @convention(c) (UnsafeMutablePointer<GifFileType>?, UnsafePointer<GifByteType>?, Int32) -> Int32 = { gif, bytes, n in
    guard let gif, let user = gif.pointee.UserData, let bytes, n >= 0 else { return 0 }
    let out = Unmanaged<GIFByteOutput>.fromOpaque(user).takeUnretainedValue()
    return out.append(bytes, Int(n)) ? n : 0
}

/// The low-level GIF89a stream (this file owns every giflib call): logical
/// screen with a global colour table, an optional NETSCAPE2.0 loop
/// extension, then one graphic control extension + image per frame.
final class GIFWriter {
    private var gif: UnsafeMutablePointer<GifFileType>?
    private let output: GIFByteOutput
    private let what: String

    /// Opens the stream on `file` and writes the header, the screen
    /// descriptor with `palette` (`r, g, b` triples padded to `tableSize`)
    /// and, unless `loop` is nil, the NETSCAPE2.0 loop count.
    init(file: ByteStream, what: String, width: Int, height: Int,
         palette: [UInt8], tableSize: Int, background: Int, loop: Int?) throws {
        self.what = what
        output = GIFByteOutput(file: file)
        var err: Int32 = 0
        guard let g = EGifOpen(Unmanaged.passUnretained(output).toOpaque(), gifOutput, &err) else {
            throw MediaError("\(what): EGifOpen failed: \(GIFWriter.describe(err))")
        }
        gif = g
        EGifSetGifVersion(g, true)
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: tableSize)
        for i in 0..<min(tableSize, palette.count / 3) {
            colors[i] = GifColorType(Red: palette[i * 3], Green: palette[i * 3 + 1], Blue: palette[i * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(tableSize), &colors) else {
            throw MediaError("\(what): GifMakeMapObject failed")
        }
        defer { GifFreeMapObject(map) }
        try check(EGifPutScreenDesc(g, Int32(width), Int32(height), 8, Int32(background), map), "EGifPutScreenDesc")
        if let loop {
            try check(EGifPutExtensionLeader(g, APPLICATION_EXT_FUNC_CODE), "EGifPutExtensionLeader")
            var app = Array("NETSCAPE2.0".utf8)
            try check(EGifPutExtensionBlock(g, 11, &app), "EGifPutExtensionBlock")
            var sub: [UInt8] = [1, UInt8(loop & 0xff), UInt8((loop >> 8) & 0xff)]
            try check(EGifPutExtensionBlock(g, 3, &sub), "EGifPutExtensionBlock")
            try check(EGifPutExtensionTrailer(g), "EGifPutExtensionTrailer")
        }
    }

    deinit { discard() }

    /// Writes one frame: a graphic control extension (`disposal` 1 keep,
    /// 2 restore to background; `delay` in centiseconds; `transparent`
    /// index) and the image `pixels` (`w * h` indices, clobbered: giflib
    /// masks them in place) at `(left, top)`.
    func putFrame(left: Int, top: Int, width w: Int, height h: Int,
                  delay: Int, disposal: Int, transparent: UInt8, pixels: inout [UInt8]) throws {
        guard let g = gif else { throw MediaError("\(what): the GIF stream is closed") }
        var gce: [UInt8] = [UInt8(disposal << 2 | 1), UInt8(delay & 0xff), UInt8(delay >> 8), transparent]
        try check(EGifPutExtension(g, GRAPHICS_EXT_FUNC_CODE, 4, &gce), "EGifPutExtension")
        try check(EGifPutImageDesc(g, Int32(left), Int32(top), Int32(w), Int32(h), false, nil), "EGifPutImageDesc")
        try check(pixels.withUnsafeMutableBufferPointer { EGifPutLine(g, $0.baseAddress, Int32(w * h)) }, "EGifPutLine")
    }

    /// Writes the trailer and flushes everything to the file.
    func close() throws {
        guard let g = gif else { return }
        gif = nil
        var err: Int32 = 0
        let rc = EGifCloseFile(g, &err)
        if let e = output.error { throw e }
        guard rc == GIF_OK else { throw MediaError("\(what): EGifCloseFile failed: \(GIFWriter.describe(err))") }
        guard output.flush() else { throw output.error! }
    }

    /// Frees giflib's state; nothing more reaches the file.
    func discard() {
        guard let g = gif else { return }
        gif = nil
        output.discarding = true
        var err: Int32 = 0
        _ = EGifCloseFile(g, &err)
    }

    private func check(_ rc: Int32, _ function: String) throws {
        guard rc == GIF_ERROR else { return }
        if let e = output.error { throw e }
        throw MediaError("\(what): \(function) failed: \(GIFWriter.describe(gif?.pointee.Error ?? 0))")
    }

    private static func describe(_ code: Int32) -> String {
        if let s = GifErrorString(code) { return String(cString: s) }
        return "giflib error \(code)"
    }
}
