import XCTest
import WobbleCore
import WobbleRender
@testable import WobbleStudio
@testable import WobbleStudioCore

/// The window's geometry and the pieces of a frame it uploads, without a window.
final class LayoutTests: XCTestCase {
    func testOneToOneWhenItFitsElseScaledDownUniformly() {
        let small = Layout(imageWidth: 451, imageHeight: 300, screen: (1920, 1080))
        XCTAssertEqual(small.scale, 1)
        XCTAssertEqual(small.windowWidth, 451 + Layout.panelWidth)   // the picture, then the inspector's column
        XCTAssertEqual(small.imageRect.x, 0)
        XCTAssertEqual(small.imageRect.w, 451)
        XCTAssertEqual(small.windowHeight, 300 + Layout.chromeHeight)
        XCTAssertTrue(small.panelRect == (451, 0, Layout.panelWidth, 300))
        // A small picture: the window is wide enough for the minimum, the
        // picture centred in its column; the inspector sets the height.
        let tiny = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        XCTAssertEqual(tiny.windowWidth, 480)
        XCTAssertEqual(tiny.imageRect.x, (480 - Layout.panelWidth - 120) / 2)
        XCTAssertEqual(tiny.chromeY, Layout.panelMinHeight)
        XCTAssertEqual(tiny.windowHeight, Layout.panelMinHeight + Layout.chromeHeight)
        XCTAssertNil(tiny.imagePoint(tiny.imageRect.x + 5, 95), "below the picture is not the picture")
        let back = tiny.windowPoint(tiny.imagePointUnclamped(tiny.imageRect.x + 7, 9))
        XCTAssertEqual(back.x, Double(tiny.imageRect.x + 7), accuracy: 1e-9)
        XCTAssertEqual(back.y, 9, accuracy: 1e-9)

        let big = Layout(imageWidth: 4000, imageHeight: 3000, screen: (1920, 1080))
        XCTAssertLessThan(big.scale, 1)
        XCTAssertLessThanOrEqual(big.windowWidth, 1920)
        XCTAssertLessThanOrEqual(big.windowHeight, 1080)
        XCTAssertEqual(Double(big.imageRect.w) / Double(big.imageRect.h), 4.0 / 3.0, accuracy: 0.01)
        // A window pixel maps back to the image point under its centre.
        let p = big.imagePointUnclamped(big.imageRect.x + 100, 50)
        XCTAssertEqual(p.x, 100.5 / big.scale, accuracy: 1e-9)
        XCTAssertNil(big.imagePoint(big.imageRect.x - 1, 10))
    }

    func testDegenerateSizesDoNotTrap() {
        let l = Layout(imageWidth: 0, imageHeight: -5, screen: (0, 0))
        XCTAssertGreaterThan(l.windowWidth, 0)
        XCTAssertGreaterThan(l.imageRect.h, 0)
        XCTAssertEqual(l.timelineFraction(-100), 0)
        XCTAssertEqual(l.timelineFraction(100_000), 1)
    }

    func testChangedBoxCoversTheRegionsAndStaysInTheImage() {
        let shape = RegionShape(lt: Point(10, 20), rt: Point(50, 20), rb: Point(50, 60), lb: Point(10, 60), center: Point(30, 40))
        let r = RegionFrame(shape: shape, peak: 3, direction: Point(1, 0), swing: 0.5)
        XCTAssertEqual(PixelRect.covering([r], width: 100, height: 100), [PixelRect(x0: 8, y0: 18, x1: 52, y1: 62)])
        XCTAssertEqual(PixelRect.covering([r, r], width: 30, height: 30), [PixelRect(x0: 8, y0: 18, x1: 30, y1: 30)])
        XCTAssertEqual(PixelRect.covering([], width: 30, height: 30), [])
        let far = RegionShape(lt: Point(200, 200), rt: Point(250, 200), rb: Point(250, 260), lb: Point(200, 260), center: Point(225, 230))
        XCTAssertEqual(PixelRect.covering([RegionFrame(shape: far, peak: 1, direction: Point(0, 1), swing: 1)], width: 100, height: 100), [])
        // Many boxes: their union.
        var many: [RegionFrame] = []
        for i in 0..<10 {
            let x = Double(i * 5)
            let shape = RegionShape(lt: Point(x, 0), rt: Point(x + 4, 0), rb: Point(x + 4, 4), lb: Point(x, 4), center: Point(x + 2, 2))
            many.append(RegionFrame(shape: shape, peak: 1, direction: Point(1, 0), swing: 1))
        }
        XCTAssertEqual(PixelRect.covering(many, width: 100, height: 100), [PixelRect(x0: 0, y0: 0, x1: 51, y1: 6)])
        let wild = RegionShape(lt: Point(-.infinity, 0), rt: Point(1, 0), rb: Point(1, 1), lb: Point(0, 1), center: Point(0.5, 0.5))
        let w = RegionFrame(shape: wild, peak: 1, direction: Point(1, 0), swing: 1)
        XCTAssertEqual(PixelRect.covering([w], width: 30, height: 20), [PixelRect(x0: 0, y0: 0, x1: 30, y1: 20)])
    }

