import XCTest
final class PlaceholderWobbleRenderTests: XCTestCase { func testNothing() {} }
