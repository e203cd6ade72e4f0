internal import CWebP
import WobbleCore
import WobbleSystem

/// The only file that calls libwebp: an animated WebP built with
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
final class WebPAnimation {
    private var encoder: OpaquePointer?
    private var config = WebPConfig()
    private let what: String
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
            config.use_sharp_yuv = 1
        }
        // A second thread where libwebp can use one (analysis, filtering).
        config.thread_level = 1
        guard WebPValidateConfig(&config) != 0 else {
            throw MediaError("\(what): libwebp refused the settings (quality \(settings.factor))")
        }
        guard let enc = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else {
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
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else {
            throw MediaError("\(what): the installed libwebp does not match the one wobble-run was built with")
        }
        picture.use_argb = 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        defer { WebPPictureFree(&picture) }
        let imported = frame.pixels.withUnsafeBufferPointer { px in
            WebPPictureImportRGBA(&picture, px.baseAddress, Int32(width * 4))
        }
        guard imported != 0 else { throw MediaError("\(what): libwebp could not take a frame (out of memory)") }
        guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
            throw MediaError("\(what): libwebp could not encode a frame: \(error(picture.error_code))")
        }
    }

    /// Ends the last frame at `end` ms and returns the whole file.
    func assemble(end: Int) throws -> [UInt8] {
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

    /// Frees the encoder (idempotent).
    func close() {
        if let encoder { WebPAnimEncoderDelete(encoder) }
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
