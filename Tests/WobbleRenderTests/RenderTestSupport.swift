import Foundation
import WobbleCore
import WobbleRender
import XCTest

/// A GLES renderer for a test. The GLES tests run wherever Mesa is installed
/// (CI uses llvmpipe): a missing EGL display fails the test loudly, unless
/// WOBBLE_SKIP_GLES=1 is set, which skips it.
func makeGLES(_ source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil) throws -> GLESRenderer {
    if ProcessInfo.processInfo.environment["WOBBLE_SKIP_GLES"] == "1" {
        throw XCTSkip("WOBBLE_SKIP_GLES=1")
    }
    do {
        return try GLESRenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
    } catch {
        XCTFail("GLES renderer unavailable (set WOBBLE_SKIP_GLES=1 to skip): \(error)")
        throw error
    }
}

/// A deterministic test picture: gradients, a hard-edged checker, noise, a
/// fully transparent patch and a band of partial alpha.
func testImage(width: Int, height: Int, seed: UInt64 = 1) -> RGBAImage {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    func next() -> UInt8 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
    var px = [UInt8](repeating: 0, count: width * height * 4)
    for y in 0 ..< height {
        for x in 0 ..< width {
            let i = (y * width + x) * 4
            let checker = ((x / 5) + (y / 5)) % 2 == 0
            px[i] = UInt8(x * 255 / max(width - 1, 1))
            px[i + 1] = UInt8(y * 255 / max(height - 1, 1))
            px[i + 2] = checker ? 230 : next() / 4
            var a: UInt8 = 255
            if x > width * 2 / 3 && y < height / 3 { a = 0 }                  // transparent patch
            else if y > height * 3 / 4 { a = UInt8((x * 7) % 256) }           // partial alpha band
            px[i + 3] = a
        }
    }
    return RGBAImage(width: width, height: height, pixels: px)
}

/// How far two images are apart, channel by channel.
struct ImageDifference: CustomStringConvertible {
    var channels = 0
    var within2 = 0
    var over8 = 0
    var maxDiff = 0
    var changedFromStill = 0

    var fractionWithin2: Double { channels == 0 ? 1 : Double(within2) / Double(channels) }

    init(_ a: RGBAImage, _ b: RGBAImage) {
        precondition(a.width == b.width && a.height == b.height)
        channels = a.pixels.count
        for k in 0 ..< a.pixels.count {
            let d = abs(Int(a.pixels[k]) - Int(b.pixels[k]))
            if d <= 2 { within2 += 1 }
            if d > 8 { over8 += 1 }
            maxDiff = max(maxDiff, d)
        }
    }

    var description: String {
        String(format: "%.4f%% of %d channels within 2, max diff %d, %d over 8",
               fractionWithin2 * 100, channels, maxDiff, over8)
    }
}

/// A region frame for `shape` at time `t` of an impulse at `t0` (as
/// `Clip.frame` builds it), or nil when it does not move then.
func regionFrame(_ shape: RegionShape, direction: Point, amplitude: Double = 1, t0: Double = 0, t: Double,
                 parameters: WobbleParameters = .original) -> RegionFrame? {
    let len = direction.length
    return regionFrame(shape, kicks: [Impulse(start: t0, direction: direction / len, amplitude: amplitude)], t: t,
                       parameters: parameters)
}

/// A region frame for `shape` at time `t` after `kicks` (added in order as
/// the scene adds them), or nil when it does not move then.
func regionFrame(_ shape: RegionShape, kicks: [Impulse], t: Double, parameters: WobbleParameters) -> RegionFrame? {
    let model = parameters.model
    let history = kicks.reduce(into: [Impulse]()) { h, k in h = model.adding(k, to: h) }
    let r = model.reading(history, at: t, preparedAt: 0)
    let peak = shape.maxDisplacement(amplitude: r.level, strength: parameters.strength)
    guard shape.canMove, peak > 0, r.swing != 0 else { return nil }
    return RegionFrame(shape: shape, peak: peak, direction: r.offsetDirection, swing: r.swing)
}

extension RegionFrame {
    /// A classic region at a given cycle progress (tests only).
    init(shape: RegionShape, direction: Point, peak: Double, progress: Double) {
        self.init(shape: shape, peak: peak, direction: direction, swing: progress)
    }
}

func frameState(_ regions: [RegionFrame?], index: Int = 0, time: Double = 0, overlap: OverlapMode = .sum,
                edges: EdgeMode = .mirror) -> FrameState {
    FrameState(index: index, time: time, regions: regions.compactMap { $0 }, overlay: [], overlayOn: false,
               overlap: overlap, edges: edges)
}

func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, center: Point? = nil) -> RegionShape {
    let c = center ?? Point(x + w / 2, y + h / 2)
    return RegionShape(lt: Point(x, y), rt: Point(x + w, y), rb: Point(x + w, y + h), lb: Point(x, y + h), center: c)
}

/// Writes `image` as a PNG via a PAM file and ImageMagick's `convert`
/// (test diagnostics only: WOBBLE_DUMP_DIR).
func dumpPNG(_ image: RGBAImage, name: String) {
    guard let dir = ProcessInfo.processInfo.environment["WOBBLE_DUMP_DIR"] else { return }
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let pam = "\(dir)/\(name).pam"
    var data = Data("P7\nWIDTH \(image.width)\nHEIGHT \(image.height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n".utf8)
    data.append(contentsOf: image.pixels)
    _ = FileManager.default.createFile(atPath: pam, contents: data)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["convert", pam, "\(dir)/\(name).png"]
    try? p.run()
    p.waitUntilExit()
    try? FileManager.default.removeItem(atPath: pam)
}
