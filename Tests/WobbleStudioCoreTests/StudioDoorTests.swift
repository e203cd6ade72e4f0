import Foundation
import XCTest

/// The studio core is the only door: the two surfaces (the SDL window's
/// `StudioApp`, the page's `StudioServer`) send the core's commands and
/// draw its snapshot and run, and never reach the live session behind it;
/// the core reaches vision and media only through the engine. Read from
/// the sources, as `OSWallTests` reads them.
final class StudioDoorTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A source file's code lines (1-based), comments and string literals blanked.
    static func code(_ path: String) throws -> [(line: Int, text: String)] {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        var out: [(Int, String)] = []
        var inBlockString = false
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = String(raw)
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inBlockString.toggle(); continue }
            if inBlockString { continue }
            line = line.replacingOccurrences(of: #""(?:[^"\\]|\\.)*""#, with: "\"\"", options: .regularExpression)
            if let c = line.range(of: "//") { line = String(line[..<c.lowerBound]) }
            out.append((i + 1, line))
        }
        return out
    }

    static func files(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)
            .filter { $0.hasSuffix(".swift") }.sorted().map { folder + "/" + $0 }
    }

    /// The modules a file imports.
    static func imports(_ path: String) throws -> [String] {
        try code(path).compactMap { l -> String? in
            let words = l.text.split(separator: " ").map(String.init)
            guard let k = words.firstIndex(of: "import"), k + 1 < words.count else { return nil }
            return words[k + 1]
        }
    }

    /// Every file of both surfaces (the window's presenter included): no
    /// live session, by type or by a `session` member, and no hook that
    /// handed it out (`frameSource`). The window renders through the
    /// core's `frames` (the engine's `LiveFrames`: the renderer's side
    /// only) and draws the frame `shownFrame()` gives.
    func testTheSurfacesReadTheCoreNotTheLiveSession() throws {
        var breaches: [String] = []
        let surfaces = try StudioDoorTests.files(in: "Sources/WobbleStudio") + StudioDoorTests.files(in: "Sources/WobbleServe")
        XCTAssertTrue(surfaces.contains("Sources/WobbleStudio/Presenter.swift"))
        XCTAssertTrue(surfaces.contains("Sources/WobbleServe/StudioServer.swift"))
        for path in surfaces {
            for (n, text) in try StudioDoorTests.code(path) {
                if text.range(of: #"(?<![\w.])session\."#, options: .regularExpression) != nil
                    || text.range(of: #"\bLiveSession\b"#, options: .regularExpression) != nil
                    || text.range(of: #"\bframeSource\b"#, options: .regularExpression) != nil
                    || text.range(of: #"\.session\b(?!:)"#, options: .regularExpression) != nil && !text.contains("options.session") {
                    breaches.append("\(path):\(n): \(text.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(breaches, [], "the surfaces go through StudioCore")
    }

    /// The core hands out no live session: no `package` member of the
    /// core's types is one or returns one (the surfaces could then walk
    /// past the core again, as `frameSource` let the window's presenter).
    func testTheCoreHandsOutNoLiveSession() throws {
        var breaches: [String] = []
        for path in try StudioDoorTests.files(in: "Sources/WobbleStudioCore") {
            for (n, text) in try StudioDoorTests.code(path) where text.contains("package ") {
                if text.range(of: #"\b(var|let)\s+\w+\s*:\s*LiveSession\b(?!\.)"#, options: .regularExpression) != nil
                    || text.range(of: #"->\s*LiveSession\b(?!\.)"#, options: .regularExpression) != nil {
                    breaches.append("\(path):\(n): \(text.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(breaches, [], "the core's live session stays inside it")
    }

    func testTheStudioCoreImportsNoVisionMediaOrRenderer() throws {
        let allowed: Set<String> = ["Foundation", "Synchronization", "WobbleSystem", "WobbleCore", "WobbleScript", "WobbleEngine"]
        let files = try StudioDoorTests.files(in: "Sources/WobbleStudioCore")
        XCTAssertTrue(files.contains("Sources/WobbleStudioCore/StudioCore.swift"))
        for f in files {
            for m in try StudioDoorTests.imports(f) {
                XCTAssertTrue(allowed.contains(m), "\(f) imports \(m): the core reaches media and vision through the engine")
            }
        }
    }

    /// The page's server: the core, the engine's options, the system; the
    /// renderer only where the page must get the renderer's own numbers
    /// (the displacement fields its shader reads, `ShapeProfile`) and the
    /// script host only for the sandbox's path rules (`PathPolicy`: only
    /// the scene's folder is served, by the rules a scene's files follow);
    /// the page's files (`Web/`, embedded as resources) where they are read.
    func testTheServersImportsAreTheCoresAndTheirReasons() throws {
        let anywhere: Set<String> = ["Foundation", "Synchronization", "WobbleSystem", "WobbleCore", "WobbleEngine", "WobbleStudioCore"]
        let only: [String: (file: String, needs: String)] = [
            "WobbleRender": ("StudioServer.swift", "ShapeProfile"), "WobbleScript": ("HTTPServer.swift", "PathPolicy"),
            "CCivetweb": ("HTTPServer.swift", "mg_"), "WobbleWeb": ("PageAssets.swift", "WebAssets"),
        ]
        for f in try StudioDoorTests.files(in: "Sources/WobbleServe") {
            let text = try StudioDoorTests.code(f).map(\.text).joined(separator: "\n")
            for m in try StudioDoorTests.imports(f) where !anywhere.contains(m) {
                guard let o = only[m] else { XCTFail("\(f) imports \(m)"); continue }
                XCTAssertTrue(f.hasSuffix("/" + o.file), "\(f) imports \(m) (only \(o.file) may, for \(o.needs))")
                XCTAssertTrue(text.contains(o.needs), "\(f) imports \(m) but uses no \(o.needs)")
            }
        }
    }
}
