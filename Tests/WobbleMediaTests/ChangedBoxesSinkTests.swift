import Foundation
import WobbleCore
@testable import WobbleMedia
import XCTest

/// Sinks given "this frame = the previous one plus these boxes" write the
/// same bytes as when they diff whole frames: GIF (with and without the
/// colour tolerance, through a matte), APNG and WebP, over frames with
/// blocks that start and stop moving, overlap, reach the edge, turn pixels
/// transparent and back, and frames where nothing changes.
final class ChangedBoxesSinkTests: XCTestCase {
    var scratch: Scratch!
    let w = 48, h = 36

    override func setUpWithError() throws { scratch = try Scratch() }

    /// The still: a gradient, a transparent patch and a band of partial alpha.
    var still: RGBAImage {
        var img = RGBAImage(width: w, height: h)
        for y in 0 ..< h {
            for x in 0 ..< w {
                let i = (y * w + x) * 4
                img.pixels[i] = UInt8(x * 5)
                img.pixels[i + 1] = UInt8(y * 7)
                img.pixels[i + 2] = UInt8((x * y) & 255)
                img.pixels[i + 3] = x > 38 && y < 10 ? 0 : (y > 30 ? UInt8(x * 5) : 255)
            }
        }
        return img
    }

    /// Frames with their boxes: block A moves in frames 2–8, B (overlapping
    /// A's path) in 5–11 and turns pixels transparent in 7–8, C at the right
    /// edge over the transparent patch in 9–12; frames 0–1 and 13–14 rest;
    /// frame 10 comes without boxes. Each frame's boxes hold the blocks'
    /// places in it and in the frame before.
    func frames() -> [(image: RGBAImage, changed: [PixelRect]?)] {
        let base = still
        func blocks(_ k: Int) -> [(PixelRect, (UInt8, UInt8, UInt8, UInt8))] {
            var out: [(PixelRect, (UInt8, UInt8, UInt8, UInt8))] = []
            if (2...8).contains(k) { out.append((PixelRect(x0: 3 + k, y0: 4, x1: 15 + k, y1: 14), (200, UInt8(k * 20), 40, 255))) }
            if (5...11).contains(k) {
                out.append((PixelRect(x0: 12, y0: 8 + k, x1: 24, y1: 16 + k), (UInt8(k * 9), 90, 210, (7...8).contains(k) ? 60 : 255)))
            }
            if (9...12).contains(k) { out.append((PixelRect(x0: 40, y0: 2, x1: 48, y1: 9 + k / 4), (30, 30, UInt8(k * 11), 255))) }
            return out
        }
        return (0 ..< 15).map { k in
            var img = base
            for (box, c) in blocks(k) {
                for y in box.y0 ..< box.y1 {
                    for x in box.x0 ..< box.x1 {
                        let i = (y * w + x) * 4
                        // Small colour steps inside the block: the GIF's tolerance keeps some.
                        img.pixels[i] = c.0 &+ UInt8((x + y) % 3)
                        img.pixels[i + 1] = c.1
                        img.pixels[i + 2] = c.2
                        img.pixels[i + 3] = c.3
                    }
                }
            }
            let boxes = (blocks(k) + (k > 0 ? blocks(k - 1) : [])).map(\.0)
            return (img, k == 10 ? nil : boxes)
        }
    }

    /// Writes the clip through the sink `make` builds, with or without boxes.
    func bytes(boxes: Bool, name: String, make: (String) throws -> FrameSink) throws -> [UInt8] {
        let path = scratch.path("\(name)-\(boxes ? "boxes" : "whole")")
        let sink = try make(path)
        for (k, f) in frames().enumerated() {
            if boxes { try sink.write(f.image, index: k, changed: f.changed) } else { try sink.write(f.image, index: k) }
        }
        try sink.finish()
        return try readBytes(path)
    }

    func assertSameBytes(_ name: String, make: (String) throws -> FrameSink, file: StaticString = #filePath, line: UInt = #line) throws {
        let whole = try bytes(boxes: false, name: name, make: make), boxed = try bytes(boxes: true, name: name, make: make)
        XCTAssertGreaterThan(whole.count, 100, name, file: file, line: line)
        XCTAssertTrue(whole == boxed, "\(name): \(whole.count) bytes diffing whole frames, \(boxed.count) with boxes",
                      file: file, line: line)
    }

    func testGIFWithBoxesIsTheSameFile() throws {
        let s = still, w = self.w, h = self.h
        try assertSameBytes("default.gif") { try GIFSink(path: $0, width: w, height: h, fps: 30, still: s) }
        try assertSameBytes("q100.gif") { try GIFSink(path: $0, width: w, height: h, fps: 30, still: s, quality: 100) }
        try assertSameBytes("q20.gif") { try GIFSink(path: $0, width: w, height: h, fps: 30, still: s, quality: 20) }
        // --matte: partly transparent pixels blended, boxes handed on.
        let matte = try XCTUnwrap(Matte.parse("#336699"))
        try assertSameBytes("matte.gif") { path in
            try MatteSink(matte: matte) { matted in try GIFSink(path: path, width: w, height: h, fps: 30, still: matted(s)) }
        }
    }

    func testAPNGAndWebPWithBoxesAreTheSameFile() throws {
        let w = self.w, h = self.h, n = frames().count
        try assertSameBytes("clip.apng") { try APNGSink(path: $0, width: w, height: h, fps: 30, frameCount: n) }
        try assertSameBytes("clip.webp") { try WebPSink(path: $0, width: w, height: h, fps: 30) }
    }
}
