import XCTest
import WobbleCore
import WobbleRender

/// Characters the studio's font lacks are drawn as their ASCII stand-in
/// (a bake's time range said `0.514?1.719 s`), one cell each.
final class FontStandInTests: XCTestCase {
    func drawn(_ text: String) -> [UInt8] {
        var img = RGBAImage(width: 120, height: 20, pixels: [UInt8](repeating: 0, count: 120 * 20 * 4))
        StudioFont.draw(text.unicodeScalars, x: 0, y: 0, into: &img, color: (255, 255, 255))
        return img.pixels
    }

    func testTypographicCharactersAreDrawnAsTheirASCIIStandIns() {
        XCTAssertEqual(drawn("0.5–1.7 s"), drawn("0.5-1.7 s"))
        XCTAssertEqual(drawn("a — b"), drawn("a - b"))
        XCTAssertEqual(drawn("320×320"), drawn("320x320"))
        XCTAssertEqual(drawn("a → b"), drawn("a > b"))
        XCTAssertEqual(drawn("“x”"), drawn("\"x\""))
        XCTAssertEqual(drawn("☃"), drawn("?"), "no stand-in: ?")
        XCTAssertNotEqual(drawn("–"), drawn("?"))
    }
}
