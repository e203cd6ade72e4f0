import Foundation
import WobbleCore
import WobbleMedia
import XCTest

/// A measuring harness, skipped unless `WOBBLE_GIF_BENCH` names a raw RGBA
/// file of frames (`WOBBLE_GIF_BENCH_SIZE=WxH`; the first frame is the
/// still): encodes them to `WOBBLE_GIF_BENCH_OUT` and prints the time.
final class GIFBenchTests: XCTestCase {
    func testEncodeRawFrames() throws {
        let env = ProcessInfo.processInfo.environment
        guard let raw = env["WOBBLE_GIF_BENCH"], let size = env["WOBBLE_GIF_BENCH_SIZE"],
              let out = env["WOBBLE_GIF_BENCH_OUT"] else { throw XCTSkip("WOBBLE_GIF_BENCH not set") }
        let wh = size.split(separator: "x").map { Int($0)! }
        let (w, h) = (wh[0], wh[1])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        let n = data.count / (w * h * 4)
        let frames = (0..<n).map { k in
            RGBAImage(width: w, height: h, pixels: [UInt8](data[(k * w * h * 4)..<((k + 1) * w * h * 4)]))
        }
        let start = Date()
        let sink = try GIFSink(path: out, width: w, height: h, fps: 30, still: frames[0])
        for (k, f) in frames.enumerated() { try sink.write(f, index: k) }
        try sink.finish()
        print(String(format: "GIFBENCH frames=%d seconds=%.3f", n, Date().timeIntervalSince(start)))
    }
}
