internal import CWebP
import WobbleCore
import WobbleSystem

/// The only file that calls libwebp (and, at its end, one still WebP for
/// the web player's picture): an animated WebP built with
/// `WebPAnimEncoder` (libwebpmux). Every call's result is checked; a
/// failure is a `MediaError` naming the output and libwebp's reason.
///
/// The encoder compares each frame with the previous canvas itself and
/// stores only the rectangle that changed (a sub-frame, blended over the
/// previous one), so frames whose pixels outside the wobbling regions are
/// bit-identical to the previous frame's cost bytes only for the regions.
/// What it keeps in memory: the previous and current canvases (two RGBA
/// frames) and every frame's *compressed* bitstream until `assemble()`
/// (the whole file, which it writes in one piece): memory grows with the
/// file size, not with the raw frames.
///
/// One `WebPPicture` (one ARGB buffer) serves every frame: libwebp's
/// `WebPAnimEncoderAdd` only reads the frame during the call (it copies
/// it into its own canvas and keeps no pointer to it), so each frame is
/// written into the same buffer instead of a fresh one per frame (whose
/// pages the kernel would clear again for every frame).
final class WebPAnimation {
    private var encoder: OpaquePointer?
    private var picture = WebPPicture()
    private var config = WebPConfig()
    private let what: String
    private let loopCount: Int
    let width: Int
    let height: Int

    /// How a WebP is encoded: `quality` nil is the default lossy quality;
    /// 100 is lossless (exact RGB kept under transparent pixels).
    struct Settings: Equatable {
        var quality: Int?
        /// The lossy quality when `--quality` is not given: every frame of
        /// the test clips stays above 35 dB PSNR against the PNG frames.
        static let defaultLossyQuality = 82
        var lossless: Bool { quality == 100 }
        /// libwebp's 0...100 lossy quality factor.
        var factor: Float { Float(quality ?? Self.defaultLossyQuality) }
    }

    /// Starts an animation of `width × height` (1...16383 each side).
    /// `loopCount`: 0 loops forever, N plays N times.
    init(width: Int, height: Int, settings: Settings, loopCount: Int, what: String) throws {
        self.what = what
        self.loopCount = loopCount
        self.width = width
        self.height = height
        guard (1...16383).contains(width), (1...16383).contains(height) else {
            throw MediaError("\(what): a WebP is 1 to 16383 pixels wide and high, not \(width)x\(height)")
        }
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else {
            throw MediaError("\(what): the installed libwebp does not match the one wobble-run was built with")
        }
        options.anim_params.loop_count = Int32(clamping: loopCount)
        // Transparent background: a viewer shows the page under the
        // transparent pixels.
        options.anim_params.bgcolor = 0
        // No forced key frames: every frame after the first is the changed
        // rectangle only (a key frame repeats the whole picture).
        options.kmin = 0
        options.kmax = 0
        options.allow_mixed = 0
        guard WebPConfigInit(&config) != 0 else {
            throw MediaError("\(what): the installed libwebp does not match the one wobble-run was built with")
        }
        if settings.lossless {
            config.lossless = 1
            config.exact = 1
            config.quality = 75   // effort, for lossless
            config.method = 4
        } else {
            config.quality = settings.factor
            config.method = 4
            config.alpha_quality = 100
        }
        // A second thread where libwebp can use one (analysis, filtering).
        config.thread_level = 1
        guard WebPValidateConfig(&config) != 0 else {
            throw MediaError("\(what): libwebp refused the settings (quality \(settings.factor))")
        }
        guard WebPPictureInit(&picture) != 0 else {
            throw MediaError("\(what): the installed libwebp does not match the one wobble-run was built with")
        }
        picture.use_argb = 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        guard WebPPictureAlloc(&picture) != 0, picture.argb != nil else {
            WebPPictureFree(&picture)
            throw MediaError("\(what): libwebp could not take a frame (out of memory)")
        }
        guard let enc = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else {
            WebPPictureFree(&picture)
            throw MediaError("\(what): libwebp could not start an animation (out of memory)")
        }
        encoder = enc
    }

    deinit { close() }

