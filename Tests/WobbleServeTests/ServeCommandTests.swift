import Foundation
import XCTest
import WobbleTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `wobble-run serve` as a person runs it: the built executable prints the
/// page's address (one exact line, then the ssh hint), answers the page
/// with the token and 403 without, stops on SIGTERM with 143 and frees its
/// port; a bad option is one line and exit 2, a missing scene one line and
/// exit 1. The tool knows the command in its help, man page and completions.
final class ServeCommandTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("scene.lua", StudioServerTests.sceneText)
    }

    /// Reads `pipe` until `lines` lines came (or 20 s passed).
    static func lines(_ pipe: Pipe, _ lines: Int) -> [String] {
        let fd = pipe.fileHandleForReading.fileDescriptor
        var got: [UInt8] = []
        let deadline = Date().addingTimeInterval(20 * Tool.slowdown)
        while got.filter({ $0 == 10 }).count < lines, Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 200) > 0 else { continue }
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            got += buf[0..<n]
        }
        return String(decoding: got, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func status(port: Int, _ target: String) -> Int {
        let c = SocketClient(port: port)
        c.write(Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        let head = c.readHead()
        return Int(head.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// Whether something listens on `port` of 127.0.0.1.
    static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    func testServesWithTheTokenAndStopsOnSIGTERM() throws {
        let (p, out, err) = try Tool.start(["serve", "scene.lua"], cwd: box.url)
        defer { if p.isRunning { p.terminate() } }
        let lines = ServeCommandTests.lines(out, 2)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        let first = try XCTUnwrap(lines.first)
        let pattern = #"^wobble-run: serving scene\.lua at http://127\.0\.0\.1:([0-9]+)/\?token=([0-9a-f]{32})$"#
        let re = try NSRegularExpression(pattern: pattern)
        let match = try XCTUnwrap(re.firstMatch(in: first, range: NSRange(first.startIndex..., in: first)), first)
        let port = try XCTUnwrap(Int((first as NSString).substring(with: match.range(at: 1))))
        let token = (first as NSString).substring(with: match.range(at: 2))
        XCTAssertEqual(lines[1], "wobble-run: from another machine: ssh -L \(port):127.0.0.1:\(port) THIS-HOST, then open the address there (Ctrl+C stops)")
        XCTAssertEqual(status(port: port, "/?token=\(token)"), 200)
        XCTAssertEqual(status(port: port, "/"), 403)
        XCTAssertEqual(status(port: port, "/?token=\(String(token.reversed()))"), 403)
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit)
        XCTAssertEqual(p.terminationStatus, 143)
        XCTAssertFalse(ServeCommandTests.listening(port), "the port is free after the exit")
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertFalse(stderr.contains("error"), stderr)
    }

    /// A signal during the scene's first run is not held up by it: the
    /// run is abandoned, no address is printed, the exit is 130 before the
    /// run's own 10 s time limit could have ended it, nothing is left.
    func testSIGINTDuringABusyFirstRunStopsAtOnce() throws {
        try box.write("busy.lua", "image(\"img.png\")\nwhile true do end\n")
        let before = box.files()
        let (p, out, err) = try Tool.start(["serve", "busy.lua"], cwd: box.url)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        usleep(2_000_000)   // the first run has begun (the address would come only after it)
        kill(p.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(6 * Tool.slowdown)
        while p.isRunning, Date() < deadline { usleep(20_000) }
        XCTAssertFalse(p.isRunning, "stopped well before the run's own 10 s limit")
        guard !p.isRunning else { return }
        XCTAssertEqual(p.terminationStatus, 130)
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertFalse(printed.contains("serving"), printed)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertFalse(stderr.contains("error"), stderr)
        XCTAssertEqual(box.files(), before)
        XCTAssertEqual(box.leftovers(), [])
    }

    func testABadOptionIsExit2AndAMissingSceneExit1WithOneLine() throws {
        let bad = try Tool.run(["serve", "scene.lua", "--bogus"], cwd: box.url)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "wobble-run: serve: unknown option '--bogus' (usage: wobble-run serve SCENE.lua [--port N] [--host ADDRESS])\n")
        XCTAssertEqual(bad.stdout, "")
        let port = try Tool.run(["serve", "scene.lua", "--port", "70000"], cwd: box.url)
        XCTAssertEqual(port.status, 2)
        XCTAssertEqual(port.stderr.filter { $0 == "\n" }.count, 1, port.stderr)
        let missing = try Tool.run(["serve", "nothing.lua"], cwd: box.url)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "wobble-run: serve: scene 'nothing.lua' is not a file\n")
        XCTAssertEqual(missing.stdout, "")
    }

    func testHelpManPageAndCompletionsKnowServe() throws {
        XCTAssertTrue(try Tool.run(["--help"], cwd: box.url).stdout.contains("wobble-run serve SCENE.lua [--port N] [--host ADDRESS]"))
        let help = try Tool.run(["serve", "--help"], cwd: box.url)
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: wobble-run serve SCENE.lua"), help.stdout)
        XCTAssertTrue(try Tool.run(["--generate", "man"], cwd: box.url).stdout.contains(".B wobble\\-run serve"))
        XCTAssertTrue(try Tool.run(["--generate", "fish"], cwd: box.url).stdout.contains("-a serve -d 'the studio in a browser'"))
        let bash = try Tool.run(["--generate", "bash"], cwd: box.url)
        try box.write("completion.bash", bash.stdout)
        let script = """
        source ./completion.bash
        show() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _wobble_run; printf '[%s]' "${COMPREPLY[@]}"; echo; }
        show wobble-run se
        show wobble-run serve --p
        """
        let r = try Tool.run(["-c", script], cwd: box.url, executable: "/bin/bash")
        XCTAssertEqual(r.stdout, "[serve]\n[--port]\n", r.stderr)
    }
}
