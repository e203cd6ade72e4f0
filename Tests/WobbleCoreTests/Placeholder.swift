import XCTest
final class PlaceholderWobbleCoreTests: XCTestCase { func testNothing() {} }