    /// Adds one frame starting at `timestamp` ms (non-decreasing).
    func add(_ frame: RGBAImage, timestamp: Int) throws {
        guard let encoder else { throw MediaError("\(what): the WebP is already closed") }
        guard frame.width == width, frame.height == height else {
            throw MediaError("\(what): a frame is \(frame.width)x\(frame.height), the WebP \(width)x\(height)")
        }
        guard frame.pixels.count >= width * height * 4, let argb = picture.argb else {
            throw MediaError("\(what): a frame has \(frame.pixels.count) bytes, not \(width * height * 4)")
        }
        // What `WebPPictureImportRGBA` does for an ARGB picture, into the
        // kept buffer: each pixel as one 32-bit 0xAARRGGBB value.
        let stride = Int(picture.argb_stride), w = width
        frame.pixels.withUnsafeBytes { raw in
            for y in 0..<height {
                let src = raw.baseAddress! + y * w * 4
                let dst = argb + y * stride
                for x in 0..<w {
                    let v = UInt32(littleEndian: src.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self))
                    // In memory R, G, B, A: swap R and B.
                    dst[x] = (v & 0xFF00_FF00) | ((v >> 16) & 0xFF) | ((v & 0xFF) << 16)
                }
            }
        }
        picture.error_code = VP8_ENC_OK
        guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
            throw MediaError("\(what): libwebp could not encode a frame: \(error(picture.error_code))")
        }
    }

    /// Ends the last frame at `end` ms and returns the whole file: always
    /// an animation (`ANIM`, the loop count, every frame's duration), of
    /// at least two frames (`keepAnimated`). `frames`: the frames added;
    /// `firstEnd`: when the first frame ends (ms).
    func assemble(end: Int, firstEnd: Int, frames: Int) throws -> [UInt8] {
        // A one-frame clip is two frames of at least 1 ms: one shorter than
        // 2 ms (over 500 fps) plays 2 ms, else libwebpmux keeps a still image.
        let end = frames >= 2 ? end : max(end, 2)
        return try keepAnimated(try assemble(end: end), end: end, firstEnd: firstEnd, frames: frames)
    }

    /// libwebp's own file: frames whose pixels equal the frame before are
    /// merged into it, and an animation left with one frame is stored as
    /// a still image (no timing, no loop count).
    private func assemble(end: Int) throws -> [UInt8] {
        guard let encoder else { throw MediaError("\(what): the WebP is already closed") }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: end), nil) != 0 else {
            throw MediaError("\(what): libwebp could not end the animation: \(error(nil))")
        }
        var data = WebPData()
        WebPDataInit(&data)
        defer { WebPDataClear(&data) }
        guard WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes else {
            throw MediaError("\(what): libwebp could not assemble the animation: \(error(nil))")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: data.size))
    }

    /// `file` as an animation of two frames or more, when libwebp made a
    /// still image of it, or an animation of one frame (a clip where
    /// nothing moves): its picture as the first frame (until
    /// `firstEnd`, or half of `end` for a one-frame clip, as libwebpmux
    /// makes a still image of one frame that covers the canvas), and a
    /// second frame until `end` that changes nothing: the top-left pixel
    /// as the still image decodes, lossless, replacing it; or for one
    /// frame of an animation (libwebp leaves out a transparent border, so
    /// the canvas has alpha anyway) a transparent pixel blended over. The timing and the loop count are kept, a player
    /// that wants an animated file of two frames or more (WhatsApp's
    /// animated stickers) gets one, and no frame has alpha unless the
    /// picture has: an opaque clip stays without the alpha flag.
    private func keepAnimated(_ file: [UInt8], end: Int, firstEnd: Int, frames: Int) throws -> [UInt8] {
        func fail(_ call: String, _ e: WebPMuxError) -> MediaError {
            MediaError("\(what): libwebp's \(call) failed (error \(e.rawValue))")
        }
        return try file.withUnsafeBufferPointer { buffer -> [UInt8] in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            guard let mux = WebPMuxCreate(&data, 0) else { throw MediaError("\(what): libwebp cannot read its own file back") }
            defer { WebPMuxDelete(mux) }
            var flags: UInt32 = 0
            var e = WebPMuxGetFeatures(mux, &flags)
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxGetFeatures", e) }
            var stored: Int32 = 0
            e = WebPMuxNumChunks(mux, WEBP_CHUNK_ANMF, &stored)
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxNumChunks", e) }
            let animated = flags & ANIMATION_FLAG.rawValue != 0
            if animated && stored >= 2 { return file }

            var picture = WebPMuxFrameInfo()
            e = WebPMuxGetFrame(mux, 1, &picture)
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxGetFrame", e) }
            defer { WebPDataClear(&picture.bitstream) }
            guard let out = WebPMuxNew() else { throw MediaError("\(what): libwebp could not start a file (out of memory)") }
            defer { WebPMuxDelete(out) }
            var params = WebPMuxAnimParams(bgcolor: 0, loop_count: Int32(clamping: loopCount))
            e = WebPMuxSetAnimationParams(out, &params)
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxSetAnimationParams", e) }
            e = WebPMuxSetCanvasSize(out, Int32(width), Int32(height))
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxSetCanvasSize", e) }
            // One frame of an animation keeps its place and blend (libwebp
            // leaves out a transparent border); a still image covers the canvas.
            var first = animated ? picture : WebPMuxFrameInfo()
            if !animated { first.bitstream = picture.bitstream }
            first.id = WEBP_CHUNK_ANMF
            // (libwebpmux stores one frame that covers the canvas as a
            // still image: a one-frame clip is two halves.)
            let split = frames >= 2 ? firstEnd : max(1, end / 2)
            first.duration = Int32(clamping: end > split ? split : end)
            first.dispose_method = WEBP_MUX_DISPOSE_NONE
            if !animated { first.blend_method = WEBP_MUX_NO_BLEND }
            e = WebPMuxPushFrame(out, &first, 1)
            guard e == WEBP_MUX_OK else { throw fail("WebPMuxPushFrame", e) }
            if end > split {
                // A still image covers the canvas: its top-left pixel as it
                // decodes, replacing. One frame of an animation may leave a
                // transparent border: one transparent pixel blended over
                // (every decoder keeps the canvas under alpha 0).
                var corner = RGBAImage(width: 1, height: 1, pixels: [0, 0, 0, 0])
                if !animated {
                    var w: Int32 = 0, h: Int32 = 0
                    guard let rgba = WebPDecodeRGBA(picture.bitstream.bytes, picture.bitstream.size, &w, &h) else {
                        throw MediaError("\(what): libwebp cannot decode its own frame")
                    }
                    corner = RGBAImage(width: 1, height: 1, pixels: Array(UnsafeBufferPointer(start: rgba, count: 4)))
                    WebPFree(rgba)
                }
                let patch = try encodeLossless(corner)
                try patch.withUnsafeBufferPointer { p in
                    var second = WebPMuxFrameInfo()
                    second.bitstream = WebPData(bytes: p.baseAddress, size: p.count)
                    second.id = WEBP_CHUNK_ANMF
                    second.duration = Int32(clamping: end - split)
                    second.dispose_method = WEBP_MUX_DISPOSE_NONE
                    second.blend_method = animated ? WEBP_MUX_BLEND : WEBP_MUX_NO_BLEND
                    let e = WebPMuxPushFrame(out, &second, 1)
                    guard e == WEBP_MUX_OK else { throw fail("WebPMuxPushFrame", e) }
                }
            }
            var assembled = WebPData()
            WebPDataInit(&assembled)
            defer { WebPDataClear(&assembled) }
            e = WebPMuxAssemble(out, &assembled)
            guard e == WEBP_MUX_OK, let bytes = assembled.bytes else { throw fail("WebPMuxAssemble", e) }
            return Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
        }
    }

    /// `image` as a lossless WebP bitstream, every value kept (`exact`:
    /// the colour under a transparent pixel too).
    private func encodeLossless(_ image: RGBAImage) throws -> [UInt8] {
        switch WebPStill.encode(image, quality: nil) {
        case .bytes(let bytes): return bytes
        case .mismatch: throw MediaError("\(what): the installed libwebp does not match the one wobble-run was built with")
        case .importFailed: throw MediaError("\(what): libwebp could not take a frame (out of memory)")
        case .encodeFailed(let code): throw MediaError("\(what): libwebp could not encode a frame: \(error(code))")
        }
    }

    /// Frees the encoder (idempotent).
    func close() {
        if let encoder {
            WebPAnimEncoderDelete(encoder)
            WebPPictureFree(&picture)
        }
        encoder = nil
    }

    /// libwebp's reason for the last failure.
    private func error(_ code: WebPEncodingError?) -> String {
        if let encoder, let text = WebPAnimEncoderGetError(encoder), text.pointee != 0 {
            return String(cString: text)
        }
        switch code {
        case VP8_ENC_ERROR_OUT_OF_MEMORY?, VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY?: return "out of memory"
        case VP8_ENC_ERROR_BAD_DIMENSION?: return "bad picture size"
        case let c?: return "libwebp error \(c.rawValue)"
        case nil: return "unknown libwebp error"
        }
    }
}

