import XCTest
final class PlaceholderWobbleMediaTests: XCTestCase { func testNothing() {} }
