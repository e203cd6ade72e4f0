import WobbleSystem
import XCTest

/// `AbsolutePath`: absolute and normalised when made, its folder, names
/// and what lies inside a folder by components, a name's exact bytes kept.
final class AbsolutePathTests: XCTestCase {
    func testMadeAbsoluteAndNormalised() {
        XCTAssertEqual(AbsolutePath("/a/./b/../c//d.lua").string, "/a/c/d.lua")
        XCTAssertEqual(AbsolutePath("/../..").string, "/")
        XCTAssertEqual(AbsolutePath("/a/").string, "/a", "no trailing slash")
        let cwd = ScenePaths.absolute(ScenePaths.currentDirectory())
        XCTAssertEqual(AbsolutePath("s.lua").string, ScenePaths.join(cwd, "s.lua"), "a relative path against the current folder")
        XCTAssertEqual(AbsolutePath("a/../s.lua"), AbsolutePath("./s.lua"))
    }

    func testFolderNameAndAppending() {
        let p = AbsolutePath("/scenes/jelly.lua")
        XCTAssertEqual(p.folder.string, "/scenes")
        XCTAssertEqual(p.folder.folder.string, "/")
        XCTAssertEqual(AbsolutePath("/").folder.string, "/", "the root's folder is the root")
        XCTAssertEqual(p.name, "jelly.lua")
        XCTAssertEqual(p.baseName, "jelly")
        XCTAssertEqual(AbsolutePath("/").name, "")
        XCTAssertEqual(p.folder.appending("jelly.html").string, "/scenes/jelly.html")
        XCTAssertEqual(AbsolutePath("/").appending("tmp").string, "/tmp", "one slash after the root")
        XCTAssertEqual(p.folder.appending("masks/../b.png").string, "/scenes/b.png", "what is appended is normalised too")
    }

    func testRelativeInsideAFolderIsByComponents() {
        let folder = AbsolutePath("/scenes")
        XCTAssertEqual(AbsolutePath("/scenes/img.png").relative(inside: folder), "img.png")
        XCTAssertEqual(AbsolutePath("/scenes/masks/a.png").relative(inside: folder), "masks/a.png")
        XCTAssertNil(AbsolutePath("/scenes2/img.png").relative(inside: folder), "a folder whose name begins alike is another")
        XCTAssertNil(AbsolutePath("/scenes").relative(inside: folder), "the folder is not inside itself")
        XCTAssertNil(AbsolutePath("/img.png").relative(inside: folder))
        // A scene in the root: its files are inside "/" (a string prefix test on `folder + "/"` found none).
        XCTAssertEqual(AbsolutePath("/img.png").relative(inside: AbsolutePath("/")), "img.png")
    }

    /// A name that is not UTF-8 keeps its bytes through every operation,
    /// and is shown as the CLI shows it.
    func testANameThatIsNotUTF8KeepsItsBytes() {
        let name = PathBytes.string([0x66, 0xFE, 0x2E, 0x70, 0x6E, 0x67])  // f\xFE.png
        let p = AbsolutePath("/scenes").appending(name)
        XCTAssertEqual(PathBytes.bytes(p.string), Array("/scenes/".utf8) + [0x66, 0xFE, 0x2E, 0x70, 0x6E, 0x67])
        XCTAssertEqual(PathBytes.bytes(p.name), [0x66, 0xFE, 0x2E, 0x70, 0x6E, 0x67])
        XCTAssertEqual(p.relative(inside: AbsolutePath("/scenes")).map(PathBytes.bytes), [0x66, 0xFE, 0x2E, 0x70, 0x6E, 0x67])
        XCTAssertEqual(p.description, "/scenes/f\\xFE.png")
    }
}
