import Foundation
import XCTest

/// `wobble-run` (its `main.swift` and the command-line library it calls,
/// `WobbleCommands`) is argument handling, help, messages and exit codes over
/// the engine library: their sources import no module that draws, decodes,
/// encodes or finds cutouts (WobbleRender, WobbleMedia, WobbleVision,
/// WobbleAudio) nor any C library, and declare none of the engine's types
/// (the frame loop, the output table, presets, the report). Every front end
/// (the command line, the studio) then renders through the same code.
/// `wobble-run serve` is argument handling over the browser studio's own
/// module (WobbleServe: the server and the page), the one surface the
/// headless tool carries.
final class WobbleRunSourceTests: XCTestCase {
    /// The modules `Sources/wobble-run` and `Sources/WobbleCommands` may import.
    static let allowed: Set<String> = ["Foundation", "Dispatch", "Synchronization",
                                       "WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleServe", "WobbleCommands"]
    /// Types the engine owns, which the command line must not define again.
    static let engineTypes = ["Runner", "PresetRun", "Preset", "OutputPlan", "OutputFormat", "Assembler",
                              "RunReport", "ProgressReporter", "ReadDeadline", "FrameCollector", "TrialFolder", "ExportJob"]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func sources() throws -> [(name: String, text: String)] {
        var all: [(name: String, text: String)] = []
        for folder in ["wobble-run", "WobbleCommands"] {
            let dir = Self.root.appendingPathComponent("Sources/\(folder)")
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
            if folder == "wobble-run" { XCTAssertTrue(names.contains("main.swift"), "\(dir.path): \(names)") }
            all += try names.map { ("\(folder)/\($0)", try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) }
        }
        return all
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
                XCTAssertTrue(Self.allowed.contains(module), "Sources/\(name) imports \(module): the engine (WobbleEngine) does that work")
            }
        }
    }

    func testWobbleRunDeclaresNoEngineType() throws {
        for (name, text) in try sources() {
            for type in Self.engineTypes {
                for kind in ["struct", "class", "enum", "final class", "protocol"] {
                    XCTAssertFalse(text.contains("\(kind) \(type) ") || text.contains("\(kind) \(type):") || text.contains("\(kind) \(type){"),
                                   "Sources/\(name) declares \(type), which belongs to WobbleEngine")
                }
            }
        }
    }

    /// The package says the same: the command-line library depends on no
    /// renderer, media or vision target (so a stray import cannot even build
    /// cleanly), only on the engine, what it stands on, and the browser
    /// studio; the executable on the library alone (and the system layer).
    func testThePackageGivesWobbleRunOnlyTheEngineAndWhatItStandsOn() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        func dependencies(_ pattern: String) throws -> Set<String> {
            let target = try XCTUnwrap(manifest.range(of: pattern, options: .regularExpression), pattern)
            let line = manifest[target.upperBound...].prefix { $0 != "]" }
            return Set(line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        }
        XCTAssertEqual(try dependencies(#"\.target\(name: "WobbleCommands","#), ["WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine", "WobbleServe"])
        XCTAssertEqual(try dependencies(#"\.executableTarget\(\s*name: "wobble-run","#), ["WobbleCommands", "WobbleSystem"])
    }

    /// `main.swift` is the process's entry and nothing else: a few lines.
    func testMainIsAFewLines() throws {
        let main = try String(contentsOf: Self.root.appendingPathComponent("Sources/wobble-run/main.swift"), encoding: .utf8)
        let code = main.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("//") }
        XCTAssertLessThanOrEqual(code.count, 5, code.joined(separator: "\n"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/wobble-run").path), ["main.swift"])
    }
}
