import WobbleCore
import XCTest

/// The one PSNR: which values each channel mode compares, the picked
/// pixels only, equal pictures infinite, different sizes 0.
final class PSNRTests: XCTestCase {
    func testChannelsPicksAndEdges() {
        // Two pixels: the first differs by 10 in red, the second only in alpha (255 against 0).
        let a = RGBAImage(width: 2, height: 1, pixels: [100, 50, 50, 255, 20, 20, 20, 255])
        let b = RGBAImage(width: 2, height: 1, pixels: [110, 50, 50, 255, 20, 20, 20, 0])
        func db(_ mse: Double) -> Double { 10 * log10(255 * 255 / mse) }
        XCTAssertEqual(PSNR.of(a, b, channels: .rgb), db(100.0 / 6), accuracy: 1e-9)
        XCTAssertEqual(PSNR.of(a, b, channels: .rgba), db((100.0 + 255 * 255) / 8), accuracy: 1e-9)
        // Premultiplied: the second pixel's 20s count as 20 against 0 (its alpha hides them).
        XCTAssertEqual(PSNR.of(a, b, channels: .premultipliedRGB), db((100.0 + 3 * 400) / 6), accuracy: 1e-9)
        XCTAssertEqual(PSNR.of(a, b, channels: .rgb, where: { $0 == 1 }), .infinity)
        XCTAssertEqual(PSNR.of(a, b, channels: .rgb, where: { $0 == 0 }), db(100.0 / 3), accuracy: 1e-9)
        XCTAssertEqual(PSNR.of(a, a, channels: .rgba), .infinity)
        XCTAssertEqual(PSNR.of(a, RGBAImage(width: 1, height: 2, pixels: a.pixels)), 0)
    }
}
