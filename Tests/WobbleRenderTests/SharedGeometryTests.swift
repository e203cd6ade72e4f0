import Foundation
import WobbleCore
@testable import WobbleRender
import XCTest

/// Regions whose shapes are one shape moved by whole pixels share one
/// geometry and its grid fields (`DisplacementProfiles`), and each one's
/// profile is, byte for byte, the profile made for its own shape alone;
/// shapes where that might not be exact get their own.
final class SharedGeometryTests: XCTestCase {
    let m = OutputMapping(sourceWidth: 200, sourceHeight: 150, outputWidth: 200, outputHeight: 150)

    /// The profile's box, geometry, borderline pixels and fields for some
    /// peaks against a profile made for `shape` alone.
    private func assertSameAsAlone(_ p: DisplacementProfile, _ shape: RegionShape, mapping: OutputMapping, _ what: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        let alone = DisplacementProfile(shape: shape, mapping: mapping, pin: nil)
        XCTAssertEqual([p.x0, p.y0, p.width, p.height], [alone.x0, alone.y0, alone.width, alone.height], what, file: file, line: line)
        XCTAssertEqual(p.geometry.values.map(\.bitPattern), alone.geometry.values.map(\.bitPattern), what, file: file, line: line)
        XCTAssertEqual(p.geometry.borderline.map { [$0.index, Int($0.d.bitPattern), Int($0.r.bitPattern)] },
                       alone.geometry.borderline.map { [$0.index, Int($0.d.bitPattern), Int($0.r.bitPattern)] }, what, file: file, line: line)
        for peak in [0.7, 3.3, 5.0, 12.25] {
            XCTAssertEqual(Array(p.magnitudes(peak: peak).values).map(\.bitPattern),
                           Array(alone.magnitudes(peak: peak).values).map(\.bitPattern), "\(what) peak \(peak)", file: file, line: line)
        }
    }

    func testShapesMovedByWholePixelsShareOneGeometry() throws {
        let profiles = DisplacementProfiles(mapping: m)
        // Whole numbers, halves and 2⁻¹⁰ steps; a skewed quad with its center off the middle.
        let base = [rect(10, 12, 40, 30), rect(20.5, 30.25, 33, 21.5, center: Point(31.5, 40.125)),
                    RegionShape(lt: Point(30, 20), rt: Point(71.5, 24), rb: Point(66, 58.0009765625), lb: Point(28, 52),
                                center: Point(47.25, 40))]
        let moves = [Point(0, 0), Point(37, 5), Point(101, 77), Point(-9, 40)]
        for (k, shape) in base.enumerated() {
            for t in moves {
                let moved = RegionShape(lt: shape.lt + t, rt: shape.rt + t, rb: shape.rb + t, lb: shape.lb + t, center: shape.center + t)
                assertSameAsAlone(try profiles.profile(moved, pin: nil, frame: 0), moved, mapping: m, "shape \(k) moved by \(t)")
            }
        }
        XCTAssertEqual(profiles.computed, base.count * moves.count)
        XCTAssertEqual(profiles.geometriesComputed, base.count, "one geometry per shape")
    }

    func testShapesThatMightNotBeExactGetTheirOwn() throws {
        // Coordinates off the 2⁻²⁰ grid, a box clipped by the output's edge,
        // a pinned region, an output at another scale.
        let profiles = DisplacementProfiles(mapping: m)
        let off = [rect(10.3, 12, 40, 30), rect(47.3, 17, 40, 30)]
        let clipped = [rect(-5, 10, 40, 30), rect(30, 10, 40, 30), rect(170, 10, 40, 30)]
        for s in off + clipped {
            assertSameAsAlone(try profiles.profile(s, pin: nil, frame: 0), s, mapping: m, "\(s)")
        }
        XCTAssertEqual(profiles.geometriesComputed, 5, "the off-grid pair apart, the clipped ones apart, the one inside alone")
        _ = try profiles.profile(rect(60, 60, 40, 30), pin: .bottom, frame: 0)
        _ = try profiles.profile(rect(100, 60, 40, 30), pin: .bottom, frame: 0)
        XCTAssertEqual(profiles.geometriesComputed, 7, "pinned: each its own")
        let half = OutputMapping(sourceWidth: 200, sourceHeight: 150, outputWidth: 100, outputHeight: 75)
        let scaled = DisplacementProfiles(mapping: half)
        for s in [rect(10, 12, 40, 30), rect(50, 12, 40, 30)] {
            assertSameAsAlone(try scaled.profile(s, pin: nil, frame: 0), s, mapping: half, "\(s) at half size")
        }
        XCTAssertEqual(scaled.geometriesComputed, 2)
    }

    /// Four regions of one size wobbling with different peaks: each keeps its
    /// grid fields (no field computed again frame after frame), and the
    /// frames are the ones of regions that share nothing.
    func testSharersKeepTheirFields() throws {
        let source = testImage(width: 200, height: 150, seed: 9)
        let shapes = [rect(10, 10, 60, 40), rect(100, 12, 60, 40), rect(20, 90, 60, 40), rect(120, 95, 60, 40)]
        let fast = FastCPURenderer(source: source)
        var frames: [FrameState] = []
        for t in [0.1, 0.2, 0.3, 0.45] {
            frames.append(frameState(shapes.enumerated().map { k, s in
                regionFrame(s, direction: Point(1, 0.5 * Double(k)), amplitude: 0.3 + 0.4 * Double(k), t: t)
            }, time: t))
        }
        for (n, f) in frames.enumerated() {
            let drawn = try fast.render(f)
            // The same frame from renderers that each know one of the shapes
            // first (so none shares with another).
            var expected = try FastCPURenderer(source: source).render(frameState([], time: f.time))
            for r in f.regions {
                let alone = FastCPURenderer(source: source)
                var one = f
                one.regions = [r]
                try alone.render(one, boxes: FrameDamage.boxes(one, mapping: alone.mapping), into: &expected)
            }
            XCTAssertTrue(drawn == expected, "frame \(n): \(ImageDifference(drawn, expected))")
        }
        XCTAssertEqual(fast.profiles.geometriesComputed, 1)
        let fields = try fast.profiles.profile(shapes[0], pin: nil, frame: 0).fieldsComputed
        XCTAssertLessThanOrEqual(fields, 8, "two grid fields per peak, kept for each region")
        for f in frames { _ = try fast.render(f) }
        XCTAssertEqual(try fast.profiles.profile(shapes[0], pin: nil, frame: 0).fieldsComputed, fields, "none computed again")
    }
}
