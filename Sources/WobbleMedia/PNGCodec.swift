internal import CPNG
import WobbleCore
import WobbleSystem

/// The only file that calls libpng (C stays at the edge: one Swift file per C library).
///
/// Decoding uses libpng's simplified API (`png_image_*`): it catches its own
/// errors with `setjmp` inside `png_safe_execute` and returns 0 with the
/// message in `png_image.message`, so no `longjmp` ever crosses a Swift frame.
///
/// Encoding uses the classic write API, because only it lets us choose the
/// zlib level and the row filters (the simplified writer offers "default" or
/// "no filter, level 3" and nothing between). Its error handler must not
/// return; ours stops the process with `fatalError` instead of `longjmp`ing
/// through Swift. That cannot be reached from input: we always pass a valid
/// 8-bit RGBA image and write into memory, so libpng's only remaining failure
/// is running out of memory, where Swift would stop the process as well.
enum PNGCodec {
    /// The error a libpng simplified call reported, as a Swift string.
    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            let text = String(decoding: bytes, as: UTF8.self)
            return text.isEmpty ? "unknown libpng error" : text
        }
    }

    /// Decodes a PNG held in memory to straight-alpha RGBA8: the common
    /// 8-bit RGB(A) files by `PNGRows` (`viaRows`, the same pixels), the
    /// rest by libpng.
    ///
    /// `checkSize` sees the header's width and height before any pixel
    /// memory is allocated and throws to refuse them. 16-bit, gray,
    /// palette and tRNS inputs all come out as RGBA8; 16-bit samples are
    /// taken as sRGB-encoded (the PNG default), not as linear light.
    static func decode(
        _ data: UnsafeRawBufferPointer,
        corrupt: (String) -> MediaError,
        checkSize: (Int, Int) throws -> Void,
        viaRows: Bool = true
    ) throws -> RGBAImage {
        if let lie = oversizedAncillaryChunk(data) { throw corrupt(lie) }
        if viaRows, let image = try PNGRows.decode(data, checkSize: checkSize) { return image }
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        // png_image_begin_read_from_memory: frees the control block itself on failure.
        guard png_image_begin_read_from_memory(&image, data.baseAddress, data.count) != 0 else {
            throw corrupt(message(of: &image))
        }
        let width = Int(image.width), height = Int(image.height)
        do {
            try checkSize(width, height)
        } catch {
            png_image_free(&image)
            throw error
        }
        // PNG_FORMAT_RGBA (a macro Swift does not import).
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        // Without this flag libpng treats 16-bit files without gAMA/sRGB as
        // linear light and brightens them when reducing to 8 bits.
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let count = width * height * 4
        var failure: String?
        // Not zero-filled: libpng writes every row on success, and on failure
        // nothing is returned; a header that lies about a huge size then
        // costs address space, not touched memory.
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // png_image_finish_read: always frees the control block.
            if png_image_finish_read(&image, nil, buffer.baseAddress, Int32(width * 4), nil) == 0 {
                failure = message(of: &image)
            }
            initialized = count
        }
        if let failure { throw corrupt(failure) }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    /// The largest ancillary chunk (text, ICC profile, EXIF, …) we let
    /// libpng read: 8 MiB, far above any text, ICC profile or EXIF block a
    /// picture carries. The simplified API gives no way to set libpng's own
    /// limit (`png_set_chunk_malloc_max` needs the `png_struct` it hides).
    static let maxAncillaryChunk = 8 << 20

    /// Walks the chunk list before libpng sees it: libpng allocates an
    /// ancillary chunk's declared length before reading it, so a 112-byte
    /// file whose `tEXt` claims 2 GiB would cost 2 GiB. An ancillary chunk
    /// (lower-case first letter) longer than the bytes left in the file, or
    /// than `maxAncillaryChunk`, is refused here. Critical chunks are left
    /// to libpng, which reads them in pieces and reports truncation itself.
    ///
    /// - Returns: the reason, or nil when every chunk is plausible.
    static func oversizedAncillaryChunk(_ data: UnsafeRawBufferPointer) -> String? {
        var at = 8
        while at + 8 <= data.count {
            let length = Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
            let type = data[(at + 4)..<(at + 8)]
            let name = String(decoding: type.map { (0x20...0x7E).contains($0) ? $0 : 0x3F }, as: UTF8.self)
            let left = data.count - (at + 12)
            let ancillary = type[type.startIndex] & 0x20 != 0
            if ancillary, length > left || length > maxAncillaryChunk {
                return length > left
                    ? "chunk '\(name)' claims \(length) bytes, the file has \(max(left, 0)) left"
                    : "chunk '\(name)' claims \(length) bytes, more than the \(maxAncillaryChunk >> 20) MiB allowed for it"
            }
            if name == "IEND" || length > left { return nil }
            at += 12 + length
        }
        return nil
    }

    /// A growable byte buffer libpng's write callback appends to.
    private final class Output {
        var bytes: [UInt8] = []
    }

    /// Encodes RGBA8 as a truecolor-with-alpha PNG, tagged sRGB (an
    /// `sRGB` chunk, rendering intent perceptual: what every input was
    /// converted to on load).
    ///
    /// `level` is the zlib level (0 to 9). Levels 1 to 3 use only the cheap
    /// Sub and Up filters, higher levels let libpng try all five per row.
    static func encode(_ image: RGBAImage, level: Int) -> [UInt8] {
        encode(image.pixels, width: image.width, height: image.height, grey: false, level: level)
    }

    /// Encodes one byte a pixel as an 8-bit greyscale PNG (a mask), as
    /// `encode` does RGBA8.
    static func encode(grey mask: GreyMask, level: Int) -> [UInt8] {
        encode(mask.pixels, width: mask.width, height: mask.height, grey: true, level: level)
    }

    private static func encode(_ pixels: [UInt8], width: Int, height: Int, grey: Bool, level: Int) -> [UInt8] {
        let onError: png_error_ptr = { _, message in
            let text = message.map { String(cString: $0) } ?? "unknown error"
            fatalError("libpng write failed (out of memory?): \(text)")
        }
        let onWarning: png_error_ptr = { _, _ in }
        guard let created = png_create_write_struct(PNG_LIBPNG_VER_STRING, nil, onError, onWarning) else {
            fatalError("png_create_write_struct failed (out of memory)")
        }
        var png: png_structp? = created
        var info = png_create_info_struct(png)
        defer { png_destroy_write_struct(&png, &info) }
        guard info != nil else { fatalError("png_create_info_struct failed (out of memory)") }

        let output = Output()
        output.bytes.reserveCapacity(width * height + 1024)
        let box = Unmanaged.passRetained(output)
        defer { box.release() }
        png_set_write_fn(png, box.toOpaque(), { png, data, length in
            guard let io = png_get_io_ptr(png), let data, length > 0 else { return }
            let out = Unmanaged<Output>.fromOpaque(io).takeUnretainedValue()
            out.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        }, nil)

        let clamped = max(0, min(9, level))
        png_set_compression_level(png, Int32(clamped))
        let filters: Int32
        switch clamped {
        case 0: filters = Int32(PNG_FILTER_NONE)
        case 1...3: filters = Int32(PNG_FILTER_SUB | PNG_FILTER_UP)
        default: // PNG_ALL_FILTERS
            filters = Int32(PNG_FILTER_NONE | PNG_FILTER_SUB | PNG_FILTER_UP | PNG_FILTER_AVG | PNG_FILTER_PAETH)
        }
        png_set_filter(png, Int32(PNG_FILTER_TYPE_BASE), filters)
        png_set_IHDR(
            png, info, UInt32(width), UInt32(height), 8,
            Int32(grey ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB_ALPHA), Int32(PNG_INTERLACE_NONE),
            Int32(PNG_COMPRESSION_TYPE_DEFAULT), Int32(PNG_FILTER_TYPE_DEFAULT))
        png_set_sRGB(png, info, Int32(PNG_sRGB_INTENT_PERCEPTUAL))
        png_write_info(png, info)
        pixels.withUnsafeBufferPointer { pixels in
            let stride = width * (grey ? 1 : 4)
            for y in 0..<height {
                png_write_row(png, pixels.baseAddress! + y * stride)
            }
        }
        png_write_end(png, nil)
        return output.bytes
    }
}
