import Foundation
import WobbleCore
import WobbleMedia
import WobbleVision
import XCTest

/// `CutoutVision.objectMask` (what `cutout = "auto"` and `wobble-run
/// cutout` use) on photos with an object pasted in, whose true mask is
/// known: the intersection over union with it, and the same bytes on every
/// run.
final class CutoutMaskTests: XCTestCase {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples")

    static func photo(_ path: String) throws -> RGBAImage {
        try ImageIO.load(path: examples.appendingPathComponent(path).path)
    }

    /// `target` with the ellipse (centre, radii) of `donor` around `from`
    /// pasted at `at` (hard edge); the true mask.
    static func paste(_ donor: RGBAImage, from: (x: Int, y: Int), into target: RGBAImage, at: (x: Int, y: Int),
                      radii: (Double, Double)) -> (RGBAImage, GreyMask) {
        var out = target
        var mask = GreyMask(width: target.width, height: target.height)
        let rx = Int(radii.0.rounded(.up)), ry = Int(radii.1.rounded(.up))
        for dy in -ry...ry {
            for dx in -rx...rx {
                let ex = (Double(dx) + 0.5) / radii.0, ey = (Double(dy) + 0.5) / radii.1
                guard ex * ex + ey * ey <= 1 else { continue }
                let tx = at.x + dx, ty = at.y + dy, sx = from.x + dx, sy = from.y + dy
                guard tx >= 0, ty >= 0, tx < target.width, ty < target.height,
                      sx >= 0, sy >= 0, sx < donor.width, sy < donor.height else { continue }
                let t = (ty * target.width + tx) * 4, s = (sy * donor.width + sx) * 4
                for c in 0..<4 { out.pixels[t + c] = donor.pixels[s + c] }
                mask.pixels[ty * target.width + tx] = 255
            }
        }
        return (out, mask)
    }

    static func iou(_ a: GreyMask, _ b: GreyMask) -> Double { CutoutVision.intersectionOverUnion(a, b) }

    /// The two pasted pictures: the cat's face on the coffee table, the
    /// cup's crema on the cat's blanket.
    static func cases() throws -> [(name: String, image: RGBAImage, truth: GreyMask)] {
        let coffee = try photo("latte/coffee.png"), cat = try photo("cat/chelsea.png")
        let a = paste(cat, from: (230, 120), into: coffee, at: (510, 300), radii: (60, 48))
        let b = paste(coffee, from: (290, 145), into: cat, at: (100, 220), radii: (62, 40))
        return [("cat face on coffee.png", a.0, a.1), ("crema on chelsea.png", b.0, b.1)]
    }

    func testAutoFindsAPastedObject() throws {
        for c in try Self.cases() {
            let o = c.truth.objectBox
            let margin = 14
            let box = PixelRect(x0: max(0, o.x0 - margin), y0: max(0, o.y0 - margin),
                                x1: min(c.image.width, o.x1 + margin), y1: min(c.image.height, o.y1 + margin))
            let region = SketchPoints(lt: Point(Double(box.x0), Double(box.y0)), rt: Point(Double(box.x1), Double(box.y0)),
                                      rb: Point(Double(box.x1), Double(box.y1)), lb: Point(Double(box.x0), Double(box.y1))).shape
            let mask = try CutoutVision.objectMask(image: c.image, box: box, region: region)
            let iou = Self.iou(mask, c.truth)
            print("cutout auto: \(c.name): IoU \(String(format: "%.3f", iou)) with the true mask (box \(box))")
            XCTAssertGreaterThanOrEqual(iou, 0.9, c.name)
            // Deterministic: the same bytes again.
            XCTAssertEqual(try CutoutVision.objectMask(image: c.image, box: box, region: region), mask, c.name)
        }
    }

    /// The studio's calls: strokes refine a mask (a background stroke
    /// across part of the object takes it out), a click finds the object
    /// under it.
    func testStrokesAndAClick() throws {
        let c = try Self.cases()[0]
        let o = c.truth.objectBox
        let box = PixelRect(x0: o.x0 - 14, y0: o.y0 - 14, x1: min(c.image.width, o.x1 + 14), y1: min(c.image.height, o.y1 + 14))
        // Mark the object's left third as background: it goes.
        var background = GreyMask(width: c.image.width, height: c.image.height)
        let cut = o.x0 + o.width / 3
        for y in o.y0 ..< o.y1 { for x in o.x0 ..< cut { background.pixels[y * c.image.width + x] = 255 } }
        let refined = try CutoutVision.objectMask(image: c.image, box: box, background: background)
        for y in o.y0 ..< o.y1 { for x in o.x0 ..< cut { XCTAssertEqual(refined.pixels[y * c.image.width + x], 0) } }
        XCTAssertGreaterThan(refined.pixels.filter { $0 > 127 }.count, c.truth.pixels.filter { $0 > 127 }.count / 3)
        // A click in the middle of the pasted face.
        let click = try CutoutVision.objectMask(image: c.image, at: Point(510, 300), side: 200)
        let iou = Self.iou(click, c.truth)
        print("cutout click: cat face on coffee.png: IoU \(String(format: "%.3f", iou))")
        XCTAssertGreaterThanOrEqual(iou, 0.8)
        // A click's candidates (squares of several sizes): the face is one
        // of them, and the same bytes come again.
        let candidates = try CutoutVision.clickCandidates(image: c.image, at: Point(510, 300))
        let best = candidates.map { Self.iou($0, c.truth) }.max() ?? 0
        print("cutout click candidates: cat face on coffee.png: \(candidates.count), best IoU \(String(format: "%.3f", best))")
        XCTAssertGreaterThanOrEqual(best, 0.9)
        XCTAssertEqual(try CutoutVision.clickCandidates(image: c.image, at: Point(510, 300)), candidates)
    }

