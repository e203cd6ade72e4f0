import Foundation
import WobbleCore
import WobbleSystem

/// Reading source images (PNG, JPEG) and writing PNG frames.
///
/// Every error is a `MediaError` whose message names the file as the caller
/// gave it, e.g. `image 'x.png': not a PNG or JPEG file`.
public enum ImageIO {
    /// The largest image file `load` reads into memory (512 MiB).
    public static let maxFileSize = 512 << 20

    /// The zlib level `encodePNG` uses by default.
    ///
    /// Measured on a 1280×720 photo frame (2 shared cores): level 4 with all
    /// five row filters takes about 125 ms and 1.39 MB, libpng's default
    /// (level 6) about 360 ms and 1.36 MB, level 1 about 50 ms and 1.64 MB.
    /// Frames are written on every render, so we take level 4: about three
    /// times faster than the default for files 3 % larger.
    public static let defaultPNGCompressionLevel = 4

    /// Loads a PNG or JPEG file as straight-alpha RGBA8.
    ///
    /// The format is told by the file's first bytes, not its extension.
    /// PNG goes through libpng's simplified API (16-bit, gray, palette and
    /// tRNS all become RGBA8); JPEG through TurboJPEG (alpha 255), turned
    /// upright as its EXIF Orientation tag says (`ExifOrientation`).
    /// The header's size is checked before pixel memory is allocated:
    /// more than `maxDimension` pixels on a side, or more than `maxPixels`
    /// in all, is refused.
    ///
    /// Colours come out sRGB: an image with an ICC profile (JPEG `APP2`,
    /// PNG `iCCP`), PNG `gAMA`/`cHRM`, or a CMYK JPEG with a profile is
    /// converted through it (`ColourProfile`, Little CMS); an untagged
    /// image or one tagged sRGB is used as stored, at no cost. Alpha is
    /// never changed. A profile that cannot be used leaves the pixels as
    /// stored and calls `warn` once with a line such as
    /// `image 'x.jpg': its ICC profile is damaged; the pixels are used as they are`.
    ///
    /// - Throws: `MediaError`, e.g. `image 'x.png': no such file`,
    ///   `image 'x.png': truncated or corrupt PNG (<libpng message>)`.
    public static func load(path: String, maxDimension: Int = Limits.maxImageSide, maxPixels: Int = Limits.maxImagePixels,
                            warn: (String) -> Void = { _ in }) throws -> RGBAImage {
        let data = try readFile(path: path)
        return try decode(data, name: path, maxDimension: maxDimension, maxPixels: maxPixels, warn: warn)
    }

    /// Decodes PNG or JPEG bytes already in memory, as `load` does.
    ///
    /// `name` is the file name the error messages show.
    public static func decode(_ data: [UInt8], name: String, maxDimension: Int = Limits.maxImageSide, maxPixels: Int = Limits.maxImagePixels,
                              warn: (String) -> Void = { _ in }) throws -> RGBAImage {
        let prefix = "image '\(name)': "
        let checkSize = { (width: Int, height: Int) throws in
            guard width > 0, height > 0 else {
                throw MediaError(prefix + "\(width)×\(height) has no pixels")
            }
            guard width <= maxDimension, height <= maxDimension else {
                throw MediaError(prefix + "\(width)×\(height) is larger than the renderer's limit of \(maxDimension) pixels per side")
            }
            guard width.multipliedReportingOverflow(by: height).partialValue <= maxPixels else {
                throw MediaError(prefix + "\(width)×\(height) is larger than the renderer's limit of \(maxPixels) pixels")
            }
            // The pixels are allocated next: where they cannot be (`ulimit -v`,
            // a cgroup's limit), one line now rather than a failed allocation,
            // which ends the process.
            try TaskBudget.requireMemory(width * height * 4 + width * 16, for: prefix + "reading \(width)×\(height)")
        }
        /// `image` converted to sRGB as `tag` says; a tag that cannot be used: one warning.
        /// In place: a 12-megapixel picture is 48 MB not to copy.
        func manage(_ image: inout RGBAImage, _ layout: ColourProfile.Layout, _ tag: ColourTag) {
            let (width, height) = (image.width, image.height)
            if let why = ColourProfile.convert(&image.pixels, width: width, height: height, layout: layout, tag: tag) {
                warn(prefix + why + "; the pixels are used as they are")
            }
        }
        return try data.withUnsafeBytes { raw in
            switch Format(magic: raw) {
            case .png:
                let corrupt = { (why: String) in MediaError(prefix + "truncated or corrupt PNG (\(why))") }
                if let lie = PNGCodec.oversizedAncillaryChunk(raw) { throw corrupt(lie) }
                let (tag, present) = ColourTag.png(raw)
                guard present else { return try PNGCodec.decode(raw, corrupt: corrupt, checkSize: checkSize) }
                // libpng would apply gAMA itself: it sees the stored values only.
                var image = try ColourTag.withoutColourChunks(raw).withUnsafeBytes {
                    try PNGCodec.decode($0, corrupt: corrupt, checkSize: checkSize)
                }
                // IHDR's colour type: 0 and 4 are grey (a grey profile).
                let grey = raw.count > 25 && (raw[25] == 0 || raw[25] == 4)
                manage(&image, grey ? .grey : .rgba, tag)
                return image
            case .jpeg:
                var (image, colours) = try JPEGCodec.decode(raw, corrupt: { MediaError(prefix + "truncated or corrupt JPEG (\($0))") }, checkSize: checkSize)
                let (tag, adobe) = ColourTag.jpeg(raw)
                if tag != .none || colours == .cmyk {
                    let layout: ColourProfile.Layout
                    switch colours {
                    case .rgb: layout = .rgba
                    case .grey: layout = .grey
                    // Adobe's APP14 marker: CMYK stored inverted (Photoshop's
                    // convention, which libjpeg, ImageMagick and Pillow follow).
                    case .cmyk: layout = .cmyk(inverted: adobe)
                    }
                    manage(&image, layout, tag)
                }
                return ExifOrientation.apply(ExifOrientation.of(jpeg: raw), to: image)
            case nil:
                throw MediaError(prefix + "not a PNG or JPEG file")
            }
        }
    }

