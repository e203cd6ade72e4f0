import XCTest
final class PlaceholderWobbleScriptTests: XCTestCase { func testNothing() {} }
