import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleTestSupport
@testable import WobbleEngine

/// The preset's frames kept once, only where they changed, and given back
/// whole: every replayed frame equals the rendered frame on its canvas.
final class FrameCollectorTests: XCTestCase {
    /// A 30×20 picture whose pixels depend on the frame inside `box` only.
    func frame(_ k: Int, box: PixelRect) -> RGBAImage {
        var px = [UInt8](repeating: 0, count: 30 * 20 * 4)
        for y in 0..<20 {
            for x in 0..<30 {
                let i = (y * 30 + x) * 4
                let inside = x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1
                let v = inside ? (x * 7 + y * 3 + k * 40) : (x * 5 + y * 11)
                px[i] = UInt8(v & 255)
                px[i + 1] = UInt8((v * 3) & 255)
                px[i + 2] = inside ? UInt8(k * 9 & 255) : 7
                px[i + 3] = inside ? UInt8(100 + k) : 255
            }
        }
        return RGBAImage(width: 30, height: 20, pixels: px)
    }

    func testReplayedFramesAreTheRenderedOnesOnTheCanvas() throws {
        for canvas in [(30, 20), (40, 40)] {
            let c = FrameCollector(canvas: canvas, packs: canvas.0 == 30)   // packed and not
            let spec = OutputPlan.Frames(width: 30, height: 20, fps: 30, count: 6, fullRender: true, loop: 0, quality: nil)
            let box = PixelRect(x0: 5, y0: 4, x1: 17, y1: 12)
            let sink = try c.start(spec) { self.frame(0, box: box) }
            var rendered: [RGBAImage] = []
            for k in 0..<6 {
                var f = frame(k, box: box)
                if k == 3 { f = rendered[2] }                       // unchanged: no box
                rendered.append(f)
                // Frame 4's boxes unknown (nil): kept whole.
                try sink.write(f, index: k, changed: k == 0 || k == 4 ? nil : (k == 3 ? [] : [box, PixelRect(x0: 25, y0: 18, x1: 40, y1: 30)]))
            }
            try sink.finish()
            XCTAssertEqual(c.count, 6)
            var replay = c.replay()
            for k in 0..<6 {
                let got = replay.frame(k)
                XCTAssertTrue(got.image == c.pad(rendered[k]), "canvas \(canvas) frame \(k)")
                let (ox, oy) = ((canvas.0 - 30) / 2, (canvas.1 - 20) / 2)
                switch k {
                case 0, 4: XCTAssertNil(got.changed)
                case 3: XCTAssertEqual(got.changed, [])
                default: XCTAssertEqual(got.changed, [PixelRect(x0: 5 + ox, y0: 4 + oy, x1: 17 + ox, y1: 12 + oy),
                                                      PixelRect(x0: 25 + ox, y0: 18 + oy, x1: 30 + ox, y1: 20 + oy)])
                }
            }
        }
    }

