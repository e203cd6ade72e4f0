import Foundation
@testable import WobbleRender
import XCTest

/// `Sources/WobbleRender/EmbeddedShaders.swift` is generated from `Shaders/`
/// by `Scripts/embed-shaders.sh`; this fails until it is run after an edit.
final class EmbeddedShadersTests: XCTestCase {
    func testEmbeddedShadersMatchTheFiles() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = repo.appendingPathComponent("Shaders")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".vert") || $0.hasSuffix(".frag") || $0.hasSuffix(".glsl") }
            .sorted()
        XCTAssertFalse(files.isEmpty)
        XCTAssertEqual(files, EmbeddedShaders.all.keys.sorted(), "run Scripts/embed-shaders.sh")
        for name in files {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(EmbeddedShaders.all[name], text, "Shaders/\(name) differs from its embedded copy: run Scripts/embed-shaders.sh")
        }
    }
}
