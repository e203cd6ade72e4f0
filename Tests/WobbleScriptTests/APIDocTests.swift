import XCTest
@testable import WobbleScript

/// The editor files (`wobble-run --generate lua-meta|luacheckrc`) come from
/// `LuaAPIDoc`, held here to the API the host registers.
final class APIDocTests: XCTestCase {
    func testEveryRegisteredGlobalIsDescribedAndNothingElse() {
        let described = LuaAPIDoc.functions.map(\.name)
        XCTAssertEqual(Set(described).count, described.count, "a function described twice")
        XCTAssertEqual(Set(described), Set(LuaAPIDoc.registeredGlobals),
                       "LuaAPIDoc.functions must list exactly the registered globals")
        for f in LuaAPIDoc.functions {
            XCTAssertFalse(f.doc.isEmpty, f.name)
            XCTAssertFalse(f.doc.contains("\n"), "\(f.name): one line")
        }
    }

    func testTheGeneratedFilesNameEveryFunction() {
        let meta = LuaAPIDoc.luaLSMeta(version: "test")
        let rc = LuaAPIDoc.luacheckrc(version: "test")
        XCTAssertTrue(meta.hasPrefix("---@meta"))
        for name in LuaAPIDoc.registeredGlobals {
            XCTAssertTrue(meta.contains("\nfunction \(name)("), name)
            XCTAssertTrue(rc.contains("\"\(name)\""), name)
        }
        for m in LuaAPIDoc.registeredSketchMethods { XCTAssertTrue(meta.contains("function Sketch:\(m)("), m) }
        XCTAssertTrue(meta.contains("---@param amplitude? number"))
    }
}