    /// Encodes an image as an 8-bit RGBA PNG (libpng).
    ///
    /// `compressionLevel` is zlib's 0 (store) to 9 (smallest); levels up to
    /// 3 use only the cheap Sub and Up row filters, higher ones all five.
    /// The pixels are stored exactly, alpha straight.
    ///
    /// - Throws: `MediaError` for an image with no pixels.
    public static func encodePNG(_ image: RGBAImage, compressionLevel: Int = defaultPNGCompressionLevel) throws -> [UInt8] {
        guard image.width > 0, image.height > 0 else {
            throw MediaError("cannot write a PNG of \(image.width)×\(image.height) pixels")
        }
        guard image.width <= Int(Int32.max) / 4, image.height <= Int(Int32.max) else {
            throw MediaError("cannot write a PNG of \(image.width)×\(image.height) pixels: too large")
        }
        return PNGCodec.encode(image, level: compressionLevel)
    }

    /// Encodes a mask as an 8-bit greyscale PNG (255 object, 0 background),
    /// what `wobble-run cutout` and the studio write and a scene's
    /// `cutout = "PATH"` reads.
    ///
    /// - Throws: `MediaError` for a mask with no pixels.
    public static func encodeMaskPNG(_ mask: GreyMask, compressionLevel: Int = defaultPNGCompressionLevel) throws -> [UInt8] {
        guard mask.width > 0, mask.height > 0, mask.pixels.count == mask.width * mask.height else {
            throw MediaError("cannot write a PNG of \(mask.width)×\(mask.height) pixels")
        }
        return PNGCodec.encode(grey: mask, level: compressionLevel)
    }

    /// Writes an image as a PNG file, atomically (`AtomicFile`): an existing
    /// file at `path` stays intact until the new one is complete, and the
    /// new file gets the usual permissions (0644 under umask 022).
    ///
    /// - Throws: `MediaError` naming `path` when it cannot be written.
    public static func writePNG(_ image: RGBAImage, to path: String) throws {
        try AtomicFile.write(try encodePNG(image), to: path)
    }

    // MARK: - Internals

    /// The two formats we read, told by their signatures.
    enum Format {
        case png, jpeg
        init?(magic data: UnsafeRawBufferPointer) {
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            if data.count >= 8, data.prefix(8).elementsEqual(png) {
                self = .png
            } else if data.count >= 3, data[0] == 0xFF, data[1] == 0xD8, data[2] == 0xFF {
                self = .jpeg
            } else {
                return nil
            }
        }
    }

    /// Reads a whole file, refusing more than `maxFileSize` bytes.
    public static func readFile(path: String) throws -> [UInt8] {
        let prefix = "image '\(path)': "
        do {
            return try Posix.readFile(path, limit: maxFileSize)
        } catch let e as PosixError {
            if e.code == ENOENT { throw MediaError(prefix + "no such file") }
            throw MediaError(prefix + "cannot read: " + Posix.reason(e.code))
        } catch is FileTooLarge {
            throw MediaError(prefix + "the file is larger than \(maxFileSize >> 20) MiB")
        }
    }
}
