import XCTest
import WobbleCore
@testable import WobbleRender

/// The control-layer overlay: edges dark, corners red, boundary blue,
/// center green, everything else untouched; positions follow the mapping.
final class OverlayTests: XCTestCase {
    /// A mid-grey opaque frame.
    func grey(_ w: Int, _ h: Int, alpha: UInt8 = 255) -> RGBAImage {
        var px = [UInt8](repeating: 128, count: w * h * 4)
        for i in stride(from: 3, to: px.count, by: 4) { px[i] = alpha }
        return RGBAImage(width: w, height: h, pixels: px)
    }

    /// A square sketch 20...180 on a 200×200 source.
    let square = RegionShape(lt: Point(20, 20), rt: Point(180, 20), rb: Point(180, 180), lb: Point(20, 180),
                             center: Point(100, 100))

    func isDark(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool { p.r < 40 && p.g < 40 && p.b < 40 }
    func isRed(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool { p.r > 200 && p.g < 60 && p.b < 60 }
    func isBlue(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool { p.b > 200 && p.r < 60 && p.g < 140 }
    func isGreen(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool { p.g > 150 && p.r < 60 && p.b < 60 }

    /// The output pixel whose centre lies nearest the source point `p`.
    func pixel(_ img: RGBAImage, _ p: Point, _ m: OutputMapping) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        img.pixel(Int((p.x / m.scaleX).rounded(.down)), Int((p.y / m.scaleY).rounded(.down)))
    }

    /// True when `test` holds for some output pixel within one pixel of the
    /// source point `p` (a 1.5 px line need not cover the pixel under a point
    /// on it fully, but always covers one of its neighbours almost fully).
    func near(_ img: RGBAImage, _ p: Point, _ m: OutputMapping,
              _ test: ((r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool) -> Bool {
        let x = Int((p.x / m.scaleX).rounded(.down)), y = Int((p.y / m.scaleY).rounded(.down))
        for j in max(0, y - 1)...min(img.height - 1, y + 1) {
            for i in max(0, x - 1)...min(img.width - 1, x + 1) where test(img.pixel(i, j)) { return true }
        }
        return false
    }

    func checkParts(width: Int, height: Int, file: StaticString = #filePath, line: UInt = #line) {
        let m = OutputMapping(sourceWidth: 200, sourceHeight: 200, outputWidth: width, outputHeight: height)
        var img = grey(width, height)
        let before = img
        OverlayPainter.draw([square], into: &img, mapping: m)
        // An edge, away from the corners and from the boundary (which
        // touches the edges only at their midpoints).
        XCTAssertTrue(near(img, Point(45, 20), m, isDark), "top edge", file: file, line: line)
        XCTAssertTrue(near(img, Point(180, 150), m, isDark), "right edge", file: file, line: line)
        // Corners.
        for c in [square.lt, square.rt, square.rb, square.lb] {
            XCTAssertTrue(isRed(pixel(img, c, m)), "corner \(c): \(pixel(img, c, m))", file: file, line: line)
        }
        // The boundary at the middle of the first curve (mL, LT, mT).
        let b = square.boundary[0].point(at: 0.5)
        XCTAssertTrue(near(img, b, m, isBlue), "boundary \(b)", file: file, line: line)
        let b2 = square.boundary[2].point(at: 0.3)
        XCTAssertTrue(near(img, b2, m, isBlue), "boundary \(b2)", file: file, line: line)
        // The center.
        XCTAssertTrue(isGreen(pixel(img, square.center, m)), "center", file: file, line: line)
        // Far from everything: unchanged.
        for p in [Point(5, 5), Point(100, 70), Point(195, 100), Point(60, 140)] {
            let q = pixel(img, p, m), r = pixel(before, p, m)
            XCTAssertTrue(q == r, "\(p) changed: \(q)", file: file, line: line)
        }
    }

    func testPartsAtSourceSize() {
        checkParts(width: 200, height: 200)
    }

    func testPartsOnScaledOutput() {
        checkParts(width: 100, height: 100)   // half size
        checkParts(width: 400, height: 300)   // larger, non-uniform
    }

    func testScaledMappingMovesThePixels() {
        // At half size the corner LT (20, 20) is output pixel (10, 10).
        let m = OutputMapping(sourceWidth: 200, sourceHeight: 200, outputWidth: 100, outputHeight: 100)
        var img = grey(100, 100)
        OverlayPainter.draw([square], into: &img, mapping: m)
        XCTAssertTrue(isRed(img.pixel(10, 10)))
        XCTAssertTrue(isGreen(img.pixel(50, 50)))
        XCTAssertTrue(isDark(img.pixel(25, 10)))
        XCTAssertFalse(isRed(img.pixel(20, 20)))
        XCTAssertEqual(img.pixel(5, 50).r, 128)
    }

    func testSizesScaleWithTheOutput() {
        XCTAssertEqual(OverlayPainter.lineWidth(width: 32, height: 24), 1.5)
        XCTAssertEqual(OverlayPainter.lineWidth(width: 1920, height: 1080), 3.6, accuracy: 1e-9)
        XCTAssertEqual(OverlayPainter.dotRadius(width: 1920, height: 1080), 7.2, accuracy: 1e-9)
        // A thicker line on a big frame: a pixel 1.5 px off the edge is covered.
        let m = OutputMapping(sourceWidth: 200, sourceHeight: 200, outputWidth: 1200, outputHeight: 1200)
        var img = grey(1200, 1200)
        OverlayPainter.draw([square], into: &img, mapping: m)
        XCTAssertTrue(isDark(img.pixel(270, 121)))   // top edge at y = 120
        XCTAssertEqual(img.pixel(270, 126).r, 128)
    }

    func testOverTransparentPixelsIsOpaqueAndAntiAliased() {
        let m = OutputMapping(sourceWidth: 200, sourceHeight: 200, outputWidth: 200, outputHeight: 200)
        var img = grey(200, 200, alpha: 0)
        OverlayPainter.draw([square], into: &img, mapping: m)
        let c = img.pixel(100, 100)
        XCTAssertTrue(isGreen(c))
        XCTAssertEqual(c.a, 255)
        XCTAssertEqual(img.pixel(5, 5).a, 0)
        // Some pixel at the rim of the center dot is partly covered.
        var partial = false
        for i in 100..<110 where img.pixel(i, 100).a > 0 && img.pixel(i, 100).a < 255 { partial = true }
        XCTAssertTrue(partial, "no anti-aliased rim")
    }

    func testDegenerateAndOffFrameShapesDoNotCrash() {
        let m = OutputMapping(sourceWidth: 50, sourceHeight: 40, outputWidth: 50, outputHeight: 40)
        var img = grey(50, 40)
        let before = img
        let far = RegionShape(lt: Point(1e6, 1e6), rt: Point(2e6, 1e6), rb: Point(2e6, 2e6), lb: Point(1e6, 2e6),
                              center: Point(1.5e6, 1.5e6))
        let nan = RegionShape(lt: Point(.nan, 0), rt: Point(.infinity, 0), rb: Point(0, 0), lb: Point(0, 0),
                              center: Point(0, .nan))
        OverlayPainter.draw([far], into: &img, mapping: m)
        XCTAssertEqual(img, before)
        OverlayPainter.draw([nan], into: &img, mapping: m)
        let point = RegionShape(lt: Point(25, 20), rt: Point(25, 20), rb: Point(25, 20), lb: Point(25, 20), center: Point(25, 20))
        OverlayPainter.draw([point], into: &img, mapping: m)
        XCTAssertTrue(isGreen(img.pixel(25, 20)))
    }
}
