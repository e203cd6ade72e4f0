import Foundation
import XCTest
import WobbleMedia
import WobbleCore
@testable import WobbleEngine

/// WebP's first quality predicted from a sample of the frames
/// (`PresetRun.WebPSample`): which frames it takes, how its file is read
/// back, a clip it predicts well (one whole encode) and one built to fool
/// it (the file written still fits).
final class WebPSampleTests: XCTestCase {
    static let w = 192, h = 144
    /// The box that changes in every frame after the first.
    static let box = (x0: 40, y0: 30, x1: 140, y1: 110)

    /// `n` frames at 30 fps: a gradient, and in `box` either noise (new
    /// every frame) or, for the frames in `flat`, one colour (another
    /// every frame): every pixel of the box changes from frame to frame
    /// either way, so every frame changes as many pixels.
    func clip(_ n: Int, flat: Set<Int> = []) throws -> FrameCollector {
        let (w, h, b) = (Self.w, Self.h, Self.box)
        let c = FrameCollector(canvas: (w, h), packs: false)
        var seed: UInt32 = 2024
        func image(_ k: Int) -> RGBAImage {
            var px = [UInt8](repeating: 255, count: w * h * 4)
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * w + x) * 4
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    let noise = UInt8(truncatingIfNeeded: seed >> 24)
                    let inBox = x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1
                    // (Blue's lowest bit is the frame's parity: every pixel of the box changes every frame.)
                    let parity = UInt8(k & 1)
                    if inBox && flat.contains(k) {
                        (px[i], px[i + 1], px[i + 2]) = (UInt8(k * 2 % 256), UInt8(255 - k * 2 % 256), 100 | parity)
                    } else if inBox {
                        (px[i], px[i + 1], px[i + 2]) = (noise, noise &+ 80, (255 &- noise) & 0xFE | parity)
                    } else {
                        (px[i], px[i + 1], px[i + 2]) = (UInt8(x * 255 / w), UInt8(y * 255 / h), 128)
                    }
                }
            }
            return RGBAImage(width: w, height: h, pixels: px)
        }
        let spec = OutputPlan.Frames(width: w, height: h, fps: 30, count: n, fullRender: true, loop: 0, quality: nil, alpha: true)
        let sink = try c.start(spec, still: { image(0) })
        for k in 0..<n {
            try sink.write(image(k), index: k, changed: k == 0 ? nil : [PixelRect(x0: b.x0, y0: b.y0, x1: b.x1, y1: b.y1)])
        }
        try sink.finish()
        return c
    }

    func run(limit: Int) -> PresetRun {
        let p = Preset(name: "tiny", what: "tiny stickers", formats: [.webp], fit: .longSide(Self.w), maxFPS: 30, maxDuration: 10,
                       frames: nil, byteLimit: limit, plays: .forever, source: "a test")
        return PresetRun(options: RenderOptions(), preset: p)
    }

    func spec(_ frames: FrameCollector) -> OutputPlan.Frames {
        OutputPlan.Frames(width: Self.w, height: Self.h, fps: 30, count: frames.count, fullRender: true, loop: 0,
                          quality: nil, alpha: true)
    }

    /// Frame 0, then 12 pairs (a frame and the one before it; one pair
    /// every 8 frames in a longer clip) spread over the frames that
    /// change; the first 3 pairs are the part encoded again for the
    /// slopes. A clip too short for the sample to cost well under an
    /// encode, or one where nothing changes, gets none.
    func testTheSampleIsTheFirstFrameThenPairsSpreadOverTheFramesThatChange() throws {
        let changed = [0] + Array(repeating: 0, count: 9) + Array(repeating: 5_000, count: 80)
        let s = try XCTUnwrap(PresetRun.WebPSample(changed: changed))
        let pairs = PresetRun.WebPSample.fewestPairs
        XCTAssertEqual(s.frames.first, 0)
        XCTAssertEqual(s.frames.count, 1 + 2 * pairs)
        XCTAssertEqual(s.frames, s.frames.sorted())
        let counted = s.frames.indices.dropFirst().filter { s.frames[$0] == s.frames[$0 - 1] + 1 }.map { s.frames[$0] }
        XCTAssertEqual(counted.count, pairs)
        XCTAssertTrue(counted.allSatisfy { $0 >= 10 }, "only frames that change: \(counted)")
        XCTAssertGreaterThan(counted.last!, 80, "spread to the end: \(counted)")
        XCTAssertLessThan(counted.first!, 20, "from the start of the change: \(counted)")
        XCTAssertEqual(s.part, Array(s.frames.prefix(1 + 2 * PresetRun.WebPSample.partPairs)))
        let long = try XCTUnwrap(PresetRun.WebPSample(changed: [0] + Array(repeating: 100, count: 399)))
        XCTAssertEqual(long.frames.count, 1 + 2 * 400 / PresetRun.WebPSample.framesPerPair)
        XCTAssertNil(PresetRun.WebPSample(changed: Array(changed.prefix(40))), "the sample would cost most of an encode")
        XCTAssertNil(PresetRun.WebPSample(changed: Array(repeating: 0, count: 90)), "a still clip")
    }

    /// A WebP's frames read back: every chunk's bytes and the file's
    /// header make the file, and the durations its length.
    func testAWebPsFramesAreReadBackChunkByChunk() throws {
        let frames = try clip(40)
        let c = try run(limit: 10_000_000).encode(frames, spec: spec(frames), format: .webp, level: 70)
        let chunks = try XCTUnwrap(WebPFrames.sizes(c.data))
        XCTAssertEqual(chunks.count, 40)
        let header = c.data.count - chunks.reduce(0) { $0 + $1.bytes }
        XCTAssertGreaterThan(header, 12)
        XCTAssertLessThan(header, 64, "RIFF, VP8X and ANIM")
        XCTAssertEqual(chunks.reduce(0) { $0 + $1.duration }, AnimationTiming.millisecond(index: 40, fps: 30))
        XCTAssertGreaterThan(chunks[0].bytes, chunks[1].bytes, "the first frame whole, then the box")
        XCTAssertNil(WebPFrames.sizes(Array(c.data.prefix(c.data.count - 10))), "a chunk past the end")
        XCTAssertNil(WebPFrames.sizes([UInt8](repeating: 0, count: 40)))
    }

    /// A clip whose frames all change alike: the sample predicts its file
    /// closely, the first whole encode lands between 85% of the limit and
    /// the limit, and it is the only one.
    /// The WebP search at a limit that quality 60's file fills to 92%:
    /// what it found, the limit, the smallest file it made.
    func searchedAtALimitQuality60Fills(_ frames: FrameCollector) throws -> (found: PresetRun.Candidate, limit: Int, smallest: Int) {
        let at60 = try run(limit: 10_000_000).encode(frames, spec: spec(frames), format: .webp, level: 60).bytes
        let limit = Int(Double(at60) / 0.92)
        var smallest = Int.max
        let c = try XCTUnwrap(try run(limit: limit).search(frames, format: .webp, fps: 30, loop: 0, smallest: &smallest))
        return (c, limit, smallest)
    }

    func testAClipTheSamplePredictsIsOneEncode() throws {
        let frames = try clip(90)
        XCTAssertEqual(frames.changedPixels.count, 90)
        XCTAssertEqual(Set(frames.changedPixels.dropFirst()), [100 * 80], "every pixel of the box, every frame")
        let (c, limit, _) = try searchedAtALimitQuality60Fills(frames)
        XCTAssertEqual(c.tries, 1, "quality \(c.level), \(c.bytes) of \(limit)")
        XCTAssertLessThanOrEqual(c.bytes, limit)
        XCTAssertGreaterThanOrEqual(Double(c.bytes), PresetRun.QualityModel.closeEnough * Double(limit))
        XCTAssertEqual(c.data.count, c.bytes)
    }

    /// A clip built to fool the sample: the frames it takes have a flat
    /// box (a few bytes), every other frame noise. The sample predicts a
    /// small file, the first whole encode is over the limit, and the
    /// search goes on to a file that fits.
    func testAClipBuiltToFoolTheSampleStillFits() throws {
        let n = 90
        let box = (Self.box.x1 - Self.box.x0) * (Self.box.y1 - Self.box.y0)
        let sample = try XCTUnwrap(PresetRun.WebPSample(changed: [0] + Array(repeating: box, count: n - 1)))
        let frames = try clip(n, flat: Set(sample.frames))
        XCTAssertEqual(frames.changedPixels, [0] + Array(repeating: box, count: n - 1), "the sample it takes is that one")
        let (c, limit, smallest) = try searchedAtALimitQuality60Fills(frames)
        XCTAssertGreaterThan(c.tries, 1, "the first encode was over")
        XCTAssertLessThanOrEqual(c.bytes, limit)
        XCTAssertEqual(c.data.count, c.bytes)
        XCTAssertGreaterThan(smallest, 0)
        // What it keeps is the whole clip's file at its quality.
        let again = try run(limit: 10_000_000).encode(frames, spec: spec(frames), format: .webp, level: c.level)
        XCTAssertEqual(again.data, c.data)
    }
}
