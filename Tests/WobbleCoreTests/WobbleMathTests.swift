import XCTest
@testable import WobbleCore

/// The wobble model against values worked out by hand.
final class WobbleMathTests: XCTestCase {
    /// The square (0,0)–(100,100), center (50,50).
    let square = RegionShape(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100), center: Point(50, 50))

    func testBoundaryCurvesUseEdgeMidpointsAndCorners() {
        let b = square.boundary
        XCTAssertEqual(b[0], QuadraticBezier(Point(0, 50), Point(0, 0), Point(50, 0)))
        XCTAssertEqual(b[1], QuadraticBezier(Point(50, 0), Point(100, 0), Point(100, 50)))
        XCTAssertEqual(b[2], QuadraticBezier(Point(100, 50), Point(100, 100), Point(50, 100)))
        XCTAssertEqual(b[3], QuadraticBezier(Point(50, 100), Point(0, 100), Point(0, 50)))
        // B(0.5) = 0.25·P0 + 0.5·P1 + 0.25·P2
        XCTAssertEqual(b[0].point(at: 0.5), Point(12.5, 12.5))
    }

    func testRayMeetsBoundary() throws {
        // Axis rays hit the edge midpoints: R = 50.
        XCTAssertEqual(try XCTUnwrap(square.boundaryDistance(ux: 1, uy: 0)), 50, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(square.boundaryDistance(ux: 0, uy: -1)), 50, accuracy: 1e-9)
        // The diagonal ray hits B(0.5) = (12.5, 12.5): R = 37.5·√2.
        let s = 1 / 2.0.squareRoot()
        XCTAssertEqual(try XCTUnwrap(square.boundaryDistance(ux: -s, uy: -s)), 37.5 * 2.0.squareRoot(), accuracy: 1e-9)
    }

    func testPeakIsEightPercentOfShorterSide() {
        let wide = RegionShape(lt: Point(0, 0), rt: Point(200, 0), rb: Point(200, 50), lb: Point(0, 50), center: Point(100, 25))
        XCTAssertEqual(wide.maxDisplacement(amplitude: 1), 4, accuracy: 1e-12)
        XCTAssertEqual(wide.maxDisplacement(amplitude: 0.5), 2, accuracy: 1e-12)
        XCTAssertEqual(square.maxDisplacement(amplitude: 1), 8, accuracy: 1e-12)
    }

    func testDisplacementIsPeakAtCenterAndZeroOnBoundary() {
        XCTAssertEqual(square.displacement(at: Point(50, 50), peak: 8), 8)
        XCTAssertEqual(square.displacement(at: Point(100, 50), peak: 8), 0, accuracy: 1e-9)
        XCTAssertEqual(square.displacement(at: Point(50, 0), peak: 8), 0, accuracy: 1e-9)
        XCTAssertEqual(square.displacement(at: Point(12.5, 12.5), peak: 8), 0, accuracy: 1e-6)
        XCTAssertEqual(square.displacement(at: Point(101, 50), peak: 8), 0)
        XCTAssertEqual(square.displacement(at: Point(5, 5), peak: 8), 0)   // outside the rounded corner
    }

    func testHemisphereHalfway() {
        // d = R/2, R = 50, M = 8: θc = acos(0.16), θ = acos(0.5) = π/3,
        // θ' = θ·θc/(π/2), m = R(cos θ' − cos θ).
        let thetaC = acos(0.16), theta = Double.pi / 3
        let expected = 50 * (cos(theta * thetaC / (Double.pi / 2)) - 0.5)
        XCTAssertEqual(square.displacement(at: Point(75, 50), peak: 8), expected, accuracy: 1e-9)
        XCTAssertEqual(expected, 4.4866, accuracy: 1e-3)   // θc ≈ 1.4101, θ' ≈ 0.9401
        // Monotone from the center outwards.
        var last = Double.infinity
        for x in stride(from: 50.0, through: 100, by: 5) {
            let m = square.displacement(at: Point(x, 50), peak: 8)
            XCTAssertLessThanOrEqual(m, last)
            last = m
        }
    }

    func testPeakLimitedToR() {
        // M larger than R is limited to R: m = R·cos(0) − R·cos θ = R − d at most.
        let m = square.displacement(at: Point(50, 50), peak: 500)
        XCTAssertEqual(m, 500)   // p = C: the displacement is M
        let m2 = square.displacement(at: Point(75, 50), peak: 500)
        XCTAssertEqual(m2, 50 * (1 - 0.5), accuracy: 1e-9)
        XCTAssertFalse(m2.isNaN)
    }

    func testProgressCurve() {
        let d = 1.2
        XCTAssertEqual(cycleProgress(tau: 0, duration: d), 0)
        XCTAssertEqual(cycleProgress(tau: d / 8, duration: d), -0.75, accuracy: 1e-12)
        XCTAssertEqual(cycleProgress(tau: d / 4, duration: d), -1, accuracy: 1e-12)
        XCTAssertEqual(cycleProgress(tau: d / 2, duration: d), 0, accuracy: 1e-12)   // the original's NaN
        XCTAssertEqual(cycleProgress(tau: 3 * d / 4, duration: d), 1, accuracy: 1e-12)
        XCTAssertEqual(cycleProgress(tau: 7 * d / 8, duration: d), 0.75, accuracy: 1e-12)
        XCTAssertEqual(cycleProgress(tau: d, duration: d), 0, accuracy: 1e-12)
        for i in 0...1000 {
            let p = cycleProgress(tau: Double(i) * d / 1000, duration: d)
            XCTAssertFalse(p.isNaN)
            XCTAssertLessThanOrEqual(abs(p), 1)
        }
    }

    func testPolarIsTheShapeOnlyPartOfTheDisplacement() throws {
        // d and R along the ray; inside is d <= R; displacement is the hemisphere of them.
        let (d, r) = try XCTUnwrap(square.polar(at: Point(75, 50)))
        XCTAssertEqual(d, 25, accuracy: 1e-12)
        XCTAssertEqual(r, 50, accuracy: 1e-9)
        let outside = try XCTUnwrap(square.polar(at: Point(120, 50)))
        XCTAssertGreaterThan(outside.d, outside.r)
        XCTAssertEqual(square.polar(at: square.center)?.d, 0)
        let flat = RegionShape(lt: Point(0, 0), rt: Point(10, 0), rb: Point(10, 0), lb: Point(0, 0), center: Point(5, 0))
        XCTAssertNil(flat.polar(at: Point(5, 0)))
        for k in 0..<200 {
            let p = Point(Double(k % 20) * 5.3 - 2, Double(k / 20) * 11.1 - 3)
            for peak in [0.5, 8, 400] {
                var expected = 0.0
                if let (d, r) = square.polar(at: p) {
                    expected = d == 0 ? peak : (d <= r && r > 0 ? RegionShape.hemisphere(d: d, r: r, peak: peak) : 0)
                }
                XCTAssertEqual(square.displacement(at: p, peak: peak), expected)
            }
        }
    }

    func testRegionFrameOffsetIsPeakSwingDirection() {
        let a = RegionFrame(shape: square, peak: 3, direction: Point(1, 0), swing: cycleProgress(tau: 0.3, duration: 1.2))
        XCTAssertEqual(a.swing, -1, accuracy: 1e-12)
        XCTAssertEqual(a.centerOffset.x, -3, accuracy: 1e-12)
        XCTAssertEqual(a.offset(at: square.center)?.x ?? 0, -3, accuracy: 1e-12)
        XCTAssertNil(a.offset(at: Point(200, 50)))
    }

    func testAmplitudeAfterCycles() {
        let imp = Impulse(start: 2, direction: Point(1, 0), amplitude: 1)
        let expected = [1, 0.7, 0.49, 0.343, 0.2401, 0.16807, 0.117649, 0, 0]
        for (n, a) in expected.enumerated() {
            let st = imp.state(at: 2 + Double(n) * 1.2 + 0.3, parameters: .original)
            XCTAssertEqual(st.amplitude, a, accuracy: 1e-12, "after \(n) cycles")
        }
        // Exactly at a boundary (within 1e-9) the new cycle has begun.
        let atBoundary = imp.state(at: 2 + 1.2 - 5e-10, parameters: .original)
        XCTAssertEqual(atBoundary.amplitude, 0.7, accuracy: 1e-12)
        XCTAssertEqual(atBoundary.cycleStart, 3.2, accuracy: 1e-12)
        XCTAssertEqual(atBoundary.tau, 0)
        // Once 0, lastAnimationBeginTime stays at the cycle where it reached 0 (the 7th boundary).
        let late = imp.state(at: 100, parameters: .original)
        XCTAssertEqual(late.amplitude, 0)
        XCTAssertEqual(late.cycleStart, 2 + 7 * 1.2, accuracy: 1e-9)
    }

    func testSlowDecayKeepsWobblingPastFourThousandCycles() throws {
        // decay 0.9999, threshold 0.001: 69075 cycles of 1 ms before the amplitude falls below the threshold.
        let p = WobbleParameters(duration: 0.001, decay: 0.9999, threshold: 0.001)
        let imp = Impulse(start: 0, direction: Point(1, 0), amplitude: 1)
        let at10s = imp.state(at: 10.0005, parameters: p)      // 10000 cycle ends
        XCTAssertEqual(at10s.amplitude, pow(0.9999, 10000), accuracy: 1e-9)
        XCTAssertEqual(at10s.cycleStart, 10, accuracy: 1e-9)
        XCTAssertEqual(imp.state(at: 69.0745, parameters: p).amplitude, pow(0.9999, 69074), accuracy: 1e-9)
        let late = imp.state(at: 100, parameters: p)
        XCTAssertEqual(late.amplitude, 0)
        XCTAssertEqual(late.cycleStart, 69.075, accuracy: 1e-9)
        // untilStill() waits for the same moment.
        let s = Scene()
        s.imageSize = (40, 30)
        s.addSketch(parameters: p)
        let m = s.prepare()[0]
        try s.impulse(m, dx: 1, dy: 0)
        XCTAssertTrue(try s.untilStill())
        XCTAssertEqual(s.now, 69.075, accuracy: 1e-9)
    }

    func testCustomParameters() {
        let p = WobbleParameters(duration: 2, decay: 0.5, threshold: 0.2, strength: 0.1)
        XCTAssertNil(p.validationError())
        let imp = Impulse(start: 0, direction: Point(0, 1), amplitude: 1)
        XCTAssertEqual(imp.state(at: 2.5, parameters: p).amplitude, 0.5)
        XCTAssertEqual(imp.state(at: 4.5, parameters: p).amplitude, 0.25)
        XCTAssertEqual(imp.state(at: 6.5, parameters: p).amplitude, 0)
        XCTAssertEqual(WobbleParameters(duration: 0).validationError(), "duration must be a number in (0, 3600]")
        XCTAssertEqual(WobbleParameters(decay: 1.5).validationError(), "decay must be a number in [0, 1]")
        XCTAssertNotNil(WobbleParameters(strength: .nan).validationError())
    }

    func testDegenerateShapesNeverMove() {
        let collapsed = RegionShape(lt: Point(5, 5), rt: Point(5, 5), rb: Point(5, 5), lb: Point(5, 5), center: Point(5, 5))
        let line = RegionShape(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 0), lb: Point(0, 0), center: Point(50, 0))
        let outside = RegionShape(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100), center: Point(150, 50))
        let onBoundary = RegionShape(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100), center: Point(100, 50))
        let nanShape = RegionShape(lt: Point(.nan, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100), center: Point(50, 50))
        // A bow-tie: corners enclose zero (signed) area.
        let bowtie = RegionShape(lt: Point(0, 0), rt: Point(100, 100), rb: Point(100, 0), lb: Point(0, 100), center: Point(50, 50))
        for s in [collapsed, line, outside, onBoundary, nanShape, bowtie] {
            XCTAssertFalse(s.canMove, "\(s.lt) \(s.rt) \(s.rb) \(s.lb) \(s.center)")
            for p in [Point(5, 5), Point(50, 50), Point(50, 0), s.center] {
                let m = s.displacement(at: p, peak: 8)
                XCTAssertEqual(m, 0)
            }
            XCTAssertFalse(s.contains(s.center))
        }
        XCTAssertTrue(square.canMove)
        XCTAssertTrue(square.contains(Point(50, 50)))
        // An off-center but inside center still moves.
        let offCenter = RegionShape(lt: Point(0, 0), rt: Point(100, 0), rb: Point(100, 100), lb: Point(0, 100), center: Point(80, 30))
        XCTAssertTrue(offCenter.canMove)
        XCTAssertEqual(offCenter.displacement(at: Point(80, 30), peak: 8), 8)
    }

    func testNonConvexAndCounterClockwiseShapes() {
        // Counter-clockwise corner order describes the same region.
        let ccw = RegionShape(lt: Point(0, 100), rt: Point(100, 100), rb: Point(100, 0), lb: Point(0, 0), center: Point(50, 50))
        XCTAssertTrue(ccw.canMove)
        XCTAssertEqual(ccw.displacement(at: Point(75, 50), peak: 8), square.displacement(at: Point(75, 50), peak: 8), accuracy: 1e-9)
        // A skewed quad: every point near the center is inside, far ones are not.
        let skew = RegionShape(lt: Point(20, 0), rt: Point(120, 10), rb: Point(100, 90), lb: Point(0, 80), center: Point(60, 45))
        XCTAssertTrue(skew.canMove)
        XCTAssertTrue(skew.contains(Point(60, 45)))
        XCTAssertTrue(skew.contains(Point(70, 50)))
        XCTAssertFalse(skew.contains(Point(0, 0)))
        XCTAssertFalse(skew.contains(Point(200, 45)))
    }
}
