import XCTest
final class PlaceholderWobbleRunTests: XCTestCase { func testNothing() {} }
