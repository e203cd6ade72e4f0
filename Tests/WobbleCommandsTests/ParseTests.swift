import XCTest
@testable import WobbleCommands
import WobbleEngine

final class ParseTests: XCTestCase {
    func testCutoutParsesIntoItsCommand() throws {
        let c = try CutoutCommand.parse(["p.png", "--box", "1,2,3,4"])
        XCTAssertEqual(c.photo, "p.png")
        XCTAssertEqual(c.query, .box(x: 1, y: 2, w: 3, h: 4))
    }
}
