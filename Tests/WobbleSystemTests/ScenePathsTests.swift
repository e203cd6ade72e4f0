import WobbleSystem
import XCTest

/// `ScenePaths`: the one way paths are put together and taken apart outside
/// WobbleSystem (OSWallTests refuses `URL(fileURLWithPath:)` and `NSString`
/// path methods there).
final class ScenePathsTests: XCTestCase {
    func testJoinPutsOneSlashBetween() {
        XCTAssertEqual(ScenePaths.join("frames", "frame_00001.png"), "frames/frame_00001.png")
        XCTAssertEqual(ScenePaths.join("frames/", "frame_00001.png"), "frames/frame_00001.png")
        XCTAssertEqual(ScenePaths.join("/", "tmp"), "/tmp")
        XCTAssertEqual(ScenePaths.join(".", "s.lua"), "./s.lua")
        XCTAssertEqual(ScenePaths.join("", "s.lua"), "s.lua", "an empty folder leaves a relative name relative")
    }

    func testNamesAndExtensions() {
        XCTAssertEqual(ScenePaths.name("d/e/s.lua"), "s.lua")
        XCTAssertEqual(ScenePaths.baseName("d/e/s.lua"), "s")
        XCTAssertEqual(ScenePaths.baseName("s"), "s")
        XCTAssertEqual(ScenePaths.fileExtension("out/clip.MP4"), "MP4")
        XCTAssertEqual(ScenePaths.fileExtension("a.b/clip"), "", "a dot in a folder is not the file's extension")
        XCTAssertEqual(ScenePaths.fileExtension("take.gif"), "gif")
        XCTAssertEqual(ScenePaths.folder("s.lua"), ".")
        XCTAssertEqual(ScenePaths.folder("/s.lua"), "/")
    }
}
