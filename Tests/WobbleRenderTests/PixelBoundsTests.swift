import XCTest
import WobbleCore
@testable import WobbleRender

/// The renderers' pixel bounds take any box (the Lua API limits
/// coordinates, but a renderer must not trust its callers): a box far
/// outside the frame, or not finite, clamps instead of trapping.
final class PixelBoundsTests: XCTestCase {
    let m = OutputMapping(sourceWidth: 64, sourceHeight: 48, outputWidth: 32, outputHeight: 24)

    func testHugeAndNonFiniteBoxesClampToTheFrame() {
        let all = m.pixelBounds(covering: Rect(minX: -1e19, minY: -1e308, maxX: 1e19, maxY: .infinity))
        XCTAssertTrue(all == (0, 31, 0, 23), "\(all)")
        let left = m.pixelBounds(covering: Rect(minX: -1e19, minY: 0, maxX: -1e18, maxY: 10))
        XCTAssertGreaterThan(left.i0, left.i1, "a box left of the frame is empty: \(left)")
        let right = m.pixelBounds(covering: Rect(minX: 1e300, minY: 0, maxX: 1e301, maxY: 10))
        XCTAssertGreaterThan(right.i0, right.i1, "a box right of the frame is empty: \(right)")
        let nan = m.pixelBounds(covering: Rect(minX: .nan, minY: .nan, maxX: .nan, maxY: .nan))
        XCTAssertGreaterThan(nan.i0, nan.i1, "\(nan)")
        let usual = m.pixelBounds(covering: Rect(minX: 10, minY: 8, maxX: 20, maxY: 16))
        XCTAssertTrue(usual == (4, 10, 3, 8), "\(usual)")
    }

    func testBothBackendsRenderARegionOfHugeCoordinates() throws {
        let img = CPURendererTests.testImage()
        let shape = RegionShape(lt: Point(-1e19, -1e19), rt: Point(1e19, -1e19), rb: Point(1e19, 1e19), lb: Point(-1e19, 1e19),
                                center: Point(0, 0))
        let region = RegionFrame(shape: shape, direction: Point(1, 0), peak: 1, progress: -1)
        let frame = FrameState(index: 0, time: 0, regions: [region], overlay: [], overlayOn: false)
        let cpu = try CPURenderer(source: img).render(frame)
        XCTAssertEqual(cpu.width, 64)
        let gles = try GLESRenderer(source: img, outputWidth: 64, outputHeight: 48, verbose: false).render(frame)
        XCTAssertEqual(gles.height, 48)
    }
}