    func testUniformAndOutsideBoxesAreRefused() throws {
        let flat = RGBAImage(width: 64, height: 64, pixels: [UInt8](repeating: 200, count: 64 * 64 * 4))
        XCTAssertThrowsError(try CutoutVision.objectMask(image: flat, box: PixelRect(x0: 10, y0: 10, x1: 40, y1: 40))) {
            XCTAssertEqual($0 as? CutoutProblem, .uniform)
        }
        XCTAssertThrowsError(try CutoutVision.objectMask(image: flat, box: PixelRect(x0: 50, y0: 10, x1: 70, y1: 40))) {
            XCTAssertEqual($0 as? CutoutProblem, .outsideImage(box: PixelRect(x0: 50, y0: 10, x1: 70, y1: 40), width: 64, height: 64))
        }
    }

    func testFitRegionHoldsTheMask() throws {
        let c = try Self.cases()[0]
        let p = try XCTUnwrap(CutoutVision.fitRegion(around: c.truth))
        let shape = p.shape
        XCTAssertTrue(shape.canMove)
        for y in 0 ..< c.truth.height {
            for x in 0 ..< c.truth.width where c.truth.pixels[y * c.truth.width + x] > 127 {
                XCTAssertTrue(shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)), "(\(x), \(y)) outside the fitted region")
            }
        }
        // Not much larger than the object.
        let o = c.truth.objectBox
        XCTAssertLessThan(shape.bbox.width * shape.bbox.height, Double(o.area) * 3)
    }

    func testPlateKeepsEveryPixelOutsideTheMask() throws {
        let c = try Self.cases()[0]
        let plate = try CutoutVision.plate(image: c.image, mask: c.truth)
        for k in 0 ..< c.image.width * c.image.height where c.truth.pixels[k] == 0 {
            XCTAssertEqual(plate.pixels[k * 4 ..< k * 4 + 4], c.image.pixels[k * 4 ..< k * 4 + 4])
        }
        XCTAssertNotEqual(plate, c.image)
    }
}

/// A click on a two-tone object whose rim's colour is all over the
/// background (a mirror's bright glass in its dark housing, in a cluttered
/// garage): GrabCut's colour models give the rim to the background, the
/// over-segmentation's part under the click holds it.
final class CutoutTwoToneClickTests: XCTestCase {
    /// 240×160: 8-pixel blocks of clutter whose colours include the
    /// object's, all with a grain of ±12 levels; an ellipse at (120, 80) of
    /// radii 34 and 20 with a bright outline a pixel wide: a light centre
    /// (radii 24 and 11) in a darker rim; the ellipse's mask.
    static func picture() -> (RGBAImage, GreyMask) {
        let w = 240, h = 160
        var img = RGBAImage(width: w, height: h)
        var mask = GreyMask(width: w, height: h)
        func hash(_ a: Int, _ b: Int) -> Int { ((a &* 73_856_093) ^ (b &* 19_349_663)) & 0xffff }
        let glass = (150, 142, 128), housing = (100, 94, 86)
        let clutter = [housing, (40, 60, 150), (124, 94, 86), glass, (70, 50, 40), (100, 118, 86), (110, 112, 118), (30, 28, 26)]
        for y in 0..<h {
            for x in 0..<w {
                var c = clutter[hash(x / 8, y / 8) % clutter.count]
                let ex = (Double(x) + 0.5 - 120) / 34, ey = (Double(y) + 0.5 - 80) / 20
                let e = ex * ex + ey * ey
                let ix = (Double(x) + 0.5 - 120) / 24, iy = (Double(y) + 0.5 - 80) / 11
                if e <= 1 {
                    c = ix * ix + iy * iy <= 1 ? glass : housing
                    if e > 0.9 { c = (190, 185, 175) }                                    // the outline
                    mask.pixels[y * w + x] = 255
                }
                let grain = hash(x, y + 1000) % 25 - 12
                let i = (y * w + x) * 4
                img.pixels[i] = UInt8(max(0, min(255, c.0 + grain)))
                img.pixels[i + 1] = UInt8(max(0, min(255, c.1 + grain)))
                img.pixels[i + 2] = UInt8(max(0, min(255, c.2 + grain)))
                img.pixels[i + 3] = 255
            }
        }
        return (img, mask)
    }

    func testAClickOnTheBrightCentreFindsTheWholeObjectWithinTwoMoreClicks() throws {
        let (image, truth) = Self.picture()
        let candidates = try CutoutVision.clickCandidates(image: image, at: Point(120, 80))
        let ious = candidates.map { CutoutVision.intersectionOverUnion($0, truth) }
        print("two-tone click: \(candidates.count) candidates, IoU with the whole object: "
              + ious.map { String(format: "%.3f", $0) }.joined(separator: " "))
        let first3 = ious.prefix(3)
        XCTAssertGreaterThanOrEqual(first3.max() ?? 0, 0.85, "the whole object (glass and housing) among the first three")
        XCTAssertEqual(try CutoutVision.clickCandidates(image: image, at: Point(120, 80)), candidates, "the same bytes again")
    }
}
