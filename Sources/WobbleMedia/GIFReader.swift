internal import CGIF
import WobbleCore
import WobbleSystem

/// Reads a GIF back as a player shows it (giflib's decoder:
/// `DGifOpenFileName`, `DGifSlurp`, `DGifSavedExtensionToGCB`): each image
/// drawn on the canvas (its transparent index leaving the canvas as it
/// was), shown, then disposed as its graphic control block says. The
/// canvas starts transparent. Used to measure what a GIF we wrote looks
/// like (`--preset discord` compares it with the APNG it could be); the
/// writing side of giflib is `GIFWriter`.
public enum GIFReader {
    /// Calls `body` with every frame as shown (RGBA, the GIF's canvas size)
    /// and its delay in centiseconds.
    ///
    /// - Throws: `MediaError` naming `path` when giflib cannot open or read it.
    public static func frames(path: String, _ body: (RGBAImage, Int) throws -> Void) throws {
        let what = "GIF '\(PathBytes.display(path, controls: true))'"
        var err: Int32 = 0
        guard let opened = PathBytes.withCString(path, { DGifOpenFileName($0, &err) }), let gif = opened else {
            throw MediaError("\(what): cannot open it (giflib: \(reason(err)))")
        }
        defer { DGifCloseFile(gif, &err) }
        try frames(gif, what: what, body)
    }

    /// As `frames(path:_:)`, for a GIF in memory; `shown` names it in messages.
    public static func frames(bytes: [UInt8], shown: String, _ body: (RGBAImage, Int) throws -> Void) throws {
        let what = "GIF '\(shown)'"
        let input = GIFByteInput(bytes)
        var err: Int32 = 0
        guard let gif = DGifOpen(Unmanaged.passUnretained(input).toOpaque(), gifInput, &err) else {
            throw MediaError("\(what): cannot open it (giflib: \(reason(err)))")
        }
        defer { DGifCloseFile(gif, &err) }
        try withExtendedLifetime(input) { try frames(gif, what: what, body) }
    }

    private static func frames(_ gif: UnsafeMutablePointer<GifFileType>, what: String,
                               _ body: (RGBAImage, Int) throws -> Void) throws {
        guard DGifSlurp(gif) == GIF_OK else { throw MediaError("\(what): cannot read it (giflib: \(reason(gif.pointee.Error)))") }
        let w = Int(gif.pointee.SWidth), h = Int(gif.pointee.SHeight)
        guard w > 0, h > 0, let images = gif.pointee.SavedImages else { throw MediaError("\(what): no picture in it") }
        var canvas = [UInt8](repeating: 0, count: w * h * 4)
        for i in 0..<Int(gif.pointee.ImageCount) {
            let image = images[i]
            var gcb = GraphicsControlBlock()
            gcb.DisposalMode = DISPOSAL_UNSPECIFIED
            gcb.TransparentColor = NO_TRANSPARENT_COLOR
            _ = DGifSavedExtensionToGCB(gif, Int32(i), &gcb)
            let d = image.ImageDesc
            guard let map = d.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors, let raster = image.RasterBits else {
                throw MediaError("\(what): image \(i) has no colour table")
            }
            let before = gcb.DisposalMode == DISPOSE_PREVIOUS ? canvas : nil
            let x0 = Int(d.Left), y0 = Int(d.Top), fw = Int(d.Width), fh = Int(d.Height)
            let count = Int(map.pointee.ColorCount), t = Int(gcb.TransparentColor)
            for y in 0..<fh where y0 + y < h {
                for x in 0..<fw where x0 + x < w {
                    let index = Int(raster[y * fw + x])
                    guard index != t, index < count else { continue }
                    let c = colors[index], o = ((y0 + y) * w + x0 + x) * 4
                    canvas[o] = c.Red
                    canvas[o + 1] = c.Green
                    canvas[o + 2] = c.Blue
                    canvas[o + 3] = 255
                }
            }
            try body(RGBAImage(width: w, height: h, pixels: canvas), Int(gcb.DelayTime))
            if gcb.DisposalMode == DISPOSE_BACKGROUND {
                for y in y0..<min(h, y0 + fh) {
                    for x in x0..<min(w, x0 + fw) { for c in 0..<4 { canvas[(y * w + x) * 4 + c] = 0 } }
                }
            } else if let before {
                canvas = before
            }
        }
    }

    /// A GIF in memory, read by giflib through `gifInput`.
    private final class GIFByteInput {
        let bytes: [UInt8]
        var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    /// giflib's `InputFunc`: copies the next bytes from the `GIFByteInput`
    /// in `UserData`; fewer than asked at the end.
    private static let gifInput: @convention(c) (UnsafeMutablePointer<GifFileType>?, UnsafeMutablePointer<GifByteType>?, Int32) -> Int32 = { gif, out, n in
        guard let gif, let user = gif.pointee.UserData, let out, n > 0 else { return 0 }
        let input = Unmanaged<GIFByteInput>.fromOpaque(user).takeUnretainedValue()
        let count = min(Int(n), input.bytes.count - input.offset)
        guard count > 0 else { return 0 }
        input.bytes.withUnsafeBufferPointer { b in
            out.update(from: b.baseAddress! + input.offset, count: count)
        }
        input.offset += count
        return Int32(count)
    }

    private static func reason(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
