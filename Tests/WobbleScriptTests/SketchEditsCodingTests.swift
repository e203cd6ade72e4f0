import Foundation
import XCTest
import WobbleCore
import WobbleScript

/// The studio's edits are values a front end can send and keep: JSON in
/// and out gives the same edits (a cutout made in memory included), and
/// a mask whose bytes do not fit its size is refused with a line.
final class SketchEditsCodingTests: XCTestCase {
    func testEditsGoThroughJSONUnchanged() throws {
        let square = SketchPoints(lt: Point(1, 2), rt: Point(30, 2), rb: Point(30, 40), lb: Point(1, 40), center: Point(15, 20))
        var spring = WobbleParameters(motion: .spring, damping: 0.25, pin: .bottom)
        var mask = GreyMask(width: 4, height: 3)
        mask.pixels[5] = 255
        let stroke = CutoutStroke(points: [Point(1, 1), Point(2, 2)], radius: 1.5, object: true)
        spring.cutout = CutoutRequest(source: .memory(MaskImage(mask: mask, strokes: [stroke])), shape: square.shape, place: "s.lua:3")
        let edits = SketchEdits(calls: [2: SketchState(points: square, parameters: spring, name: "tail")],
                                added: [SketchState(points: square), SketchState(points: square, parameters: .original, name: "ear")],
                                loop: true, loopPeriod: 1.5,
                                baked: [PerformedEvent(time: 0.25, action: .touch(from: Point(3, 4), to: Point(5, 6)))],
                                removedKicks: [7, 9], deleted: [0, 3])
        let json = try JSONEncoder().encode(edits)
        let back = try JSONDecoder().decode(SketchEdits.self, from: json)
        XCTAssertEqual(back, edits)
        guard case .memory(let m)? = back.calls[2]?.parameters.cutout?.source else { return XCTFail("the cutout's source") }
        XCTAssertEqual(m.mask.pixels, mask.pixels)
        XCTAssertEqual(m.strokes, [stroke])
        XCTAssertEqual(back.calls[2]?.parameters.motion, .spring)

        let bad = Data(#"{"width": 4, "height": 3, "pixels": [0, 0]}"#.utf8)
        XCTAssertThrowsError(try JSONDecoder().decode(GreyMask.self, from: bad)) { error in
            guard case DecodingError.dataCorrupted(let c) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(c.debugDescription, "a 4x3 mask needs 4x3 bytes, got 2")
        }
        let unknown = Data(String(decoding: try JSONEncoder().encode(WobbleParameters.original), as: UTF8.self)
            .replacingOccurrences(of: "\"classic\"", with: "\"jelly\"").utf8)
        XCTAssertThrowsError(try JSONDecoder().decode(WobbleParameters.self, from: unknown), "a model no catalog declares")
    }
}
