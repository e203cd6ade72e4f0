import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Every write to stdout and stderr is checked, every message is one safe
/// line first, and the JSON never claims what was not written.
final class StreamTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
    }

    /// `wobble-run ARGS` with the shell redirection `redirect` applied.
    private func run(_ args: [String], _ redirect: String) throws -> Tool.Result {
        try Tool.run(["-c", "exec \"$0\" \"$@\" " + redirect, Tool.executable.path] + args, cwd: box.url, executable: "/bin/sh")
    }

    func testJSONOrPrintIntoAFullDeviceOrAClosedStdoutFails() throws {
        var r = try run(["s.lua", "--check", "--json"], "> /dev/full")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("wobble-run: cannot write to stdout: No space left on device\n"), r.stderr)
        r = try run(["s.lua", "--check", "--json"], ">&-")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("wobble-run: cannot write to stdout: it was closed when wobble-run started\n"), r.stderr)
        try box.write("p.lua", "image('img.png')\nprint('hello')\n")
        r = try run(["p.lua", "--check"], "> /dev/full")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "p.lua:2: print: cannot write to stdout (No space left on device)")
    }

    func testTheJSONErrorIsOneLineWithTheRestAsDetails() throws {
        try box.write("m.lua", "image('img.png')\nerror('first\\nsecond')\n")
        let r = try Tool.run(["m.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["error"] as? String, "m.lua:2: first")
        XCTAssertTrue((json?["details"] as? String ?? "").hasPrefix("second\nstack traceback:"), "\(String(describing: json?["details"]))")
    }

    func testAHugeErrorIsCutAndSaysHowMuch() throws {
        try box.write("z.lua", "image('img.png')\nerror(string.rep('Z', 3e6))\n")
        let r = try Tool.run(["z.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertLessThan(r.stderr.utf8.count, 80_000)
        XCTAssertLessThan(r.stdout.utf8.count, 80_000)
        XCTAssertTrue(r.firstError.hasSuffix(" … (2995913 more characters cut)"), String(r.firstError.suffix(60)))
        XCTAssertTrue(r.stdout.hasSuffix("}\n"))
    }

    func testControlCharactersCannotForgeALine() throws {
        try box.write("c.lua", "image('img.png')\nerror('x\\rwobble-run: forged\\27[31m')\n")
        let r = try Tool.run(["c.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "c.lua:2: x\\x0Dwobble-run: forged\\x1B[31m")
        XCTAssertFalse(r.stderr.contains("\u{1B}"))
        XCTAssertFalse(r.stderr.contains("\r"))
    }

    func testProgressOnADumbTerminalWritesNoEscapes() throws {
        // `script` gives the run a terminal; TERM=dumb says it knows no escapes.
        let cmd = "TERM=dumb '\(Tool.executable.path)' s.lua -o t.gif"
        let r = try Tool.run(["-qc", cmd, "/dev/null"], cwd: box.url, executable: "/usr/bin/script")
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertTrue(r.stdout.contains("frame 9/9"), r.stdout)
        XCTAssertFalse(r.stdout.contains("\u{1B}"), r.stdout.debugDescription)
    }

    func testAnInterruptedRunClaimsNoOutput() throws {
        try box.write("long.lua", "image('img.png') local s = addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(s, 1, 0) wait(600)\n")
        // 18000 frames of 800×600: minutes of work, stopped after 3 s (once the frames flow).
        let (p, out, err) = try Tool.start(["long.lua", "--backend", "cpu", "--width", "800", "--json", "-o", "sig.gif"], cwd: box.url)
        Thread.sleep(forTimeInterval: 3)
        kill(p.processIdentifier, SIGTERM)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        _ = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 143)
        let json = try JSONSerialization.jsonObject(with: stdout) as? [String: Any]
        XCTAssertTrue(json?["output"] is NSNull, "\(String(describing: json))")
        XCTAssertTrue(json?["bytes"] is NSNull, "\(String(describing: json))")
        XCTAssertEqual(json?["frames"] as? Int, 18000, "the clip's length stays known")
        XCTAssertEqual(json?["error"] as? String, "interrupted")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("sig.gif")))
        XCTAssertEqual(box.leftovers(), [])
    }
}
