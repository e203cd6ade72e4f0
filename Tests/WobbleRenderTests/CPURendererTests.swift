import XCTest
import WobbleCore
@testable import WobbleRender

/// The CPU reference renderer: untouched outside regions, moved inside.
final class CPURendererTests: XCTestCase {
    /// A 64×48 gradient with a transparent stripe.
    static func testImage(width: Int = 64, height: Int = 48) -> RGBAImage {
        var px = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                px[i] = UInt8(x * 255 / (width - 1))
                px[i + 1] = UInt8(y * 255 / (height - 1))
                px[i + 2] = UInt8((x * 7 + y * 13) % 256)
                px[i + 3] = (x / 4) % 4 == 0 ? 0 : 255
            }
        }
        return RGBAImage(width: width, height: height, pixels: px)
    }

    func testStillFrameIsTheSource() throws {
        let img = Self.testImage()
        let r = CPURenderer(source: img)
        let f = FrameState(index: 0, time: 0, regions: [], overlay: [], overlayOn: false)
        XCTAssertEqual(try r.render(f), img)
    }

    func testPixelsOutsideRegionsUnchangedInsideMoved() throws {
        let img = Self.testImage()
        let shape = RegionShape(lt: Point(10, 8), rt: Point(42, 8), rb: Point(42, 40), lb: Point(10, 40), center: Point(26, 24))
        let region = RegionFrame(shape: shape, direction: Point(1, 0), peak: shape.maxDisplacement(amplitude: 1) * 2, progress: -1)
        let out = try CPURenderer(source: img).render(FrameState(index: 0, time: 0, regions: [region], overlay: [], overlayOn: false))
        var moved = 0
        for y in 0..<img.height {
            for x in 0..<img.width {
                let p = Point(Double(x) + 0.5, Double(y) + 0.5)
                if !shape.contains(p) {
                    XCTAssertTrue(out.pixel(x, y) == img.pixel(x, y), "(\(x),\(y)) outside must be untouched")
                } else if out.pixel(x, y) != img.pixel(x, y) {
                    moved += 1
                }
            }
        }
        XCTAssertGreaterThan(moved, 300)
        // At the center the source is sampled M = 5.12 px to the left (content moves right).
        let c = out.pixel(26, 24)
        let expectedR = (26.5 - 5.12 - 0.5) * 255 / 63
        XCTAssertEqual(Double(c.r), expectedR, accuracy: 1.01)
    }

    func testAlphaIsSampledWithColour() throws {
        let img = Self.testImage()
        let shape = RegionShape(lt: Point(0, 0), rt: Point(64, 0), rb: Point(64, 48), lb: Point(0, 48), center: Point(32, 24))
        let region = RegionFrame(shape: shape, direction: Point(1, 0), peak: 2, progress: 1)
        let out = try CPURenderer(source: img).render(FrameState(index: 0, time: 0, regions: [region], overlay: [], overlayOn: false))
        // At the center the sample is 2 px to the right: x = 34.5 → pixel 34 (alpha 255 → stripe at 32..35 is 0).
        XCTAssertEqual(out.pixel(32, 24).a, img.pixel(34, 24).a)
        XCTAssertEqual(out.pixel(32, 24).r, img.pixel(34, 24).r)
    }

    func testScaledOutputKeepsGeometryInSourcePixels() throws {
        let img = Self.testImage()
        let r = CPURenderer(source: img, outputWidth: 32, outputHeight: 24)
        let out = try r.render(FrameState(index: 0, time: 0, regions: [], overlay: [], overlayOn: false))
        XCTAssertEqual(out.width, 32)
        XCTAssertEqual(out.height, 24)
        // Output pixel (5, 5) samples source point (11, 11): between pixels 10 and 11.
        let expected = (Int(img.pixel(10, 10).g) + Int(img.pixel(10, 11).g) + 1) / 2
        XCTAssertEqual(Int(out.pixel(5, 5).g), expected, accuracy: 1)
    }

    func testOverlapFirstOrSum() throws {
        let img = Self.testImage()
        let a = RegionShape(lt: Point(0, 0), rt: Point(40, 0), rb: Point(40, 48), lb: Point(0, 48), center: Point(20, 24))
        let b = RegionShape(lt: Point(20, 0), rt: Point(64, 0), rb: Point(64, 48), lb: Point(20, 48), center: Point(42, 24))
        let ra = RegionFrame(shape: a, direction: Point(1, 0), peak: 3, progress: 1)
        let rb = RegionFrame(shape: b, direction: Point(0, 1), peak: 3, progress: 1)
        let r = CPURenderer(source: img)
        let ab = try r.render(FrameState(index: 0, time: 0, regions: [ra, rb], overlay: [], overlayOn: false, overlap: .first))
        let onlyA = try r.render(FrameState(index: 0, time: 0, regions: [ra], overlay: [], overlayOn: false))
        let onlyB = try r.render(FrameState(index: 0, time: 0, regions: [rb], overlay: [], overlayOn: false))
        // (30, 24) lies in both: a wins. (50, 24) only in b.
        XCTAssertTrue(ab.pixel(30, 24) == onlyA.pixel(30, 24))
        XCTAssertTrue(ab.pixel(50, 24) == onlyB.pixel(50, 24))
        // Summed: (30.5, 24.5) samples at p + offset_a + offset_b.
        let sum = try r.render(FrameState(index: 0, time: 0, regions: [ra, rb], overlay: [], overlayOn: false))
        XCTAssertTrue(sum.pixel(50, 24) == onlyB.pixel(50, 24))
        let p = Point(30.5, 24.5)
        let q = p + (ra.offset(at: p) ?? .zero) + (rb.offset(at: p) ?? .zero)
        XCTAssertGreaterThan(abs(q.x - p.x), 0.5)
        XCTAssertGreaterThan(abs(q.y - p.y), 0.5)
        // Red and alpha depend on x only: the premultiplied bilinear sample of
        // red weights the two columns by their alpha (a transparent column
        // gives no colour).
        let fx = q.x - 0.5, x0 = Int(fx.rounded(.down)), ax = fx - Double(x0)
        let w0 = (1 - ax) * Double(img.pixel(x0, 0).a), w1 = ax * Double(img.pixel(x0 + 1, 0).a)
        let expected = (w0 * Double(img.pixel(x0, 0).r) + w1 * Double(img.pixel(x0 + 1, 0).r)) / (w0 + w1)
        let expectedG = (q.y - 0.5) * 255 / 47
        XCTAssertEqual(Double(sum.pixel(30, 24).r), expected, accuracy: 2.5)
        XCTAssertEqual(Double(sum.pixel(30, 24).g), expectedG, accuracy: 2.5)
    }
}
