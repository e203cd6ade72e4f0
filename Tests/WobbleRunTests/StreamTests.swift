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

    /// What a scene writes without a newline (`io.write`, with --allow-io)
    /// cannot leave the JSON object or a message mid-line: each starts on
    /// a line of its own, on stdout and on stderr.
    func testTheJSONAndMessagesStartOnALineOfTheirOwn() throws {
        try box.write("w.lua", "image('img.png')\nio.write('x')\nio.stderr:write('y')\n")
        var r = try Tool.run(["w.lua", "--allow-io", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("x\n{\"frames\":1,"), r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").count, 2)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data((r.stdout.split(separator: "\n").last ?? "").utf8)))
        XCTAssertEqual(r.stderr, "y\nok: 1 frame, 0.033 s at 30 fps, 40×30\n")
        // An error after it: its own first line.
        try box.write("e.lua", "image('img.png')\nio.stderr:write('y')\nio.write('x')\nerror('boom')\n")
        r = try Tool.run(["e.lua", "--allow-io", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.hasPrefix("y\ne.lua:4: boom\n"), r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("x\n{"), r.stdout)
        // With the frames on stdout the object is stderr's last line.
        r = try Tool.run(["w.lua", "--allow-io", "-q", "--json", "-o", "-"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("y\n{\"frames\":1,"), r.stderr)
    }

    /// A name that is not UTF-8 is exact in the JSON: `output` shows each
    /// such byte as U+FFFD and `output_hex` gives the bytes; a name that
    /// spells `\xFF` is its own text, without `output_hex`.
    func testANameThatIsNotUTF8IsExactInTheJSON() throws {
        var r = try run(["s.lua", "-q", "--json", "-o"], "\"$(printf 'o\\377.gif')\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        var json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["output"] as? String, "o\u{FFFD}.gif")
        XCTAssertEqual(json?["output_hex"] as? String, "6fff2e676966")
        r = try Tool.run(["s.lua", "-q", "--json", "-o", "o\\xFF.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["output"] as? String, "o\\xFF.gif")
        XCTAssertNil(json?["output_hex"])
        // Both files are there, each under its own bytes.
        let names = try Tool.run(["-c", "ls | od -An -tx1 | tr -d ' \\n'"], cwd: box.url, executable: "/bin/sh").stdout
        XCTAssertTrue(names.contains("6fff2e676966"), names)
        XCTAssertTrue(names.contains("6f5c7846462e676966"), names)
    }

    /// A newline (or any control character) in a file name cannot split an
    /// error's first line: names show it as `\x0A`, in the scene's name,
    /// in a path the scene gives, on the command line and in the JSON.
    func testANewlineInAPathStaysOnTheErrorsFirstLine() throws {
        try box.write("nl.lua", "image('a\\nb.png')\n")
        var r = try Tool.run(["nl.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, #"nl.lua:1: image: image 'a\x0Ab.png': no such file"#)
        r = try Tool.run(["s.lua", "--check", "--image", "a\nb.png"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: image 'a\\x0Ab.png': no such file\n")
        r = try Tool.run(["s.lua", "-q", "-o", "no\nsuch/o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, #"wobble-run: output 'no\x0Asuch/o.gif': folder 'no\x0Asuch' does not exist"#)
        try box.write("e\nx.lua", "image('img.png')\nerror('boom')\n")
        r = try Tool.run(["e\nx.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, #"e\x0Ax.lua:2: boom"#)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 4, r.stderr)  // the line, the traceback's three
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["error"] as? String, #"e\x0Ax.lua:2: boom"#)
        // A carriage return or an escape in a name is escaped too.
        r = try Tool.run(["s.lua", "--check", "--image", "a\r\u{1B}[2Kwobble-run: ok.png"], cwd: box.url)
        XCTAssertEqual(r.stderr, "wobble-run: image 'a\\x0D\\x1B[2Kwobble-run: ok.png': no such file\n")
        // A render into a name with a newline writes that name, and the JSON says it exactly.
        r = try Tool.run(["s.lua", "-q", "--json", "-o", "o\n.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["output"] as? String, "o\n.gif")
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("o\n.gif")))
        // The script's arguments reach it as their exact bytes (a newline, 0xFF).
        try box.write("args.lua", "image('img.png')\nlocal a = ...\nprint(#a, a:byte(2), a:byte(4))\n")
        r = try run(["args.lua", "--check", "-q", "--"], "\"$(printf 'a\\nb\\377')\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "4\t10\t255\n")
    }

    /// Frames to a stdout nobody reads: the render blocks in a write; a
    /// signal still ends it (the watchdog, a second later) and the JSON
    /// object, on stderr with `-o -`, still says it was interrupted.
    func testASignalEndsARunBlockedOnAStdoutNobodyReadsWithItsJSON() throws {
        try box.write("long.lua", "image('img.png') local s = addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(s, 1, 0) wait(600)\n")
        let (p, _, err) = try Tool.start(["long.lua", "--backend", "cpu", "--width", "400", "--json", "-o", "-", "--format", "apng"], cwd: box.url)
        // The pipe's 64 KiB fill with the first frames; nothing reads them:
        // wait until a thread of the tool is blocked writing into it.
        func blocked() -> Bool {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(p.processIdentifier)/task")) ?? []
            return tasks.contains { t in
                ((try? String(contentsOfFile: "/proc/\(p.processIdentifier)/task/\(t)/wchan", encoding: .utf8)) ?? "").contains("pipe_write")
            }
        }
        let started = Date()
        while !blocked() && Date().timeIntervalSince(started) < 60 { usleep(50_000) }
        XCTAssertTrue(blocked(), "the render never blocked on the pipe")
        let stopped = Date()
        kill(p.processIdentifier, SIGTERM)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 143)
        XCTAssertLessThan(Date().timeIntervalSince(stopped), 5 * Tool.slowdown)
        let last = String(stderr.split(separator: "\n").last ?? "")
        let json = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        XCTAssertEqual(json?["error"] as? String, "interrupted", stderr)
        XCTAssertTrue(json?["output"] is NSNull)
        XCTAssertEqual(json?["frames"] as? Int, 18000)
    }
}
