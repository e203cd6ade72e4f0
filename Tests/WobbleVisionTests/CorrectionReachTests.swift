import Foundation
import WobbleCore
import WobbleVision
import XCTest

/// A corrective object click brings the piece it lands on even where that
/// lies beyond the region's curves (`CutoutVision.refinedGrowing`): the
/// region grows around what the click brings. Before, the region fitted
/// around the first candidate cleared every later mask, and an object
/// click past it could only add up to the region's edge (a rocket's body,
/// a tripod's leg: a few pixels a click).
final class CorrectionReachTests: XCTestCase {
    /// 200 × 200: a dark blue background, an orange 30 × 30 square (what
    /// the first candidate found) and an orange bar 8 pixels wide hanging
    /// from it down to y = 180 (each with a faint deterministic grain);
    /// the square's mask.
    static func picture() -> (image: RGBAImage, square: GreyMask, bar: (x0: Int, x1: Int, y0: Int, y1: Int)) {
        let w = 200, h = 200
        var image = RGBAImage(width: w, height: h)
        var square = GreyMask(width: w, height: h)
        let bar = (x0: 81, x1: 89, y0: 70, y1: 180)
        for y in 0 ..< h {
            for x in 0 ..< w {
                let inSquare = x >= 70 && x < 100 && y >= 40 && y < 70
                let inBar = x >= bar.x0 && x < bar.x1 && y >= bar.y0 && y < bar.y1
                let grain = (x * 7 + y * 13) % 9 - 4
                let c = inSquare || inBar ? (230, 130, 40) : (30, 40, 90)
                let i = (y * w + x) * 4
                image.pixels[i] = UInt8(c.0 + grain)
                image.pixels[i + 1] = UInt8(c.1 + grain)
                image.pixels[i + 2] = UInt8(c.2 + grain)
                image.pixels[i + 3] = 255
                if inSquare { square.pixels[y * w + x] = 255 }
            }
        }
        return (image, square, bar)
    }

    func testObjectClicksBeyondTheRegionBringTheBarWithinThreeClicks() throws {
        let (image, square, bar) = Self.picture()
        let w = image.width
        let fitted = try XCTUnwrap(CutoutVision.fitRegion(around: square))
        let region = fitted.shape
        // The bar's far end lies beyond the region fitted around the square.
        XCTAssertFalse(region.contains(Point(85, 170)))
        // Without growing (the region as it is), a click on the bar just
        // below the square cannot bring the bar's far end.
        let first = CutoutStroke(points: [Point(85, 78)], radius: 6, object: true)
        let fixed = try CutoutVision.refined(image: image, region: region, strokes: [first], from: square)
        XCTAssertEqual(fixed.pixels[170 * w + 85], 0, "cleared beyond the region's curves")
        // Growing: the first click brings the bar's upper part and grows
        // the region around it (a click reaches half the object's size past
        // the region, so the object grows by half each click); the clicks
        // after it at the middle of what is still missing bring the rest.
        var mask = square
        var shape = region
        var strokes = [first]
        let one = try CutoutVision.refinedGrowing(image: image, region: shape, strokes: strokes, from: mask)
        let grown = try XCTUnwrap(one.region, "the region grows")
        XCTAssertGreaterThan(grown.shape.bbox.maxY, region.bbox.maxY + 10)
        mask = one.mask
        shape = grown.shape
        XCTAssertFalse(region.contains(Point(85, 92)))
        XCTAssertGreaterThan(mask.pixels[92 * w + 85], 127, "the bar past the old region after one click")
        // Each next click at the middle of what is still missing of the bar.
        var clicks = 1
        var missing = (bar.y0 ..< bar.y1).filter { mask.pixels[$0 * w + 85] <= 127 }
        while let top = missing.first, let bottom = missing.last, clicks < 3 {
            clicks += 1
            strokes.append(CutoutStroke(points: [Point(85, Double(top + bottom) / 2 + 0.5)], radius: 6, object: true))
            let next = try CutoutVision.refinedGrowing(image: image, region: shape, strokes: strokes, from: mask)
            mask = next.mask
            if let g = next.region { shape = g.shape }
            missing = (bar.y0 ..< bar.y1).filter { mask.pixels[$0 * w + 85] <= 127 }
        }
        XCTAssertEqual(missing, [], "the whole bar within three clicks")
        XCTAssertTrue(shape.contains(Point(85, 178)), "the region holds the bar")
        // The bar's pixels are object, the background beside it is not.
        for y in stride(from: bar.y0 + 2, to: bar.y1 - 2, by: 4) {
            for x in bar.x0 + 1 ..< bar.x1 - 1 { XCTAssertGreaterThan(mask.pixels[y * w + x], 127, "(\(x), \(y))") }
            for x in [bar.x0 - 6, bar.x1 + 5] { XCTAssertEqual(mask.pixels[y * w + x], 0, "(\(x), \(y))") }
        }
        for y in 0 ..< image.height {
            for x in 0 ..< w where y >= 185 || x < 60 || x >= 110 { XCTAssertEqual(mask.pixels[y * w + x], 0, "(\(x), \(y))") }
        }
        // The square stays.
        XCTAssertGreaterThan(mask.pixels[55 * w + 85], 127)
    }

    /// A dot marks its own side of an edge: a background dot at the middle
    /// of a wrong band 3 pixels wide beside a bar (what a 6-pixel brush does
    /// on a thin object's edge) takes the band back and leaves the bar's
    /// pixels under the dot as they were (before, every pixel under the dot
    /// was background for sure: the click cut a notch 4 pixels deep into the
    /// bar it should have kept).
    func testABackgroundDotOnAThinWrongBandKeepsTheObjectBesideIt() throws {
        let w = 160, h = 160
        var image = RGBAImage(width: w, height: h)
        var start = GreyMask(width: w, height: h)
        for y in 0 ..< h {
            for x in 0 ..< w {
                let inBar = x >= 70 && x < 90 && y >= 20 && y < 140
                let grain = (x * 7 + y * 13) % 9 - 4
                let c = inBar ? (230, 130, 40) : (30, 40, 90)
                let i = (y * w + x) * 4
                image.pixels[i] = UInt8(c.0 + grain)
                image.pixels[i + 1] = UInt8(c.1 + grain)
                image.pixels[i + 2] = UInt8(c.2 + grain)
                image.pixels[i + 3] = 255
                // The mask so far: the bar and a wrong band of background 3 pixels wide at its right.
                if x >= 70 && x < 93 && y >= 20 && y < 140 { start.pixels[y * w + x] = 255 }
            }
        }
        let region = try XCTUnwrap(CutoutVision.fitRegion(around: start)).shape
        let dot = CutoutStroke(points: [Point(91.5, 80.5)], radius: 6, object: false)
        // GrabCut's mask (the benchmark's) and the studio's matte of it.
        let mask = try CutoutVision.refined(image: image, region: region, strokes: [dot], from: start)
        let matte = try CutoutVision.refinedMatte(image: image, region: region, strokes: [dot], from: start)
        // The bar under the dot (x 86–89) stays object; the band there is taken back.
        for m in [mask, matte] {
            for y in 76 ... 85 {
                for x in 86 ..< 89 { XCTAssertGreaterThan(m.pixels[y * w + x], 127, "the bar at (\(x), \(y))") }
                for x in 91 ..< 93 { XCTAssertEqual(m.pixels[y * w + x], 0, "the band at (\(x), \(y))") }
            }
        }
    }
}