extension ImageIO {
    /// Encodes an image as one still WebP (libwebp): lossy at `quality`
    /// (0–100) with sharp RGB→YUV conversion, its alpha channel kept
    /// losslessly; or lossless (`quality` nil), every value kept. The web
    /// player's picture (`-o clip.html`).
    ///
    /// - Throws: `MediaError` for an image with no pixels, or when libwebp fails.
    public static func encodeWebP(_ image: RGBAImage, quality: Int?) throws -> [UInt8] {
        guard image.width > 0, image.height > 0, image.width <= 16383, image.height <= 16383 else {
            throw MediaError("cannot write a WebP of \(image.width)×\(image.height) pixels (at most 16383 a side)")
        }
        switch WebPStill.encode(image, quality: quality) {
        case .bytes(let bytes): return bytes
        case .mismatch: throw MediaError("the installed libwebp does not match the one wobble-run was built with")
        case .importFailed: throw MediaError("libwebp could not take the picture (out of memory)")
        case .encodeFailed(let code): throw MediaError("libwebp could not encode the picture (error \(code.rawValue))")
        }
    }
}

/// One still WebP bitstream through libwebp, the one home of its setup:
/// lossy at `quality` (sharp RGB→YUV, alpha kept losslessly) or lossless
/// (`quality` nil, every value kept, the colour under a transparent pixel
/// too). Callers word the failures for what they write.
enum WebPStill {
    enum Outcome {
        case bytes([UInt8])
        case mismatch
        case importFailed
        case encodeFailed(WebPEncodingError)
    }

