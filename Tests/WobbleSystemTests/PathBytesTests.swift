import XCTest
@testable import WobbleSystem

/// File names that are not UTF-8 survive a trip through a Swift `String`.
final class PathBytesTests: XCTestCase {
    func testValidUTF8IsUnchanged() {
        for s in ["out.gif", "frames/", "café/ß.png", "日本.gif", "😀.mp4", ""] {
            XCTAssertEqual(PathBytes.string(Array(s.utf8)), s)
            XCTAssertEqual(PathBytes.bytes(s), Array(s.utf8))
        }
    }

    func testEveryByteStringRoundTrips() {
        // Every single byte, every pair of high bytes, and random strings.
        var cases: [[UInt8]] = (0...255).map { [UInt8($0)] }
        for a in 0x80...0xFF { for b in stride(from: 0x80, through: 0xFF, by: 7) { cases.append([UInt8(a), UInt8(b)]) } }
        var x: UInt64 = 42
        for _ in 0..<2000 {
            var b: [UInt8] = []
            for _ in 0..<Int(x % 12) {
                x = x &* 6364136223846793005 &+ 1442695040888963407
                b.append(UInt8(truncatingIfNeeded: x >> 56))
            }
            x = x &* 6364136223846793005 &+ 1442695040888963407
            cases.append(b)
        }
        // The reserved code points themselves, as UTF-8.
        cases.append(Array("\u{10FF80}\u{10FFFF}\u{10FF7F}".utf8))
        cases.append([0xF4, 0x8F, 0xBF])          // cut short
        cases.append([0xED, 0xA0, 0x80])          // a UTF-16 surrogate
        cases.append([0xC0, 0xAF, 0xE0, 0x80])    // overlong
        for c in cases {
            XCTAssertEqual(PathBytes.bytes(PathBytes.string(c)), c, "\(c)")
        }
    }

    func testDisplayShowsEscapedBytes() {
        let s = PathBytes.string(Array("o".utf8) + [0xFE] + Array(".gif".utf8))
        XCTAssertEqual(PathBytes.display(s), #"o\xFE.gif"#)
        XCTAssertEqual(PathBytes.display("a\nb", controls: true), #"a\x0Ab"#)
        XCTAssertEqual(PathBytes.display("a\nb"), "a\nb")
        XCTAssertNil(PathBytes.withCString("a\u{0}b") { _ in 1 }, "no file name has a NUL")
    }
}
