import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// `BoundaryRays.polar` (the region geometry's, skipping the curves a ray
/// cannot meet) gives `RegionShape.polar`'s doubles bit for bit: on
/// rectangles with whole and fractional corners, rotated and skewed quads,
/// concave ones, tiny and huge ones, centers off the middle and near the
/// boundary; at pixel centres over each box and beyond it, at other scales,
/// and on the rays through the control points (where two curves meet).
final class BoundaryRaysTests: XCTestCase {
    /// A small deterministic generator (SplitMix64).
    private struct Numbers {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53)
        }
        mutating func next(_ a: Double, _ b: Double) -> Double { a + (b - a) * next() }
    }

    private func shapes() -> [RegionShape] {
        var g = Numbers(state: 45)
        var out: [RegionShape] = []
        func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, center: Point? = nil) -> RegionShape {
            RegionShape(lt: Point(x, y), rt: Point(x + w, y), rb: Point(x + w, y + h), lb: Point(x, y + h),
                        center: center ?? Point(x + w / 2, y + h / 2))
        }
        // The benchmark's and the studio's kind: axis-aligned, whole numbers.
        out.append(rect(80, 60, 300, 220))
        out.append(rect(3, 4, 1, 2))
        out.append(rect(0, 0, 2000, 1200))
        for _ in 0 ..< 12 {
            let x = g.next(-50, 400), y = g.next(-50, 300), w = g.next(0.5, 300), h = g.next(0.5, 300)
            out.append(rect(x, y, w, h))
            // The center off the middle, some of it near the boundary.
            out.append(rect(x, y, w, h, center: Point(x + w * g.next(0.02, 0.98), y + h * g.next(0.02, 0.98))))
        }
        for _ in 0 ..< 16 {
            // Rotated and skewed quads, some concave (a corner pulled in).
            let cx = g.next(0, 300), cy = g.next(0, 200), r = g.next(2, 150), a = g.next(0, 2 * Double.pi)
            var corners: [Point] = (0 ..< 4).map { k in
                let angle = a + Double(k) * Double.pi / 2 + g.next(-0.5, 0.5)
                let radius = r * g.next(0.5, 1.5)
                return Point(cx + radius * cos(angle), cy + radius * sin(angle))
            }
            if g.next() < 0.3 { corners[2] = Point((corners[2].x + 3 * cx) / 4, (corners[2].y + 3 * cy) / 4) }
            out.append(RegionShape(lt: corners[0], rt: corners[1], rb: corners[2], lb: corners[3],
                                   center: Point(cx + g.next(-0.2, 0.2) * r, cy + g.next(-0.2, 0.2) * r)))
        }
        return out.filter(\.canMove)
    }

    private func assertSame(_ rays: BoundaryRays, _ shape: RegionShape, _ p: Point, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let a = rays.polar(at: p), b = shape.polar(at: p)
        let same = a?.d.bitPattern == b?.d.bitPattern && a?.r.bitPattern == b?.r.bitPattern
        if !same { XCTFail("\(shape) at \(p): \(String(describing: a)) against \(String(describing: b))", file: file, line: line) }
        return same
    }

    func testPolarIsTheShapesBitForBit() {
        let all = shapes()
        XCTAssertGreaterThanOrEqual(all.count, 40)
        var points = 0, inside = 0
        for shape in all {
            let rays = BoundaryRays(shape)
            let b = shape.bbox
            // Pixel centres over the box and 3 px around it, at three scales
            // (at most about 40 000 points a shape).
            for scale in [1.0, 0.37, 2.5] {
                let step = max(scale, max(b.width, b.height) / 150)
                var y = ((b.minY - 3) / step).rounded(.down) * step + 0.5 * step
                while y < b.maxY + 3 {
                    var x = ((b.minX - 3) / step).rounded(.down) * step + 0.5 * step
                    while x < b.maxX + 3 {
                        let p = Point(x, y)
                        guard assertSame(rays, shape, p) else { return }
                        points += 1
                        if let (d, r) = shape.polar(at: p), d < r { inside += 1 }
                        x += step
                    }
                    y += step
                }
            }
            // The center, and the rays through the control points.
            guard assertSame(rays, shape, shape.center) else { return }
            for q in shape.boundary {
                for c in [q.p0, q.p1, q.p2] {
                    for s in [0.25, 0.999_999, 1, 1.000_001, 1.7] {
                        guard assertSame(rays, shape, shape.center + (c - shape.center) * s) else { return }
                        points += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(points, 100_000)
        XCTAssertGreaterThan(inside, points / 4)
    }

    /// A typical ray solves one or two of the four curves, not all four.
    func testMostCurvesAreSkipped() {
        let shape = RegionShape(lt: Point(80, 60), rt: Point(380, 60), rb: Point(380, 280), lb: Point(80, 280), center: Point(230, 170))
        let rays = BoundaryRays(shape)
        var solved = 0, rays0 = 0
        for j in 0 ..< 220 {
            for i in 0 ..< 300 {
                let vx = Double(80 + i) + 0.5 - 230, vy = Double(60 + j) + 0.5 - 170
                let d = (vx * vx + vy * vy).squareRoot()
                solved += rays.curves.filter { !BoundaryRays.misses($0, vx / d, vy / d, rays.margin) }.count
                rays0 += 1
            }
        }
        XCTAssertLessThan(Double(solved) / Double(rays0), 1.2)
        XCTAssertGreaterThanOrEqual(solved, rays0)
    }
}