    static func encode(_ image: RGBAImage, quality: Int?) -> Outcome {
        var config = WebPConfig()
        var picture = WebPPicture()
        guard WebPConfigInit(&config) != 0, WebPPictureInit(&picture) != 0 else { return .mismatch }
        if let quality {
            config.quality = Float(min(max(quality, 0), 100))
            config.alpha_quality = 100
            config.alpha_compression = 1
            config.use_sharp_yuv = 1
            config.method = 5
        } else {
            config.lossless = 1
            config.exact = 1
            picture.use_argb = 1
        }
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        defer { WebPPictureFree(&picture) }
        let imported = image.pixels.withUnsafeBufferPointer { px in
            WebPPictureImportRGBA(&picture, px.baseAddress, Int32(image.width * 4))
        }
        guard imported != 0 else { return .importFailed }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        picture.writer = WebPMemoryWrite
        let encoded = withUnsafeMutablePointer(to: &writer) { w in
            picture.custom_ptr = UnsafeMutableRawPointer(w)
            defer { picture.custom_ptr = nil }
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let mem = writer.mem else { return .encodeFailed(picture.error_code) }
        return .bytes(Array(UnsafeBufferPointer(start: mem, count: writer.size)))
    }
}

extension ImageIO {
    /// A still WebP's pixels (straight RGBA), nil when libwebp cannot
    /// decode it: what `encodeWebP` gave, to measure what it lost.
    public static func decodeWebP(_ data: [UInt8]) -> RGBAImage? {
        var w: Int32 = 0, h: Int32 = 0
        guard let px = data.withUnsafeBufferPointer({ WebPDecodeRGBA($0.baseAddress, $0.count, &w, &h) }) else { return nil }
        defer { WebPFree(px) }
        guard w > 0, h > 0 else { return nil }
        return RGBAImage(width: Int(w), height: Int(h), pixels: Array(UnsafeBufferPointer(start: px, count: Int(w) * Int(h) * 4)))
    }
}