    func testTheSparseOverlayBlendsOnlyItsPixels() {
        var layer = RGBAImage(width: 4, height: 1)
        layer.pixels[4...7] = [255, 0, 0, 255]
        layer.pixels[8...11] = [0, 0, 255, 128]
        var frame = RGBAImage(width: 4, height: 1, pixels: [UInt8](repeating: 100, count: 16))
        SparseOverlay(layer).blend(into: &frame)
        XCTAssertEqual(Array(frame.pixels[0...3]), [100, 100, 100, 100])
        XCTAssertEqual(Array(frame.pixels[4...7]), [255, 0, 0, 255])
        XCTAssertEqual(Array(frame.pixels[8...11]), [50, 50, 178, 128])
        var other = RGBAImage(width: 2, height: 2)
        SparseOverlay(layer).blend(into: &other)   // another size: nothing happens
        XCTAssertEqual(other, RGBAImage(width: 2, height: 2))
    }

    /// The wheel's zoom keeps the image point under the mouse, stops at a
    /// 4096-pixel picture and at 32 pixels; a pan keeps 32 pixels of the
    /// picture in the area; F fits, enlarging.
    func testZoomPanAndFitKeepThePictureReachable() {
        let l = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950))
        XCTAssertEqual(l.scale, 1, "a bigger window alone does not enlarge")
        XCTAssertEqual(l.chromeY, 950 - Layout.chromeHeight)
        // The picture area: left of the inspector's column, above the chrome.
        let areaW = 1300 - Layout.panelWidth
        XCTAssertTrue(l.pictureArea == (0, 0, areaW, 950 - Layout.chromeHeight))
        let fit = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950), view: l.fitted)
        XCTAssertEqual(fit.scale, Double(areaW) / 640, accuracy: 1e-9)
        XCTAssertEqual(fit.imageRect.w, areaW)
        let fitH = Int((360 * Double(areaW) / 640).rounded())
        XCTAssertEqual(fit.imageRect.y, (950 - Layout.chromeHeight - fitH) / 2)
        let before = l.imagePointUnclamped(700, 400)
        let z = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950), view: l.zoomed(by: 1.25, around: 700, 400))
        let after = z.imagePointUnclamped(700, 400)
        XCTAssertEqual(before.x, after.x, accuracy: 1)
        XCTAssertEqual(before.y, after.y, accuracy: 1)
        let huge = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950), view: l.zoomed(by: 1000, around: 700, 400))
        XCTAssertEqual(huge.imageRect.w, 4096)
        let tiny = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950), view: l.zoomed(by: 0.0001, around: 700, 400))
        XCTAssertEqual(tiny.imageRect.w, 32)
        let far = Layout(imageWidth: 640, imageHeight: 360, window: (1300, 950), view: l.panned(from: l.view, by: 5000, -5000))
        XCTAssertEqual(far.imageRect.x, areaW - 32)
        XCTAssertEqual(far.imageRect.y, 32 - 360)
        XCTAssertNil(far.imagePoint(far.imageRect.x + 5, far.chromeY + 1), "the chrome is not the picture")
    }
}
