internal import CLCMS2
import Foundation
import WobbleSystem

/// The only file that calls Little CMS (C stays at the edge: one Swift file per C library).
///
/// Converts decoded pixels to sRGB through the colour space their file
/// declares (`ColourTag`): an ICC profile, or a profile built from PNG's
/// `gAMA`/`cHRM`. lcms2 reports failures by return values (NULL, FALSE)
/// and through a log handler; it never jumps. Each conversion runs in its
/// own `cmsContext`, whose handler keeps lcms's first message for the
/// warning, so nothing is global and threads do not mix messages.
///
/// Rendering intent: perceptual, with no black-point compensation (see
/// docs/DECISIONS.md). For the matrix-and-curves profiles of cameras,
/// phones and editors (Adobe RGB, Display P3, ProPhoto) lcms computes the
/// same colorimetric conversion for every intent; a table-based profile
/// (CMYK) brings its own perceptual table for this. The result depends on
/// nothing but the pixels and the profile (lcms2 is deterministic, and
/// the rows split over threads all use one precomputed transform).
enum ColourProfile {
    /// How the decoded pixels lie in memory: 4 bytes a pixel either way.
    enum Layout: Equatable {
        /// RGBA8, straight alpha (alpha is left as it is).
        case rgba
        /// RGBA8 with R = G = B: a grey image decoded as RGBA (a grey profile).
        case grey
        /// CMYK8 as the JPEG stores it; `inverted`: Adobe's convention
        /// (0 is full ink), told by an APP14 `Adobe` marker. Comes out RGBA,
        /// alpha 255.
        case cmyk(inverted: Bool)
    }

