import XCTest
import WobbleCore
@testable import WobbleRender

/// Pins (`addSketch{pin = ...}`), measured on a coordinate ramp: red is the
/// pixel's x, green its y, so every output pixel says where it sampled.
final class PinTests: XCTestCase {
    /// 120×180: red = x, green = y (exact: both below 256), opaque.
    static let ramp: RGBAImage = {
        var img = RGBAImage(width: 120, height: 180)
        for y in 0 ..< 180 {
            for x in 0 ..< 120 {
                let i = (y * 120 + x) * 4
                img.pixels[i] = UInt8(x)
                img.pixels[i + 1] = UInt8(y)
                img.pixels[i + 3] = 255
            }
        }
        return img
    }()

    /// The region (a rectangle 60 wide and 120 tall, or 120×60 for a side
    /// pin) and the peak M.
    static let peak = 12.0

    /// Where output pixel (i, j) sampled, minus its own centre.
    static func offset(_ img: RGBAImage, _ i: Int, _ j: Int) -> Point {
        let p = img.pixel(i, j)
        return Point(Double(p.r) - Double(i), Double(p.g) - Double(j))
    }

    /// The profile on the middle line, from the root to the far side: for
    /// each pixel along it, the offset across the axis (the swing
    /// direction), both backends.
    func middleLine(_ pin: PinSide) throws -> [(cpu: Double, gles: Double, fraction: Double)] {
        // Pixel centres on the middle line: the region is centred on a pixel centre.
        let shape: RegionShape
        let direction: Point
        switch pin {
        case .bottom, .top:
            shape = rect(29.5, 30, 60, 120)
            direction = Point(1, 0)
        case .left, .right:
            shape = rect(0, 59.5, 120, 60)
            direction = Point(0, 1)
        }
        let region = RegionFrame(shape: shape, peak: PinTests.peak, direction: direction, swing: 1, pin: pin)
        let frame = frameState([region])
        let cpu = try CPURenderer(source: PinTests.ramp).render(frame)
        let gles = try makeGLES(PinTests.ramp).render(frame)
        let psnr = Reference.psnr(cpu, gles)
        XCTAssertGreaterThanOrEqual(psnr, 38, "\(pin): GLES vs CPU \(psnr) dB")
        // Nothing outside the region moves.
        for j in 0 ..< 180 {
            for i in 0 ..< 120 where !shape.contains(Point(Double(i) + 0.5, Double(j) + 0.5)) {
                for img in [cpu, gles] {
                    XCTAssertEqual(PinTests.offset(img, i, j), .zero, "\(pin): (\(i), \(j)) outside the region moved")
                }
            }
        }
        // From the root to the far side, pixel by pixel.
        var line: [(cpu: Double, gles: Double, fraction: Double)] = []
        switch pin {
        case .bottom, .top:
            let rows = pin == .bottom ? Array((30 ..< 150).reversed()) : Array(30 ..< 150)
            for (n, j) in rows.enumerated() {
                line.append((PinTests.offset(cpu, 59, j).x, PinTests.offset(gles, 59, j).x, (Double(n) + 0.5) / 120))
            }
        case .left, .right:
            let columns = pin == .left ? Array(0 ..< 120) : Array((0 ..< 120).reversed())
            for (n, i) in columns.enumerated() {
                line.append((PinTests.offset(cpu, i, 89).y, PinTests.offset(gles, i, 89).y, (Double(n) + 0.5) / 120))
            }
        }
        return line
    }

    func testThePinnedProfileOnARampInBothBackends() throws {
        for pin in PinSide.allCases {
            let line = try middleLine(pin)
            for backend in ["cpu", "gles"] {
                let v = line.map { backend == "cpu" ? $0.cpu : $0.gles }
                // 0 at the root, 0 at the far boundary (within the 8-bit ramp's rounding).
                XCTAssertLessThanOrEqual(abs(v.first ?? 9), 0.5, "\(pin) \(backend): the root moves: \(v.prefix(3))")
                // The last pixel centre lies half a pixel inside the far side,
                // where the profile is 0.6 (it is 0 on the boundary itself:
                // the next test).
                XCTAssertLessThanOrEqual(abs(v.last ?? 9), 1, "\(pin) \(backend): the far side moves: \(v.suffix(3))")
                // The peak: M, past 60% of the way.
                let top = v.indices.max { v[$0] < v[$1] } ?? 0
                XCTAssertEqual(v[top], PinTests.peak, accuracy: 0.51, "\(pin) \(backend): peak \(v[top])")
                XCTAssertGreaterThanOrEqual(line[top].fraction, 0.6, "\(pin) \(backend): peak at \(line[top].fraction) of the way")
                // Rises monotonically from the root to the peak (the ramp rounds to whole pixels).
                for k in 1 ... top {
                    XCTAssertGreaterThanOrEqual(v[k], v[k - 1], "\(pin) \(backend): falls at \(line[k].fraction) of the way: \(v[k - 1]) → \(v[k])")
                }
                // And follows the documented formula.
                for (k, s) in line.enumerated() {
                    let rho = abs(2 * s.fraction - 1), sigma = 2 * s.fraction - 1
                    let expected = PinTests.peak * (1 - rho * rho) * pow((1 + sigma) / 2, 3) / 0.32768
                    XCTAssertEqual(v[k], expected, accuracy: 0.75, "\(pin) \(backend) at \(s.fraction)")
                }
            }
        }
    }

    func testTheProfileIsZeroOnTheWholeBoundaryAndAPinnedSideMustExist() {
        let shape = rect(10, 10, 40, 80)
        for pin in PinSide.allCases {
            for q in shape.boundary {
                for t in stride(from: 0.0, through: 1.0, by: 0.05) {
                    XCTAssertEqual(shape.displacement(at: q.point(at: t), peak: 5, pin: pin), 0, accuracy: 1e-9)
                }
            }
            XCTAssertNil(shape.pinProblem(pin))
        }
        let triangle = RegionShape(lt: Point(0, 0), rt: Point(40, 0), rb: Point(20, 50), lb: Point(20, 50), center: Point(20, 20))
        XCTAssertEqual(triangle.pinProblem(.bottom), "pin = \"bottom\" needs a bottom side, but lb and rb are the same point")
        XCTAssertNil(triangle.pinProblem(.top))
    }
}
