import Foundation
import WobbleCore
import WobbleVision
import XCTest

/// `CutoutVision.magneticOutline` (the studio's manual cutout): points
/// clicked near an object's edge, the path between them snapped to it.
final class MagneticOutlineTests: XCTestCase {
    /// Eight points a few pixels outside the pasted cat face's ellipse
    /// (centre 510, 300, radii 60 and 48: clicks are never exact): the
    /// path follows the face's edge (most of it within 2 pixels of it), and
    /// the mask it closes is the face (better than the octagon through the
    /// points); the same bytes again.
    func testThePathSnapsToTheObjectsEdge() throws {
        let c = try CutoutMaskTests.cases()[0]
        let (cx, cy, rx, ry) = (510.0, 300.0, 60.0, 48.0)
        let points = (0..<8).map { k -> Point in
            let a = Double(k) * .pi / 4 + 0.2
            let off = k % 2 == 0 ? 3.0 : -2.0
            return Point(cx + (rx + off) * cos(a), cy + (ry + off) * sin(a))
        }
        let (path, mask) = try CutoutVision.magneticOutline(image: c.image, points: points)
        let iou = CutoutMaskTests.iou(mask, c.truth)
        // The octagon through the points, for comparison.
        var octagon = GreyMask(width: c.image.width, height: c.image.height)
        for y in 200..<400 {
            for x in 400..<620 {
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                var inside = false
                for i in 0..<8 {
                    let a = points[i], b = points[(i + 1) % 8]
                    if (a.y > p.y) != (b.y > p.y), p.x < a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x) { inside.toggle() }
                }
                if inside { octagon.pixels[y * c.image.width + x] = 255 }
            }
        }
        let plain = CutoutMaskTests.iou(octagon, c.truth)
        var near = 0
        for p in path {
            let ex = (p.x - cx) / rx, ey = (p.y - cy) / ry
            let d = abs((ex * ex + ey * ey).squareRoot() - 1) * min(rx, ry)
            if d <= 2 { near += 1 }
        }
        print("magnetic outline: cat face on coffee.png: IoU \(String(format: "%.3f", iou)) (the points' octagon \(String(format: "%.3f", plain))), \(near) of \(path.count) path pixels within 2 px of the edge")
        XCTAssertGreaterThanOrEqual(iou, 0.93)
        XCTAssertGreaterThan(iou, plain)
        XCTAssertGreaterThanOrEqual(Double(near), 0.8 * Double(path.count))
        XCTAssertGreaterThan(path.count, 300, "a closed path around the face")
        XCTAssertEqual(try CutoutVision.magneticOutline(image: c.image, points: points).mask, mask)
    }

    func testTooFewPointsAndPointsOutsideAreRefused() throws {
        let c = try CutoutMaskTests.cases()[0]
        XCTAssertThrowsError(try CutoutVision.magneticOutline(image: c.image, points: [Point(10, 10), Point(40, 10)])) {
            XCTAssertEqual($0 as? CutoutProblem, .vision("a magnetic outline needs at least 3 points"))
        }
        XCTAssertThrowsError(try CutoutVision.magneticOutline(image: c.image, points: [Point(10, 10), Point(40, 10), Point(40, -3)])) {
            XCTAssertEqual($0 as? CutoutProblem, .outsideImage(box: PixelRect(x0: 10, y0: -1, x1: 41, y1: 11), width: c.image.width, height: c.image.height))
        }
    }
}
