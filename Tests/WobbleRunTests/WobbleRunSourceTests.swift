import Foundation
import XCTest

/// `wobble-run` is argument handling, help, messages and exit codes over
/// the engine library: its sources import no module that draws, decodes,
/// encodes or finds cutouts (WobbleRender, WobbleMedia, WobbleVision,
/// WobbleAudio) nor any C library, and declare none of the engine's types
/// (the frame loop, the output table, presets, the report). Every front end
/// (the command line, the studio) then renders through the same code.
/// `wobble-run serve` is argument handling over the browser studio's own
/// module (WobbleServe: the server and the page), the one surface the
/// headless tool carries.
final class WobbleRunSourceTests: XCTestCase {
    /// The modules `Sources/wobble-run` may import.
    static let allowed: Set<String> = ["Foundation", "Dispatch", "Synchronization",
                                       "WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleServe"]
    /// Types the engine owns, which the command line must not define again.
    static let engineTypes = ["Runner", "PresetRun", "Preset", "OutputPlan", "OutputFormat", "Assembler",
                              "RunReport", "ProgressReporter", "ReadDeadline", "FrameCollector", "TrialFolder", "ExportJob"]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func sources() throws -> [(name: String, text: String)] {
        let dir = Self.root.appendingPathComponent("Sources/wobble-run")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
        XCTAssertTrue(names.contains("main.swift"), "\(dir.path): \(names)")
        return try names.map { ($0, try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `internal import X`, `import struct X.Y`).
    static func imports(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ").map(String.init)
            guard let i = words.firstIndex(of: "import"), words[..<i].allSatisfy({ $0.hasPrefix("@") || ["internal", "public", "package", "private", "fileprivate"].contains($0) }),
                  i + 1 < words.count else { return nil }
            let target = ["struct", "class", "enum", "func", "var", "let", "typealias", "protocol"].contains(words[i + 1]) && i + 2 < words.count ? words[i + 2] : words[i + 1]
            return target.split(separator: ".").first.map(String.init)
        }
    }

    func testTheRuleSeesImports() {
        XCTAssertEqual(Self.imports("import Foundation\n@testable import WobbleMedia\ninternal import CPNG\nimport struct WobbleRender.GLESRenderer\n// import X\n"),
                       ["Foundation", "WobbleMedia", "CPNG", "WobbleRender"])
    }

    func testWobbleRunImportsNoRenderMediaOrCModule() throws {
        for (name, text) in try sources() {
            for module in Self.imports(text) {
                XCTAssertTrue(Self.allowed.contains(module), "Sources/wobble-run/\(name) imports \(module): the engine (WobbleEngine) does that work")
            }
        }
    }

    func testWobbleRunDeclaresNoEngineType() throws {
        for (name, text) in try sources() {
            for type in Self.engineTypes {
                for kind in ["struct", "class", "enum", "final class", "protocol"] {
                    XCTAssertFalse(text.contains("\(kind) \(type) ") || text.contains("\(kind) \(type):") || text.contains("\(kind) \(type){"),
                                   "Sources/wobble-run/\(name) declares \(type), which belongs to WobbleEngine")
                }
            }
        }
    }

    /// The package says the same: the executable depends on no renderer,
    /// media or vision target (so a stray import cannot even build cleanly),
    /// only on the engine, what it stands on, and the browser studio.
    func testThePackageGivesWobbleRunOnlyTheEngineAndWhatItStandsOn() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try XCTUnwrap(manifest.range(of: #"\.executableTarget\(\s*name: "wobble-run","#, options: .regularExpression))
        let line = manifest[target.upperBound...].prefix { $0 != ")" }
        let deps = line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        XCTAssertEqual(Set(deps), ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleServe"], String(line))
    }
}
