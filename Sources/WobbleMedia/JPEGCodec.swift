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
    /// Decodes a JPEG held in memory to RGBA8 (alpha 255).
    ///
    /// `checkSize` sees the header's width and height before any pixel
    /// memory is allocated and throws to refuse them. Every libjpeg warning
    /// (a truncated file, corrupt entropy data) is an error, except the
    /// harmless "extraneous bytes before marker" that some cameras write.
    /// CMYK and YCCK files (Adobe's inverted CMYK) are converted to RGB.
    static func decode(
        _ data: UnsafeRawBufferPointer,
        corrupt: (String) -> MediaError,
        checkSize: (Int, Int) throws -> Void
    ) throws -> RGBAImage {
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
        var pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
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
        if cmyk {
            // Adobe CMYK JPEGs store inverted values: R = C·K / 255.
            pixels.withUnsafeMutableBufferPointer { p in
                var i = 0
                while i < count {
                    let k = UInt32(p[i + 3])
                    p[i] = UInt8((UInt32(p[i]) * k + 127) / 255)
                    p[i + 1] = UInt8((UInt32(p[i + 1]) * k + 127) / 255)
                    p[i + 2] = UInt8((UInt32(p[i + 2]) * k + 127) / 255)
                    p[i + 3] = 255
                    i += 4
                }
            }
        }
        return RGBAImage(width: w, height: h, pixels: pixels)
    }
}
