import Foundation
import WobbleRender
import XCTest

/// The shaders reach the binary as SwiftPM resources of the `WobbleShaders`
/// target (`Shaders/`, `.embedInCode`): every GLSL file there is embedded
/// under its own name, with its bytes. A file added to `Shaders/` but not
/// listed in Package.swift and `Shaders/EmbeddedShaders.swift` fails here.
final class ShaderResourcesTests: XCTestCase {
    func testEveryShaderFileIsEmbeddedAsItIs() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = repo.appendingPathComponent("Shaders")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".vert") || $0.hasSuffix(".frag") || $0.hasSuffix(".glsl") }
            .sorted()
        XCTAssertTrue(files.contains("wobble.frag") && files.contains("present.frag"), "\(files)")
        XCTAssertEqual(files, ShaderData.sources.keys.sorted(), "list the file in Package.swift and Shaders/EmbeddedShaders.swift")
        for name in files {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(ShaderData.sources[name], text, "Shaders/\(name) differs from its embedded copy")
        }
    }
}
