import Foundation
import XCTest

/// A short run of the command-line fuzzer (Scripts/fuzz-cli.py; the full
/// 100,000 cases: Scripts/fuzz-cli.sh) against the built executable: random
/// option lists with hostile values and generated scenes at huge
/// coordinates, none of which may crash (exit >= 128), hang, exit with
/// another status than 0/1/2, fail silently or oddly worded, leave a
/// temporary file, or make `--check` and a render disagree.
///
/// `WOBBLE_CLI_FUZZ_CASES` sets the number of cases (default 200),
/// `WOBBLE_CLI_FUZZ_SEED` the seed (default 1).
final class CLIFuzzTests: XCTestCase {
    func testRandomCommandLinesFailCleanly() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Scripts/fuzz-cli.py")
        let env = ProcessInfo.processInfo.environment
        guard let python = (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map({ "\($0)/python3" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("python3 is not installed: the CLI fuzzer needs it")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script.path, "--cases", env["WOBBLE_CLI_FUZZ_CASES"] ?? "200", "--seed", env["WOBBLE_CLI_FUZZ_SEED"] ?? "1",
                       "--jobs", "2", "--hang", "60", "--progress", "0", "--binary", Tool.executable.path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        print(text)
        XCTAssertEqual(p.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("crash 0, hang 0, status 0, silent 0, format 0, leftover 0, disagree 0"), text)
    }
}
