internal import CTurboJPEG
import WobbleCore
import WobbleSystem

/// The only file that calls TurboJPEG (C stays at the edge: one Swift file per C library).
///
/// libjpeg-turbo's TurboJPEG layer installs its own error manager and
/// catches libjpeg's fatal errors with `setjmp` inside each `tj*` call, which
/// then returns -1; `tjGetErrorStr2` / `tjGetErrorCode` tell what happened.
/// No `longjmp` crosses a Swift frame.
enum JPEGCodec {
    /// The colours a JPEG stores, as `decode` hands them out.
    enum Colours {
        /// RGBA8, alpha 255.
        case rgb
        /// RGBA8 with R = G = B, alpha 255.
        case grey
        /// Four bytes C, M, Y, K a pixel, as stored (YCCK made CMYK):
        /// `ColourProfile` turns them into RGBA.
        case cmyk
    }

    /// Decodes a JPEG held in memory to four bytes a pixel: RGBA8 (alpha
    /// 255), or the stored CMYK for a CMYK or YCCK file.
    ///
    /// `checkSize` sees the header's width and height before any pixel
    /// memory is allocated and throws to refuse them. Every libjpeg warning
    /// (a truncated file, corrupt entropy data) is an error, except the
    /// harmless "extraneous bytes before marker" that some cameras write.
    static func decode(
        _ data: UnsafeRawBufferPointer,
        corrupt: (String) -> MediaError,
        checkSize: (Int, Int) throws -> Void
    ) throws -> (image: RGBAImage, colours: Colours) {
        guard let handle = tjInitDecompress() else {
            throw corrupt("tjInitDecompress failed")
        }
        defer { tjDestroy(handle) }
        func lastError() -> String {
            guard let text = tjGetErrorStr2(handle) else { return "unknown error" }
            return String(cString: text)
        }
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw corrupt("empty file")
        }
        let size = UInt(data.count)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, base, size, &width, &height, &subsampling, &colorspace) == 0 else {
            throw corrupt(lastError())
        }
        // A tables-only stream (or one cut inside its tables) reads as 0×0.
        guard width > 0, height > 0 else { throw corrupt("the header is cut short or holds no image") }
        let w = Int(width), h = Int(height)
        try checkSize(w, h)

        let cmyk = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let format = cmyk ? TJPF_CMYK : TJPF_RGBA
        let count = w * h * 4
        // STOPONWARNING: a truncated file stops at once instead of decoding
        // a grey remainder; LIMITSCANS: refuse progressive files with an
        // absurd number of scans (a cheap denial of service).
        let strict = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS
        var failure: String?
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Not zero-filled (see PNGCodec): on failure the array is dropped.
            initialized = count
            func run(_ flags: Int32) -> Int32 {
                tjDecompress2(handle, base, size, buffer.baseAddress, width, 0, height,
                              Int32(format.rawValue), flags)
            }
            if run(strict) == 0 { return }
            var error = lastError()
            if tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue), error.contains("extraneous bytes") {
                // Benign: decode again, tolerating warnings, and accept the
                // result only if no other kind of warning came up.
                if run(TJFLAG_LIMITSCANS) == 0 { return }
                error = lastError()
                if tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue), error.contains("extraneous bytes") {
                    return
                }
            }
            failure = error
        }
        if let failure { throw corrupt(failure) }
        let colours: Colours = cmyk ? .cmyk : colorspace == Int32(TJCS_GRAY.rawValue) ? .grey : .rgb
        return (RGBAImage(width: w, height: h, pixels: pixels), colours)
    }
}
