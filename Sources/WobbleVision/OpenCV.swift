internal import CWobbleVision
import WobbleCore

/// A failed OpenCV call: the C function and OpenCV's one-line reason.
public struct VisionError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The one file that calls the C shim (`CWobbleVision`, OpenCV inside):
/// every call through `check`, buffers owned here, no C type outside.
enum OpenCV {
    /// GrabCut labels (OpenCV's GC_BGD, GC_FGD, GC_PR_BGD, GC_PR_FGD).
    enum Label: UInt8 {
        case background = 0, object = 1, probablyBackground = 2, probablyObject = 3
    }

    /// Runs `body` with an error buffer; a result other than 0 becomes a
    /// `VisionError` naming `function` and OpenCV's reason.
    static func check(_ function: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
        var buffer = [CChar](repeating: 0, count: 512)
        let rc = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard rc == 0 else {
            let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw VisionError("\(function): \(reason.isEmpty ? "failed" : reason)")
        }
    }

    /// `cv::grabCut` on `rgb` (`width × height`, 3 bytes a pixel) from
    /// `labels` (one `Label` a pixel), refined in place.
    static func grabCut(rgb: [UInt8], width: Int, height: Int, labels: inout [UInt8], iterations: Int) throws {
        precondition(rgb.count == width * height * 3 && labels.count == width * height)
        try rgb.withUnsafeBufferPointer { image in
            try labels.withUnsafeMutableBufferPointer { l in
                try check("wobble_grabcut") { error, size in
                    wobble_grabcut(image.baseAddress, Int32(width), Int32(height), width * 3, l.baseAddress, Int32(iterations),
                                   error, size)
                }
            }
        }
    }

    /// The texture fill (coarse-to-fine patches, `wobble_fill_texture`) of
    /// `rgb` in place where `holes` is not 0.
    static func fillTexture(rgb: inout [UInt8], width: Int, height: Int, holes: [UInt8]) throws {
        precondition(rgb.count == width * height * 3 && holes.count == width * height)
        try rgb.withUnsafeMutableBufferPointer { image in
            try holes.withUnsafeBufferPointer { h in
                try check("wobble_fill_texture") { error, size in
                    wobble_fill_texture(image.baseAddress, Int32(width), Int32(height), width * 3, h.baseAddress, error, size)
                }
            }
        }
    }

    /// `cv::inpaint` (Telea) of `rgb` in place where `holes` is not 0.
    static func inpaint(rgb: inout [UInt8], width: Int, height: Int, holes: [UInt8], radius: Double) throws {
        precondition(rgb.count == width * height * 3 && holes.count == width * height)
        try rgb.withUnsafeMutableBufferPointer { image in
            try holes.withUnsafeBufferPointer { h in
                try check("wobble_inpaint") { error, size in
                    wobble_inpaint(image.baseAddress, Int32(width), Int32(height), width * 3, h.baseAddress, radius, error, size)
                }
            }
        }
    }
}

// Matting (closed-form and guided-filter alpha, foreground and background
// colours): `CutoutVision.matte` and `CutoutVision.plate` call these.
extension OpenCV {
    /// Closed-form matting of `alpha`'s pixels where `known` is 0 (the rest
    /// fixed), in place; `alpha` on them is the first guess.
    static func matteClosedForm(rgb: [UInt8], width: Int, height: Int, known: [UInt8], alpha: inout [UInt8], epsilon: Double,
                                iterations: Int) throws {
        precondition(rgb.count == width * height * 3 && known.count == width * height && alpha.count == width * height)
        try rgb.withUnsafeBufferPointer { image in
            try known.withUnsafeBufferPointer { k in
                try alpha.withUnsafeMutableBufferPointer { a in
                    try check("wobble_matte_closed_form") { error, size in
                        wobble_matte_closed_form(image.baseAddress, Int32(width), Int32(height), width * 3, k.baseAddress, a.baseAddress,
                                                 epsilon, Int32(iterations), error, size)
                    }
                }
            }
        }
    }

    /// The guided-filter matte of `alpha` (the hard mask) on the pixels
    /// where `known` is 0, in place.
    static func matteGuided(rgb: [UInt8], width: Int, height: Int, known: [UInt8], alpha: inout [UInt8], radius: Int,
                            epsilon: Double) throws {
        precondition(rgb.count == width * height * 3 && known.count == width * height && alpha.count == width * height)
        try rgb.withUnsafeBufferPointer { image in
            try known.withUnsafeBufferPointer { k in
                try alpha.withUnsafeMutableBufferPointer { a in
                    try check("wobble_matte_guided") { error, size in
                        wobble_matte_guided(image.baseAddress, Int32(width), Int32(height), width * 3, k.baseAddress, a.baseAddress,
                                            Int32(radius), epsilon, error, size)
                    }
                }
            }
        }
    }

    /// The foreground and background colours (3 bytes a pixel each) of
    /// `rgb` under `alpha` (multi-level estimation).
    static func foregroundBackground(rgb: [UInt8], width: Int, height: Int, alpha: [UInt8]) throws -> (foreground: [UInt8], background: [UInt8]) {
        precondition(rgb.count == width * height * 3 && alpha.count == width * height)
        var f = [UInt8](repeating: 0, count: rgb.count), b = f
        try rgb.withUnsafeBufferPointer { image in
            try alpha.withUnsafeBufferPointer { a in
                try f.withUnsafeMutableBufferPointer { fp in
                    try b.withUnsafeMutableBufferPointer { bp in
                        try check("wobble_foreground_background") { error, size in
                            wobble_foreground_background(image.baseAddress, Int32(width), Int32(height), width * 3, a.baseAddress,
                                                         fp.baseAddress, bp.baseAddress, error, size)
                        }
                    }
                }
            }
        }
        return (f, b)
    }
}
