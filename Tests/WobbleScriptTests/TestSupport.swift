import XCTest
import Foundation
@testable import WobbleScript
import WobbleCore

/// A temporary folder holding a scene script and its files; a fresh Lua VM
/// per run (each `ScriptHost.run()` makes one).
final class SceneFixture {
    let dir: String
    var scriptPath: String { dir + "/scene.lua" }
    /// Paths the stub image loader was asked for.
    private(set) var loadedImages: [String] = []

    init() {
        // Short, so that Lua's chunk names (at most 60 characters) are not cut.
        var template = Array("/tmp/ws-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        dir = String(cString: p)
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    /// Writes `text` to `name` inside the folder (creating subfolders).
    func write(_ name: String, _ text: String) {
        let path = dir + "/" + name
        try! FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true)
        try! text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Options for `scene.lua`, with a stub image loader: `*.png` is 200×100,
    /// `big.png` 640×480, anything named `bad*` fails.
    func options(_ source: String) -> ScriptOptions {
        write("scene.lua", source)
        return ScriptOptions(scriptPath: scriptPath) { [unowned self] path in
            self.loadedImages.append(path)
            if (path as NSString).lastPathComponent.hasPrefix("bad") {
                throw StubImageError(path: path)
            }
            return (path as NSString).lastPathComponent == "big.png" ? (640, 480) : (200, 100)
        }
    }

    /// Runs `source` as `scene.lua`.
    @discardableResult
    func run(_ source: String, _ configure: (inout ScriptOptions) -> Void = { _ in }) throws -> ScriptResult {
        var o = options(source)
        configure(&o)
        return try ScriptHost(options: o).run()
    }

    /// Runs `source` as `scene.lua` and hands back the scene as the script
    /// left it, too (the session's; tests only).
    func runWithScene(_ source: String) throws -> (result: ScriptResult, scene: Scene) {
        let session = ScriptSession(options: options(source))
        let result = try session.run()
        return (result, session.scene)
    }

    /// Runs `source` expecting a `ScriptError`; returns it.
    func failure(_ source: String, _ configure: (inout ScriptOptions) -> Void = { _ in },
                 file: StaticString = #filePath, line: UInt = #line) -> ScriptError? {
        do {
            try run(source, configure)
            XCTFail("script succeeded: \(source)", file: file, line: line)
            return nil
        } catch let e as ScriptError {
            return e
        } catch {
            XCTFail("not a ScriptError: \(error)", file: file, line: line)
            return nil
        }
    }

    /// The error message of `source`, with the script path shortened to `scene.lua`.
    func message(_ source: String, _ configure: (inout ScriptOptions) -> Void = { _ in },
                 file: StaticString = #filePath, line: UInt = #line) -> String? {
        failure(source, configure, file: file, line: line)?.message.replacingOccurrences(of: dir + "/", with: "")
    }
}

struct StubImageError: Error, CustomStringConvertible {
    let path: String
    var description: String { "image '\((path as NSString).lastPathComponent)': not a PNG or JPEG file" }
}

/// The prefix every scene test script starts with.
let withImage = "image('cat.png')\n"
