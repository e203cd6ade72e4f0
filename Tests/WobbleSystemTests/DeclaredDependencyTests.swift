import Foundation
import XCTest

/// Every module of the package that a target's sources import is one of
/// its declared dependencies in Package.swift: a layer reaches only what
/// it says it uses (an import that works only because another dependency
/// pulls the module in hides the layering).
final class DeclaredDependencyTests: XCTestCase {
    static let root = OSWallTests.root

    /// Package.swift's targets: name, declared dependencies, sources folder.
    static func targets(_ manifest: String) -> [(name: String, dependencies: Set<String>, path: String)] {
        let pattern = #"\.(target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?(?:[^)]*?path:\s*"([^"]+)")?"#
        guard let re = try? NSRegularExpression(pattern: pattern) else { return [] }
        let ns = manifest as NSString
        return re.matches(in: manifest, range: NSRange(location: 0, length: ns.length)).map { m in
            func group(_ i: Int) -> String? { m.range(at: i).location == NSNotFound ? nil : ns.substring(with: m.range(at: i)) }
            let kind = group(1) ?? "", name = group(2) ?? ""
            let deps = (group(3) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")) }
            let path = group(4) ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            return (name, Set(deps.filter { !$0.isEmpty }), path)
        }
    }

    /// The modules `text` imports (`import X`, `@testable import X`).
    static func imports(_ text: String) -> Set<String> {
        var out = Set<String>()
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let k = words.firstIndex(of: "import"), k + 1 < words.count,
                  words[..<k].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) }) else { continue }
            out.insert(words[k + 1])
        }
        return out
    }

    func testEveryImportOfAPackageModuleIsDeclared() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = Self.targets(manifest)
        let modules = Set(targets.map(\.name))
        XCTAssertTrue(modules.isSuperset(of: ["WobbleSystem", "WobbleCore", "WobbleEngine", "WobbleStudioCore", "wobble-run", "WobbleStudioCoreTests"]),
                      "the scan read the manifest: \(modules.sorted())")
        var found: [String] = []
        for t in targets {
            let dir = Self.root.appendingPathComponent(t.path)
            guard let files = FileManager.default.enumerator(atPath: dir.path) else { continue }
            for case let name as String in files where name.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
                for m in Self.imports(text).sorted() where modules.contains(m) && m != t.name && !t.dependencies.contains(m) {
                    found.append("\(t.path)/\(name) imports \(m), which \(t.name) does not declare")
                }
            }
        }
        XCTAssertEqual(found, [])
    }

    func testTheScanNamesAnUndeclaredImport() {
        let manifest = """
            .target(name: "A", dependencies: ["B"]),
            .target(name: "B"),
            .testTarget(name: "ATests", dependencies: ["A"]),
            """
        let t = Self.targets(manifest)
        XCTAssertEqual(t.map(\.name), ["A", "B", "ATests"])
        XCTAssertEqual(t.map(\.dependencies), [["B"], [], ["A"]])
        XCTAssertEqual(t.map(\.path), ["Sources/A", "Sources/B", "Tests/ATests"])
        XCTAssertEqual(Self.imports("import Foundation\n@testable import A\n// import C\nlet x = 1\n"), ["Foundation", "A"])
    }
}