    /// Past `unpackedFrames` canvases' bytes the changed pixels are packed,
    /// before that kept as they are; either way every replayed frame is the
    /// rendered one, and a frame the caller still holds is not changed by
    /// the next one (the running frame is updated in place only where it is
    /// the collector's alone).
    func testFramesPastTheUnpackedBytesArePackedAndEveryFrameComesBack() throws {
        let box = PixelRect(x0: 2, y0: 1, x1: 28, y1: 19)   // 26 × 18 pixels: 1,872 bytes a frame
        let boxBytes = 26 * 18 * 4, canvasBytes = 30 * 20 * 4
        let n = FrameCollector.unpackedFrames * canvasBytes / boxBytes + 12
        let c = FrameCollector(canvas: (30, 20))
        let spec = OutputPlan.Frames(width: 30, height: 20, fps: 30, count: n, fullRender: true, loop: 0, quality: nil)
        // Smooth pixels (a gradient moving with k): they pack.
        func smooth(_ k: Int) -> RGBAImage {
            var f = frame(0, box: box)
            for y in box.y0..<box.y1 {
                for x in box.x0..<box.x1 {
                    let i = (y * 30 + x) * 4
                    f.pixels[i] = UInt8((x + k) & 255)
                    f.pixels[i + 1] = UInt8((y * 2 + k) & 255)
                    f.pixels[i + 2] = UInt8(k & 255)
                    f.pixels[i + 3] = 255
                }
            }
            return f
        }
        let sink = try c.start(spec) { smooth(0) }
        for k in 0..<n { try sink.write(smooth(k), index: k, changed: k == 0 ? nil : [box]) }
        try sink.finish()
        let unpacked = FrameCollector.unpackedFrames * canvasBytes / boxBytes
        // The first frame whole, `unpacked` boxes as they are, the other
        // boxes (n - 1 - unpacked of them) packed to under half.
        XCTAssertGreaterThan(c.storedBytes, canvasBytes + unpacked * boxBytes)
        XCTAssertLessThan(c.storedBytes, canvasBytes + unpacked * boxBytes + (n - 1 - unpacked) * boxBytes / 2)
        var replay = c.replay()
        var held: [RGBAImage] = []
        for k in 0..<n {
            let got = replay.frame(k)
            held.append(got.image)
            XCTAssertTrue(got.image == smooth(k), "frame \(k)")
        }
        for k in 0..<n { XCTAssertTrue(held[k] == smooth(k), "frame \(k), held while the later ones were replayed") }
        // A second replay gives the same frames again.
        var again = c.replay()
        for k in 0..<n { XCTAssertTrue(again.frame(k).image == smooth(k), "frame \(k), replayed again") }
    }

    /// Packed pixels unpack straight into a box of a bigger picture: its
    /// rows land at the picture's stride, the bytes around them untouched.
    func testPackedPixelsUnpackIntoABoxOfAPicture() {
        var box: [UInt8] = []
        for y in 0..<6 { for x in 0..<10 { box += [UInt8(x * 9 & 255), UInt8(y * 20 & 255), UInt8((x * y) & 255), 200] } }
        for pack in [true, false] {
            let p = PackedPixels(box, rowBytes: 10 * 4, pack: pack)
            if pack { XCTAssertLessThan(p.storedBytes, box.count, "a gradient packs") }
            var picture = [UInt8](repeating: 77, count: 16 * 9 * 4)
            picture.withUnsafeMutableBytes { p.unpack(into: $0.baseAddress! + (2 * 16 + 3) * 4, rowStride: 16 * 4) }
            for y in 0..<9 {
                for x in 0..<16 {
                    let i = (y * 16 + x) * 4
                    let inside = (3..<13).contains(x) && (2..<8).contains(y)
                    let want = inside ? Array(box[((y - 2) * 10 + x - 3) * 4..<((y - 2) * 10 + x - 3) * 4 + 4]) : [77, 77, 77, 77]
                    XCTAssertEqual(Array(picture[i..<(i + 4)]), want, "pixel \(x),\(y) packed \(pack)")
                }
            }
        }
    }

    /// The kept pixels are packed and come back byte for byte: smooth rows
    /// (a gradient) take far less, noise and rows of one pixel stay whole.
    func testPackedPixelsComeBackExactly() {
        var smooth: [UInt8] = []
        for y in 0..<40 { for x in 0..<64 { smooth += [UInt8(x * 3 & 255), UInt8((x + y) & 255), UInt8(y * 5 & 255), 255] } }
        let p = PackedPixels(smooth, rowBytes: 64 * 4)
        XCTAssertEqual(p.unpack(), smooth)
        XCTAssertLessThan(p.storedBytes, smooth.count / 10, "a gradient packs small")
        var noise = SplitMix64(state: 7)
        let random = (0..<(33 * 17 * 4)).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
        let q = PackedPixels(random, rowBytes: 33 * 4)
        XCTAssertEqual(q.unpack(), random)
        XCTAssertLessThanOrEqual(q.storedBytes, random.count, "never more than the pixels")
        let column = (0..<(9 * 4)).map { UInt8($0 * 7 & 255) }
        XCTAssertEqual(PackedPixels(column, rowBytes: 4).unpack(), column)
    }
}
