import Foundation
import XCTest
import WobbleCore
@testable import WobbleMedia

/// Times PNG encoding of a 1280×720 photo frame at each zlib level.
/// Runs only with WOBBLE_BENCH=1 (it takes a few seconds).
final class PNGEncodeBenchmarkTests: XCTestCase {
    func testEncodeTiming() throws {
        guard ProcessInfo.processInfo.environment["WOBBLE_BENCH"] == "1" else {
            throw XCTSkip("set WOBBLE_BENCH=1 to time PNG encoding")
        }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let source = scratch.file("frame.png")
        try convert(["/work/shared/images/coffee.png", "-resize", "1280x720!", source])
        let image = try ImageIO.load(path: source)
        XCTAssertEqual(image.width, 1280)
        for level in [1, 2, 3, 4, 5, 6, 9] {
            let runs = 5
            var size = 0
            let start = Date()
            for _ in 0..<runs { size = try ImageIO.encodePNG(image, compressionLevel: level).count }
            let ms = Date().timeIntervalSince(start) * 1000 / Double(runs)
            print(String(format: "PNG 1280x720 level %d: %.1f ms, %d bytes", level, ms, size))
        }
        let start = Date()
        for _ in 0..<5 { _ = try ImageIO.load(path: source) }
        print(String(format: "PNG 1280x720 decode: %.1f ms", Date().timeIntervalSince(start) * 200))
    }
}