    /// Converts `pixels` (width × height × 4 bytes, in `layout`) to sRGB
    /// RGBA8 in place, as `tag` says they are.
    ///
    /// - Returns: nil when the pixels are sRGB now (converted, or sRGB
    ///   already: an sRGB profile costs no conversion), or why the tag
    ///   cannot be used, e.g. `its ICC profile is damaged`: the pixels are
    ///   then left as they are (a CMYK image through the plain formula).
    static func convert(_ pixels: inout [UInt8], width: Int, height: Int, layout: Layout, tag: ColourTag) -> String? {
        let reason: String?
        switch tag {
        case .none, .sRGB:
            reason = nil
        case .broken(let why):
            reason = why
        case .icc(let bytes):
            reason = convert(&pixels, width: width, height: height, layout: layout) { context, log in
                try check(bytes.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number($0.count)) },
                          "cmsOpenProfileFromMemTHR", log)
            }
        case .chunks(let gamma, let chromaticities):
            reason = convert(&pixels, width: width, height: height, layout: layout) { context, log in
                try check(pngProfile(context, gamma: gamma, chromaticities: chromaticities, grey: layout == .grey),
                          "cmsCreateRGBProfileTHR", log)
            }
        }
        if case .cmyk(let inverted) = layout, reason != nil || !tag.hasProfile {
            plainCMYK(&pixels, inverted: inverted)
        }
        return reason
    }

    /// The message lcms logged first in one context (its log handler's user data).
    private final class Log {
        var first: String?
    }

    /// Why lcms could not do its part: the call that failed and what lcms logged.
    private struct Failure: Error {
        let function: String
        let logged: String?
    }

    /// The one checked call: lcms returns NULL on failure and logs why
    /// through the context's handler (`Log`).
    private static func check<T>(_ result: T?, _ function: String, _ log: Log) throws -> T {
        guard let result else { throw Failure(function: function, logged: log.first) }
        return result
    }

    /// Opens the source profile with `open`, checks it fits `layout`, and
    /// converts unless it is sRGB itself; nil, or why not.
    private static func convert(_ pixels: inout [UInt8], width: Int, height: Int, layout: Layout,
                                open: (cmsContext, Log) throws -> cmsHPROFILE) -> String? {
        let log = Log()
        let box = Unmanaged.passRetained(log)
        defer { box.release() }
        guard let context = cmsCreateContext(nil, box.toOpaque()) else { return "its colour profile cannot be used (cmsCreateContext failed: out of memory)" }
        defer { cmsDeleteContext(context) }
        cmsSetLogErrorHandlerTHR(context) { context, _, text in
            guard let context, let user = cmsGetContextUserData(context), let text else { return }
            let log = Unmanaged<Log>.fromOpaque(user).takeUnretainedValue()
            if log.first == nil { log.first = String(cString: text) }
        }
        do {
            return try convert(&pixels, width: width, height: height, layout: layout, source: try open(context, log), context: context, log: log)
        } catch let failure as Failure {
            switch failure.function {
            case "cmsOpenProfileFromMemTHR": return "its ICC profile is damaged"
            case "cmsCreateRGBProfileTHR": return "its gAMA/cHRM chunks describe no usable colour space"
            default: return "its colour profile cannot convert to sRGB (\(failure.function): \(failure.logged ?? "failed"))"
            }
        } catch {
            return "its colour profile cannot be used (\(error))"
        }
    }

    /// `convert` with the profile open (closed here).
    private static func convert(_ pixels: inout [UInt8], width: Int, height: Int, layout: Layout,
                                source: cmsHPROFILE, context: cmsContext, log: Log) throws -> String? {
        defer { cmsCloseProfile(source) }
        let space = cmsGetColorSpace(source)
        let (wanted, format): (cmsColorSpaceSignature, cmsUInt32Number)
        switch layout {
        case .rgba: (wanted, format) = (cmsSigRgbData, Format.rgba)
        case .grey: (wanted, format) = (cmsSigGrayData, Format.greyInRGBA)
        case .cmyk(let inverted): (wanted, format) = (cmsSigCmykData, inverted ? Format.cmykInverted : Format.cmyk)
        }
        guard space == wanted else {
            return "its ICC profile is for \(name(space)) colour but the image is \(name(wanted))"
        }
        if layout != .grey, isSRGB(source) { return nil }
        let target = try check(cmsCreate_sRGBProfileTHR(context), "cmsCreate_sRGBProfileTHR", log)
        defer { cmsCloseProfile(target) }
        // NOCACHE: the rows are converted on several threads at once.
        let flags = cmsUInt32Number(cmsFLAGS_NOCACHE)
        let transform = try check(cmsCreateTransformTHR(context, source, format, target, Format.rgba,
                                                        cmsUInt32Number(INTENT_PERCEPTUAL), flags), "cmsCreateTransformTHR", log)
        defer { cmsDeleteTransform(transform) }
        let cmyk: Bool
        if case .cmyk = layout { cmyk = true } else { cmyk = false }
        // Rows in chunks over the cores: 12 megapixels of Adobe RGB take
        // about 0.2 s of CPU (Scripts/bench-colour.sh).
        let cores = max(1, min(ThisProcess.cores, 8))
        let chunks = max(1, min(cores, width * height / (1 << 18)))
        let rowsPer = (height + chunks - 1) / chunks
        pixels.withUnsafeMutableBytes { raw in
            nonisolated(unsafe) let base = raw.baseAddress!
            nonisolated(unsafe) let t = transform
            Parallel.run(chunks) { c in
                let first = c * rowsPer, rows = min(rowsPer, height - first)
                guard rows > 0 else { return }
                let start = base + first * width * 4
                // In place: input and output are 4 bytes a pixel, and the
                // output's fourth byte (alpha) is skipped, not written.
                cmsDoTransformLineStride(t, start, start, cmsUInt32Number(width), cmsUInt32Number(rows),
                                         cmsUInt32Number(width * 4), cmsUInt32Number(width * 4), 0, 0)
                if cmyk {
                    var i = 3
                    let end = rows * width * 4
                    let bytes = start.assumingMemoryBound(to: UInt8.self)
                    while i < end { bytes[i] = 255; i += 4 }
                }
            }
        }
        return nil
    }

    /// lcms pixel formats (its `TYPE_*` macros are not imported by Swift):
    /// colour space << 16, flavour (0 is full ink) << 13, extra channels
    /// << 7, channels << 3, bytes per sample.
    private enum Format {
        static let rgba = cmsUInt32Number(PT_RGB << 16 | 1 << 7 | 3 << 3 | 1)
        /// The grey level read from R; G, B and A skipped.
        static let greyInRGBA = cmsUInt32Number(PT_GRAY << 16 | 3 << 7 | 1 << 3 | 1)
        static let cmyk = cmsUInt32Number(PT_CMYK << 16 | 4 << 3 | 1)
        static let cmykInverted = cmsUInt32Number(PT_CMYK << 16 | 1 << 13 | 4 << 3 | 1)
    }

    private static func name(_ space: cmsColorSpaceSignature) -> String {
        switch space {
        case cmsSigRgbData: return "RGB"
        case cmsSigGrayData: return "grey"
        case cmsSigCmykData: return "CMYK"
        case cmsSigLabData: return "Lab"
        case cmsSigXYZData: return "XYZ"
        default:
            let v = space.rawValue
            let chars = [24, 16, 8, 0].map { UInt8((v >> UInt32($0)) & 0xFF) }.filter { (0x21...0x7E).contains($0) }
            return String(decoding: chars, as: UTF8.self)
        }
    }

    /// The sRGB colorants as an ICC profile stores them (adapted to D50).
    private static let sRGBColorants: [(Double, Double, Double)] = [
        (0.4361, 0.2225, 0.0139), (0.3851, 0.7169, 0.0971), (0.1431, 0.0606, 0.7141),
    ]

    /// True for a matrix-and-curves RGB profile that is sRGB within what
    /// 8 bits show: colorants within 0.002 of sRGB's, curves within 0.5/255.
    /// Such an image is already sRGB and costs no conversion.
    private static func isSRGB(_ profile: cmsHPROFILE) -> Bool {
        guard cmsIsMatrixShaper(profile) != 0 else { return false }
        let colorants = [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag]
        for (tag, expected) in zip(colorants, sRGBColorants) {
            guard let raw = cmsReadTag(profile, tag) else { return false }
            let xyz = raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee
            guard abs(xyz.X - expected.0) < 0.002, abs(xyz.Y - expected.1) < 0.002, abs(xyz.Z - expected.2) < 0.002 else { return false }
        }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(profile, tag) else { return false }
            let curve = OpaquePointer(raw)
            for i in 0...64 {
                let v = Double(i) / 64
                let srgb = v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
                guard abs(Double(cmsEvalToneCurveFloat(curve, Float(v))) - srgb) < 0.5 / 255 else { return false }
            }
        }
        return true
    }

    /// A profile from PNG's `gAMA` (the file's encoding exponent, e.g.
    /// 0.45455) and `cHRM`; without `gAMA` the sRGB curve, without `cHRM`
    /// sRGB's primaries and D65 white. `grey`: a grey profile (the curve
    /// and the white point only), for a grey PNG.
    private static func pngProfile(_ context: cmsContext, gamma: Double?, chromaticities: Chromaticities?, grey: Bool = false) -> cmsHPROFILE? {
        let c = chromaticities ?? .sRGB
        var white = cmsCIExyY(x: c.white.x, y: c.white.y, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: c.red.x, y: c.red.y, Y: 1),
            Green: cmsCIExyY(x: c.green.x, y: c.green.y, Y: 1),
            Blue: cmsCIExyY(x: c.blue.x, y: c.blue.y, Y: 1))
        let curve: OpaquePointer?
        if let gamma {
            curve = cmsBuildGamma(context, 1 / gamma)
        } else {
            // IEC 61966-2.1: ((v + 0.055) / 1.055)^2.4 above 0.04045, v / 12.92 below.
            let parameters: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            curve = parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(context, 4, $0.baseAddress) }
        }
        guard let curve else { return nil }
        defer { cmsFreeToneCurve(curve) }
        if grey { return cmsCreateGrayProfileTHR(context, &white, curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        return curves.withUnsafeMutableBufferPointer { cmsCreateRGBProfileTHR(context, &white, &primaries, $0.baseAddress) }
    }

    /// The ICC bytes of the profile `convert` builds for PNG `gAMA`/`cHRM`
    /// (tests and the image fuzzer embed it in their files), or nil.
    static func iccBytes(gamma: Double?, chromaticities: Chromaticities?) -> [UInt8]? {
        guard let context = cmsCreateContext(nil, nil) else { return nil }
        defer { cmsDeleteContext(context) }
        guard let profile = pngProfile(context, gamma: gamma, chromaticities: chromaticities) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(profile, $0.baseAddress, &size) }) != 0 else { return nil }
        return bytes
    }

    /// CMYK to RGB without a profile, as most viewers show an untagged
    /// CMYK JPEG: R = (1 - C)(1 - K), and so on; alpha 255.
    private static func plainCMYK(_ pixels: inout [UInt8], inverted: Bool) {
        pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                var c = UInt32(p[i]), m = UInt32(p[i + 1]), y = UInt32(p[i + 2]), k = UInt32(p[i + 3])
                if !inverted { (c, m, y, k) = (255 - c, 255 - m, 255 - y, 255 - k) }
                // Adobe's inverted values: R = C·K / 255.
                p[i] = UInt8((c * k + 127) / 255)
                p[i + 1] = UInt8((m * k + 127) / 255)
                p[i + 2] = UInt8((y * k + 127) / 255)
                p[i + 3] = 255
                i += 4
            }
        }
    }
}
