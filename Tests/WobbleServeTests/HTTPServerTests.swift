import XCTest
import Glibc
import WobbleSystem
import Synchronization
import WobbleTestSupport
@testable import WobbleServe

/// The browser studio's server, in-process, over real sockets: tokens,
/// hosts, the folder's files and nothing else, WebSockets and their
/// origin, malformed requests.
final class HTTPServerTests: XCTestCase {
    var box: Sandbox!
    var server: HTTPServer!
    let lines = LogLines()

    final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [String] = []
        func add(_ s: String) { lock.withLock { all.append(s) } }
        var lines: [String] { lock.withLock { all } }
    }

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.write("scene.lua", "image('cat.png')\n")
        try box.write("cat.png", "not really a png")
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("sub/notes.txt", "hello")
        try box.write(".hidden", "secret")
        try FileManager.default.createDirectory(atPath: box.path("../outside-\(getpid())"), withIntermediateDirectories: true)
        try "outside".write(toFile: box.path("../outside-\(getpid())/secret.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: box.path("link.txt"), withDestinationPath: box.path("../outside-\(getpid())/secret.txt"))
        var config = ServerConfig(token: "0123456789abcdef0123456789abcdef")
        config.folder = box.url.path
        config.assets = ["/": ServedAsset(contentType: "text/html; charset=utf-8", bytes: Array("<p>page</p>".utf8))]
        config.maxMessageBytes = 1000
        let lines = self.lines
        server = HTTPServer(config, log: { lines.add($0) })
        try server.start()
    }

    override func tearDown() {
        server.stop()
        try? FileManager.default.removeItem(atPath: box.path("../outside-\(getpid())"))
    }

    var token: String { server.config.token }
    var host: String { "127.0.0.1:\(server.port)" }

    /// Sends `request` as it is, reads the whole answer.
    func raw(_ request: [UInt8], readAfter: Bool = true, seconds: Int = 5) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(server.port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let c = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        XCTAssertEqual(c, 0)
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while readAfter {
            // A receive timeout makes any caught signal end `recv` with
            // EINTR, SA_RESTART or not (signal(7)); the suite's children
            // exiting send SIGCHLD at any time: read on, as the server does.
            let n = buf.withUnsafeMutableBytes { Posix.receive(fd, into: $0) }
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return out
    }

    func get(_ target: String, headers: [String] = [], method: String = "GET", seconds: Int = 5) throws -> (status: Int, head: String, body: String) {
        let hs = (["Host: \(host)"] + headers).joined(separator: "\r\n")
        let answer = try raw(Array("\(method) \(target) HTTP/1.1\r\n\(hs)\r\n\r\n".utf8), seconds: seconds)
        let text = String(decoding: answer, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? -1
        return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    func testThePageAndTheFolderNeedTheToken() throws {
        let page = try get("/?token=\(token)")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.body, "<p>page</p>")
        XCTAssertTrue(page.head.contains("Set-Cookie: wobble_token_\(server.port)=\(token); Path=/; HttpOnly; SameSite=Strict"), page.head)
        XCTAssertTrue(page.head.contains("Referrer-Policy: no-referrer"), page.head)
        XCTAssertTrue(page.head.contains("Content-Security-Policy: default-src 'self'"), page.head)
        // The cookie instead of the query.
        let byCookie = try get("/files/scene.lua", headers: ["Cookie: other=1; wobble_token_\(server.port)=\(token)"])
        XCTAssertEqual(byCookie.status, 200)
        XCTAssertEqual(byCookie.body, "image('cat.png')\n")
        XCTAssertTrue(byCookie.head.contains("Content-Type: text/plain; charset=utf-8"), byCookie.head)
        XCTAssertEqual(try get("/files/sub/notes.txt?token=\(token)").body, "hello")
        XCTAssertEqual(try get("/files/cat.png?token=\(token)").head.contains("Content-Type: image/png"), true)
        let head = try get("/files/scene.lua?token=\(token)", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, "")

        // Without it, or with a wrong one, one of the same length, another port's cookie: 403, nothing read.
        for (target, headers) in [("/", [String]()), ("/?token=", []), ("/?token=0123456789abcdef0123456789abcdee", []),
                                  ("/files/scene.lua", []), ("/files/scene.lua?token=\(token.prefix(31))", []),
                                  ("/files/scene.lua", ["Cookie: wobble_token_1=\(token)"]),
                                  ("/files/scene.lua?token=\(token)x", [])] {
            let r = try get(target, headers: headers)
            XCTAssertEqual(r.status, 403, target)
            XCTAssertFalse(r.body.contains("image("), target)
        }
        let refused = lines.lines.filter { $0.contains(" 403 GET ") }
        XCTAssertEqual(refused.count, 7, lines.lines.joined(separator: "\n"))
        XCTAssertTrue(refused.allSatisfy { $0.hasPrefix("serve: 403 GET /") && $0.hasSuffix(": no valid token") }, refused.joined(separator: "\n"))
        XCTAssertFalse(lines.lines.joined().contains(token), "the token is never logged")
    }

    func testOnlyTheFolderItsFilesAndNoListing() throws {
        for target in ["/files/../outside-\(getpid())/secret.txt", "/files/%2e%2e/outside-\(getpid())/secret.txt",
                       "/files/sub/../../outside-\(getpid())/secret.txt", "/files/link.txt", "/files/.hidden",
                       "/files/", "/files/sub", "/files/sub/", "/files//etc/passwd", "/files/missing.png",
                       "/../../etc/passwd", "/etc/passwd", "/files/%00", "/files/sub%2f..%2f..%2fetc%2fpasswd"] {
            let r = try get(target + (target.contains("?") ? "&" : "?") + "token=\(token)")
            XCTAssertTrue((400..<500).contains(r.status), "\(target): \(r.status)")
            XCTAssertFalse(r.body.contains("outside") || r.body.contains("secret") || r.body.contains("root:") || r.body.contains("notes"), target)
        }
        let post = try get("/files/scene.lua?token=\(token)", method: "POST")
        XCTAssertEqual(post.status, 405)
        // A host name that is not this server's (DNS rebinding): refused.
        let rebound = try raw(Array("GET /?token=\(token) HTTP/1.1\r\nHost: evil.example:\(server.port)\r\n\r\n".utf8))
        XCTAssertTrue(String(decoding: rebound, as: UTF8.self).hasPrefix("HTTP/1.1 403"), String(decoding: rebound, as: UTF8.self))
        // Still alive.
        XCTAssertEqual(try get("/?token=\(token)").status, 200)
    }

    /// A port in use or an address that is not this machine's: one line
    /// with the system's reason, none of civetweb's own lines.
    func testAStartThatCannotListenSaysWhyInOneLine() throws {
        let heard = LogLines()
        var c = ServerConfig(token: ServerConfig.randomToken())
        c.port = server.port
        let second = HTTPServer(c, log: { heard.add($0) })
        XCTAssertThrowsError(try second.start()) { e in
            XCTAssertEqual((e as? ServerError)?.message, "cannot listen on 127.0.0.1:\(self.server.port) (address already in use)")
        }
        c.port = 0
        c.host = "::1"
        XCTAssertThrowsError(try HTTPServer(c, log: { heard.add($0) }).start()) { e in
            XCTAssertEqual((e as? ServerError)?.message,
                           "--host '::1': this build's server listens on IPv4 addresses only (127.0.0.1, 0.0.0.0, or one of this machine's)")
        }
        XCTAssertEqual(heard.lines, [])
        XCTAssertEqual(try get("/?token=\(token)").status, 200, "the first one still serves")
    }

    /// Only four decimal numbers 0–255: the system's lenient reading
    /// (`256.0.0.0` as `0.0.0.0`, `010.0.0.1` as octal) would listen
    /// somewhere else than the person named.
    func testAHostIsFourDecimalNumbersOrRefused() throws {
        for good in ["127.0.0.1", "0.0.0.0", "192.168.10.255"] { XCTAssertNil(ServerConfig.hostProblem(good), good) }
        for bad in ["256.0.0.0", "999.1.1.1", "383.0.0.1", "010.0.0.1", "127.1", "0x7f000001", "2130706433", "1.2.3.4.5",
                    "1..2.3", " 127.0.0.1", "localhost", "١٢٧.0.0.1"] {
            XCTAssertEqual(ServerConfig.hostProblem(bad),
                           "--host '\(bad)' is not an IPv4 address written as four numbers 0 to 255 (like 127.0.0.1 or 0.0.0.0)", bad)
        }
        var c = ServerConfig(token: ServerConfig.randomToken())
        c.host = "256.0.0.0"
        XCTAssertThrowsError(try HTTPServer(c, log: { _ in }).start()) { e in
            XCTAssertEqual((e as? ServerError)?.message,
                           "--host '256.0.0.0' is not an IPv4 address written as four numbers 0 to 255 (like 127.0.0.1 or 0.0.0.0)")
        }
    }

    /// A NUL or a broken escape in the path is a malformed path (400), not
    /// a shorter name; `+` in a path is a plus; another page's origin: 403.
    func testAPathIsDecodedOnceAndAnotherOriginIsRefused() throws {
        try box.write("a+b.txt", "plus")
        try box.write("a b.txt", "space")
        XCTAssertEqual(try get("/files/a+b.txt?token=\(token)").body, "plus")
        XCTAssertEqual(try get("/files/a%20b.txt?token=\(token)").body, "space")
        for target in ["/files/scene.lua%00.png", "/files/scene.lua%00", "/files/scene%2", "/files/scene%zz.lua", "/files/%ff%fe.lua"] {
            let r = try get(target + "?token=\(token)")
            XCTAssertEqual(r.status, 400, target)
            XCTAssertFalse(r.body.contains("image("), target)
        }
        XCTAssertTrue(lines.lines.contains { $0.hasPrefix("serve: 400 GET /files/scene.lua") && $0.hasSuffix(": a malformed path") },
                      lines.lines.joined(separator: "\n"))
        for origin in ["http://evil.example", "null", "https://\(host)"] {
            let r = try get("/files/scene.lua?token=\(token)", headers: ["Origin: \(origin)"])
            XCTAssertEqual(r.status, 403, origin)
            XCTAssertFalse(r.body.contains("image("), origin)
        }
        XCTAssertEqual(try get("/files/scene.lua?token=\(token)", headers: ["Origin: http://\(host)"]).status, 200)
    }

    /// The file read is the one checked: a link inside the folder to a
    /// file outside it, or a FIFO, is refused on the open descriptor (a
    /// name swapped between a check and the open cannot lead outside, nor
    /// hold a thread on a FIFO).
    func testAFileIsCheckedAsOpened() throws {
        let folder = box.url.resolvingSymlinksInPath().path
        XCTAssertEqual(try Posix.readFile(box.path("sub/notes.txt"), inside: folder), Array("hello".utf8))
        XCTAssertThrowsError(try Posix.readFile(box.path("link.txt"), inside: folder)) { e in
            XCTAssertEqual(e as? OutsideFolder, OutsideFolder(path: box.path("link.txt")))
        }
        XCTAssertEqual(mkfifo(box.path("pipe.png"), 0o644), 0)
        XCTAssertThrowsError(try Posix.readFile(box.path("pipe.png"), inside: folder)) { e in
            XCTAssertEqual(e as? OutsideFolder, OutsideFolder(path: box.path("pipe.png")))
        }
        // Outside the folder it was confined to, even a plain file.
        XCTAssertThrowsError(try Posix.readFile(box.path("sub/notes.txt"), inside: folder + "/sub/other"))
    }

    /// Open pages hold a thread each for their WebSockets: requests are
    /// still answered with every socket the server admits open.
    func testRequestsAreAnsweredWithEverySocketOpen() throws {
        let clients = (0 ..< server.config.maxSockets).map { _ in SocketClient(port: server.port) }
        for c in clients {
            XCTAssertTrue(c.upgrade(path: "/ws?token=\(token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        }
        // (With no thread left, the request would wait past the reader's 5 s: no answer.)
        for _ in 0 ..< 4 { XCTAssertEqual(try get("/files/scene.lua?token=\(token)").status, 200) }
        // One socket more than allowed: refused with a 403, not dropped.
        let extra = SocketClient(port: server.port)
        let answer = extra.upgrade(path: "/ws?token=\(token)", host: host, origin: "http://\(host)")
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 403"), answer)
    }

    /// Sockets asked for at once cannot pass the limit together: each is
    /// counted as it is admitted, before its handshake is answered (counted
    /// once open, the next was admitted before the last one counted: the
    /// whole suite's load once let a ninth of eight through).
    func testSocketsAskedForAtOnceKeepTheLimit() throws {
        let limit = server.config.maxSockets
        let clients = (0 ..< limit * 2).map { _ in SocketClient(port: server.port) }
        let request = ["GET /ws?token=\(token) HTTP/1.1", "Host: \(host)", "Upgrade: websocket", "Connection: Upgrade",
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13", "Origin: http://\(host)"]
        // Every request sent before any answer is read: the server admits them side by side.
        for c in clients { c.write(Array((request.joined(separator: "\r\n") + "\r\n\r\n").utf8)) }
        let answers = clients.map { $0.readHead() }
        XCTAssertEqual(answers.filter { $0.hasPrefix("HTTP/1.1 101") }.count, limit, "\(answers.map { $0.prefix(12) })")
        XCTAssertEqual(answers.filter { $0.hasPrefix("HTTP/1.1 403") }.count, limit, "\(answers.map { $0.prefix(12) })")
        // Closing the open ones gives their places back.
        let open = zip(clients, answers).filter { $0.1.hasPrefix("HTTP/1.1 101") }.map(\.0)
        for c in open { c.frame([], opcode: 8) }
        let deadline = Date().addingTimeInterval(5)
        while server.socketCount > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(server.socketCount, 0)
        let again = SocketClient(port: server.port)
        XCTAssertTrue(again.upgrade(path: "/ws?token=\(token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
    }

    /// Slowloris: 300 connections from this machine that send a request
    /// head a line a second and never finish it cannot lock out the page:
    /// newer connections close the longest-waiting unfinished ones (at most
    /// 16 from one address wait for their heads), so each real request is
    /// answered within 15 s (in milliseconds on an idle machine; on
    /// civetweb's own terms, 24 threads each held for 5 s by a trickling
    /// head, 0 of 8 were answered in 24 s).
    func testTricklingConnectionsDoNotLockOutRealRequests() throws {
        var slow: [Int32] = []
        defer { slow.forEach { close($0) } }
        for _ in 0 ..< 300 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { break }
            // A connect that the full backlog holds up gives up after 2 s.
            var tv = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = in_port_t(UInt16(server.port).bigEndian)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            let c = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            slow.append(fd)
            guard c == 0 else { continue }
            _ = Array("GET /files/scene.lua?token=\(token) HTTP/1.1\r\nHost: \(host)\r\n".utf8).withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
        }
        var answers: [Int] = []
        for round in 0 ..< 4 {
            // One more header line on every slow connection (a closed one just fails).
            for fd in slow {
                _ = Array("X-Slow-\(round): 1\r\n".utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            // The bound: 15 s each (a loaded machine's; without admission
            // a request waited for the whole queue, a minute here).
            for _ in 0 ..< 2 { answers.append(try get("/files/scene.lua?token=\(token)", seconds: 15).status) }
            sleep(1)   // the trickle's pace
        }
        XCTAssertEqual(answers, [Int](repeating: 200, count: 8))
        let said = lines.lines.filter { $0.hasPrefix("serve: closed ") }
        XCTAssertFalse(said.isEmpty, lines.lines.suffix(5).joined(separator: "\n"))
        XCTAssertTrue(said.allSatisfy {
            $0.hasSuffix(" from 127.0.0.1: connections whose request had not come in full, for newer ones (at most 16 from one address, 32 in all, wait for theirs)")
        }, said.joined(separator: "\n"))
        XCTAssertEqual(try get("/?token=\(token)").status, 200)
    }

    /// A file is sent a piece at a time from the descriptor that was
    /// checked (it was read whole into memory, twice: 30 downloads of a
    /// 40 MB file held 2.4 GB): every byte arrives, and HEAD says the size.
    func testALargeFileIsSentWholeInPieces() throws {
        var g = SplitMix64(state: 3)
        let bytes = (0 ..< (3 << 20) + 12345).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        try Data(bytes).write(to: URL(fileURLWithPath: box.path("big.bin")))
        let answer = try raw(Array("GET /files/big.bin?token=\(token) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8))
        let split = try XCTUnwrap(answer.firstRange(of: Array("\r\n\r\n".utf8)))
        let head = String(decoding: answer[..<split.lowerBound], as: UTF8.self)
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 200") && head.contains("Content-Length: \(bytes.count)"), head)
        XCTAssertTrue(Array(answer[split.upperBound...]) == bytes, "the whole file, byte for byte")
        let onlyHead = try get("/files/big.bin?token=\(token)", method: "HEAD")
        XCTAssertEqual(onlyHead.status, 200)
        XCTAssertTrue(onlyHead.head.contains("Content-Length: \(bytes.count)"), onlyHead.head)
        XCTAssertEqual(onlyHead.body, "")
    }

    /// A target that is `*` or names another server in absolute form is
    /// answered 400 with one line (civetweb alone closed it without a
    /// word); the absolute form naming this server is read as its path.
    func testAsteriskAndAbsoluteFormTargetsAreAnswered() throws {
        let star = try get("*", method: "OPTIONS")
        XCTAssertEqual(star.status, 400, star.head)
        XCTAssertEqual(star.body, "400 '*' (the whole server) is not a target this server answers\n")
        let getStar = try get("*")
        XCTAssertEqual(getStar.status, 400, getStar.head)
        for other in ["http://evil.example/files/scene.lua?token=\(token)", "http://evil.example:\(server.port)/x", "https://\(host)/x"] {
            let r = try get(other)
            XCTAssertEqual(r.status, 400, "\(other): \(r.head)")
            XCTAssertEqual(r.body, "400 not a target on this server (only paths like /files/NAME are)\n", other)
        }
        XCTAssertEqual(lines.lines.filter { $0.hasPrefix("serve: 400 ") }, [
            "serve: 400 OPTIONS * from 127.0.0.1: '*' (the whole server) is not a target this server answers",
            "serve: 400 GET * from 127.0.0.1: '*' (the whole server) is not a target this server answers",
            "serve: 400 GET http://evil.example/files/scene.lua from 127.0.0.1: not a target on this server (only paths like /files/NAME are)",
        ] + ["http://evil.example:\(server.port)/x", "https://\(host)/x"].map {
            "serve: 400 GET \($0) from 127.0.0.1: not a target on this server (only paths like /files/NAME are)"
        })
        let own = try get("http://\(host)/files/scene.lua?token=\(token)")
        XCTAssertEqual(own.status, 200, own.head)
        XCTAssertEqual(own.body, "image('cat.png')\n")
    }

    func testMalformedRequestsNeverStopIt() throws {
        var g = SplitMix64(state: 7)
        let base = Array("GET /files/scene.lua?token=\(token) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
        for round in 0..<200 {
            var bytes = base
            switch round % 4 {
            case 0: for _ in 0..<4 { bytes[Int(g.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: g.next()) }
            case 1: bytes = Array(bytes.prefix(Int(g.next() % UInt64(bytes.count))))
            case 2: bytes = (0..<Int(g.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
            default: bytes = Array("GET /\(String(repeating: "a", count: 20000)) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
            }
            let answer = String(decoding: try raw(bytes), as: UTF8.self)
            if !answer.isEmpty && !answer.hasPrefix("HTTP/1.1 200") {
                // A 4xx, or civetweb's own 505 for a version that is not HTTP/1.x.
                let status = answer.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                XCTAssertTrue((400..<500).contains(status) || status == 505, "round \(round): \(answer.prefix(80))")
            }
        }
        XCTAssertEqual(try get("/?token=\(token)").status, 200, "alive after the fuzz")
    }
}

/// A WebSocket client over a plain socket, for the tests.
final class SocketClient {
    let fd: Int32

    /// `receiveBuffer`: SO_RCVBUF, set before connecting (a small window).
    init(port: Int, receiveBuffer: Int32? = nil) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func read(_ n: Int) -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: n)
        while out.count < n {
            let got = buf.withUnsafeMutableBytes { Posix.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<(n - out.count)])) }   // EINTR read on (see `raw`)
            if got <= 0 { break }
            out += buf[0..<got]
        }
        return out
    }

    /// The answer's head (up to the blank line).
    func readHead() -> String {
        var out: [UInt8] = []
        while !out.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let b = read(1)
            if b.isEmpty { break }
            out += b
        }
        return String(decoding: out, as: UTF8.self)
    }

    func upgrade(path: String, host: String, origin: String?) -> String {
        var lines = ["GET \(path) HTTP/1.1", "Host: \(host)", "Upgrade: websocket", "Connection: Upgrade",
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
        if let origin { lines.append("Origin: \(origin)") }
        write(Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8))
        return readHead()
    }

    /// A masked frame, as a browser sends.
    func frame(_ payload: [UInt8], opcode: UInt8 = 1, fin: Bool = true) {
        var f: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            f.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            f += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            f.append(0x80 | 127)
            f += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [1, 2, 3, 4]
        f += mask
        f += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        write(f)
    }

    /// The next frame from the server: opcode and payload (nil: closed).
    func nextFrame() -> (opcode: UInt8, payload: [UInt8])? {
        let h = read(2)
        guard h.count == 2 else { return nil }
        var n = Int(h[1] & 0x7F)
        if n == 126 { let e = read(2); n = Int(e[0]) << 8 | Int(e[1]) }
        if n == 127 { n = read(8).reduce(0) { $0 << 8 | Int($1) } }
        return (h[0] & 0x0F, read(n))
    }
}

final class WebSocketTests: XCTestCase {
    var server: HTTPServer!
    let box = HTTPServerTests.LogLines()
    let received = HTTPServerTests.LogLines()

    override func setUpWithError() throws {
        var config = ServerConfig(token: ServerConfig.randomToken())
        config.maxMessageBytes = 1000
        config.maxSockets = 2
        let log = box, received = self.received
        server = HTTPServer(config, log: { log.add($0) })
        server.onMessage = { id, text in received.add("\(id): \(text)") }
        try server.start()
    }

    override func tearDown() { server.stop() }

    var host: String { "127.0.0.1:\(server.port)" }

    func waitFor(_ what: () -> Bool) {
        let end = Date().addingTimeInterval(5)
        while !what() && Date() < end { usleep(10_000) }
    }

    func testATokenAndThePagesOriginOpenASocket() throws {
        XCTAssertEqual(ServerConfig.randomToken().count, 32)
        XCTAssertNotEqual(ServerConfig.randomToken(), ServerConfig.randomToken())
        let c = SocketClient(port: server.port)
        let head = c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)")
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 101"), head)
        XCTAssertTrue(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), head)
        waitFor { server.socketCount == 1 }
        XCTAssertEqual(server.socketCount, 1)
        c.frame(Array("{\"poke\":[1,2]}".utf8))
        waitFor { !received.lines.isEmpty }
        XCTAssertEqual(received.lines, ["1: {\"poke\":[1,2]}"])
        XCTAssertEqual(server.send("{\"frame\":3}"), 1)
        let f = c.nextFrame()
        XCTAssertEqual(f?.opcode, 1)
        XCTAssertEqual(f.map { String(decoding: $0.payload, as: UTF8.self) }, "{\"frame\":3}")
        // Too large a message closes that socket, and only it.
        c.frame([UInt8](repeating: 65, count: 5000))
        waitFor { server.socketCount == 0 }
        XCTAssertEqual(server.socketCount, 0)
        XCTAssertTrue(box.lines.contains { $0.hasPrefix("serve: WebSocket 1 closed: a message of 5000 bytes (at most 1000)") }, box.lines.joined(separator: "\n"))
        XCTAssertEqual(received.lines.count, 1)
    }

    /// An unmasked frame and a frame with RSV1 set (no extension was
    /// agreed) are protocol errors: the server answers a close frame with
    /// status 1002 and ends the socket, and the message is not executed
    /// (civetweb's own reader handed both on as any message). A ping is
    /// answered, a close echoed.
    func testAnUnmaskedFrameOrOneWithRSV1IsClosedWith1002() throws {
        let hello = Array("{\"poke\":[1,2]}".utf8)
        let mask: [UInt8] = [9, 8, 7, 6]
        let masked = hello.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        let cases: [(String, [UInt8])] = [
            ("an unmasked frame (a client masks every frame)", [0x81, UInt8(hello.count)] + hello),
            ("a frame with reserved bits set (RSV 4; no extension was agreed)", [0xC1, 0x80 | UInt8(hello.count)] + mask + masked),
            ("a frame with reserved bits set (RSV 1; no extension was agreed)", [0x91, 0x80 | UInt8(hello.count)] + mask + masked),
        ]
        for (k, (why, bytes)) in cases.enumerated() {
            let c = SocketClient(port: server.port)
            XCTAssertTrue(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
            waitFor { server.socketCount == 1 }
            c.frame([1, 2], opcode: 9)
            let pong = c.nextFrame()
            XCTAssertEqual(pong?.opcode, 10, why)
            XCTAssertEqual(pong?.payload, [1, 2], why)
            c.write(bytes)
            let close = c.nextFrame()
            XCTAssertEqual(close?.opcode, 8, why)
            XCTAssertEqual(close?.payload, [0x03, 0xEA], "\(why): status 1002")
            XCTAssertNil(c.nextFrame(), "\(why): the connection ends")
            waitFor { server.socketCount == 0 }
            XCTAssertEqual(server.socketCount, 0, why)
            XCTAssertTrue(box.lines.contains { $0.hasPrefix("serve: WebSocket \(k + 1) closed: \(why)") }, box.lines.joined(separator: "\n"))
        }
        XCTAssertEqual(received.lines, [], "nothing was executed")
        // A masked message still is, and a close is echoed.
        let c = SocketClient(port: server.port)
        XCTAssertTrue(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        c.frame(hello)
        waitFor { !received.lines.isEmpty }
        XCTAssertEqual(received.lines, ["4: {\"poke\":[1,2]}"])
        c.frame([0x03, 0xE8], opcode: 8)
        let echo = c.nextFrame()
        XCTAssertEqual(echo?.opcode, 8)
        XCTAssertEqual(echo?.payload, [0x03, 0xE8])
    }

    /// A close frame with a status no endpoint may send (999, 1005) is
    /// answered 1002 and one whose reason is not UTF-8 1007, never echoed;
    /// a continuation with no message begun is 1002. A clean close is
    /// echoed and says nothing, nor do messages sent after it.
    func testBadClosesAndStrayContinuationsAreProtocolErrors() throws {
        let cases: [(String, UInt8, [UInt8], [UInt8])] = [
            ("a close frame with status 999, which no endpoint may send", 8, [0x03, 0xE7], [0x03, 0xEA]),
            ("a close frame with status 1005, which no endpoint may send", 8, [0x03, 0xED], [0x03, 0xEA]),
            ("a close frame whose reason is not UTF-8", 8, [0x03, 0xE8, 0xFF, 0xFE], [0x03, 0xEF]),
            ("a continuation frame with no message begun", 0, Array("tail".utf8), [0x03, 0xEA]),
        ]
        for (k, (why, opcode, payload, status)) in cases.enumerated() {
            let c = SocketClient(port: server.port)
            XCTAssertTrue(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
            waitFor { server.socketCount == 1 }
            c.frame(payload, opcode: opcode)
            let close = c.nextFrame()
            XCTAssertEqual(close?.opcode, 8, why)
            XCTAssertEqual(close?.payload, status, why)
            XCTAssertNil(c.nextFrame(), "\(why): the connection ends")
            waitFor { server.socketCount == 0 }
            XCTAssertEqual(box.lines.filter { $0.hasPrefix("serve: WebSocket \(k + 1) ") }, ["serve: WebSocket \(k + 1) closed: \(why)"])
        }
        let c = SocketClient(port: server.port)
        XCTAssertTrue(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        waitFor { server.socketCount == 1 }
        c.frame([0x03, 0xE8, 0x62, 0x79, 0x65], opcode: 8)
        XCTAssertEqual(c.nextFrame()?.payload, [0x03, 0xE8])
        for _ in 0 ..< 20 { server.send("{\"frame\":1}") }
        waitFor { server.socketCount == 0 }
        for _ in 0 ..< 20 { server.send("{\"frame\":2}") }
        XCTAssertEqual(box.lines.filter { $0.hasPrefix("serve: WebSocket 5") }, [], "a clean close says nothing")
    }

    /// The frame rules one by one, on bytes fed in pieces.
    func testTheFrameReaderKeepsTheProtocolsRules() throws {
        func masked(_ b0: UInt8, _ payload: [UInt8], length: [UInt8]? = nil) -> [UInt8] {
            let mask: [UInt8] = [1, 2, 3, 4]
            return [b0] + (length.map { [0x80 | $0[0]] + $0.dropFirst() } ?? [0x80 | UInt8(payload.count)]) + mask
                + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        }
        func read(_ bytes: [UInt8], max: Int = 1000) -> Result<[WebSocketFrames.Frame], WebSocketFrames.Violation> {
            var r = WebSocketFrames(maxPayload: max)
            var out: [WebSocketFrames.Frame] = []
            do throws(WebSocketFrames.Violation) {
                for b in bytes {   // a byte at a time: every split
                    r.feed([b])
                    while let f = try r.next() { out.append(f) }
                }
            } catch { return .failure(error) }
            return .success(out)
        }
        XCTAssertEqual(read(masked(0x81, [104, 105]) + masked(0x89, [7])),
                       .success([.init(fin: true, opcode: 1, payload: [104, 105]), .init(fin: true, opcode: 9, payload: [7])]))
        XCTAssertEqual(read(masked(0x81, Array(repeating: 65, count: 300), length: [126, 1, 44])).map { $0.first?.payload.count }, .success(300))
        let refused: [([UInt8], UInt16, String)] = [
            ([0x81, 0x02, 104, 105], 1002, "an unmasked frame (a client masks every frame)"),
            (masked(0xA1, [1]), 1002, "a frame with reserved bits set (RSV 2; no extension was agreed)"),
            (masked(0x83, [1]), 1002, "an unknown opcode 3"),
            (masked(0x09, [1]), 1002, "a fragmented control frame"),
            (masked(0x89, Array(repeating: 0, count: 126), length: [126, 0, 126]), 1002, "a control frame of more than 125 bytes"),
            (masked(0x81, [], length: [127, 0x80, 0, 0, 0, 0, 0, 0, 1]), 1002, "a frame length with its top bit set"),
            (masked(0x81, [], length: [127, 0, 0, 0, 1, 0, 0, 0, 0]), 1009, "a message of 4294967296 bytes (at most 1000)"),
            (masked(0x81, [], length: [126, 3, 233]), 1009, "a message of 1001 bytes (at most 1000)"),
        ]
        for (bytes, status, why) in refused {
            XCTAssertEqual(read(bytes), .failure(WebSocketFrames.Violation(status: status, why: why)), why)
        }
    }

    /// A page that reads nothing holds up only its own writes: while a
    /// large message to it waits, another page gets its message and a new
    /// request is answered (the write held the server's lock, and every
    /// other page's messages waited for it); when the write gives up, that
    /// socket is closed with one line.
    func testAPageThatReadsNothingHoldsUpOnlyItself() throws {
        let idle = SocketClient(port: server.port), live = SocketClient(port: server.port)
        for c in [idle, live] {
            XCTAssertTrue(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        }
        waitFor { self.server.socketCount == 2 }
        let done = DispatchSemaphore(value: 0)
        let finished = HTTPServerTests.LogLines()
        let busy = self.server!
        DispatchQueue.global().async {
            let n = busy.send(binary: [UInt8](repeating: 7, count: 32 << 20), to: 1)
            finished.add("reached \(n)")
            done.signal()
        }
        // The idle page's write is under way: its first bytes have come.
        func waiting(_ fd: Int32) -> Int32 { var n: Int32 = 0; _ = ioctl(fd, UInt(FIONREAD), &n); return n }
        waitFor { waiting(idle.fd) > 0 }
        XCTAssertGreaterThan(waiting(idle.fd), 0)
        XCTAssertEqual(server.send("{\"frame\":1}", to: 2), 1)
        XCTAssertEqual(live.nextFrame().map { String(decoding: $0.payload, as: UTF8.self) }, "{\"frame\":1}")
        XCTAssertEqual(finished.lines, [], "the other page got its message meanwhile")
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(finished.lines, ["reached 0"])
        waitFor { server.socketCount == 1 }
        XCTAssertEqual(server.socketCount, 1)
        // One line: its reader's (nothing acknowledged for 5 s), or the
        // write's own (no progress for 5 s), whichever came first.
        XCTAssertEqual(box.lines.filter { $0.hasPrefix("serve: WebSocket 1 ") }.count, 1, box.lines.joined(separator: "\n"))
        XCTAssertTrue(box.lines.contains("serve: WebSocket 1 closed: the page read nothing of what was sent for 5 s")
                      || box.lines.contains("serve: WebSocket 1 closed: a message could not be sent (the page read nothing of it for 5 s)"),
                      box.lines.joined(separator: "\n"))
    }

    /// Eight pages that never read (small receive buffers), while the
    /// server keeps sending to every page: each is closed once what was
    /// written to it stayed unacknowledged for `requestTimeoutMs` (its send
    /// queue still grows: writes make progress, so "no progress" never
    /// fires), with one line each, and a ninth page gets in.
    func testPagesThatNeverReadAreClosedAndANewPageGetsIn() throws {
        var config = ServerConfig(token: ServerConfig.randomToken())
        config.requestTimeoutMs = 2000
        let lines = HTTPServerTests.LogLines()
        let busy = HTTPServer(config, log: { lines.add($0) })
        try busy.start()
        defer { busy.stop() }
        let host = "127.0.0.1:\(busy.port)", path = "/ws?token=\(config.token)"
        let idle = (0 ..< config.maxSockets).map { _ in SocketClient(port: busy.port, receiveBuffer: 2048) }
        for c in idle { XCTAssertTrue(c.upgrade(path: path, host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101")) }
        waitFor { busy.socketCount == config.maxSockets }
        XCTAssertEqual(busy.socketCount, config.maxSockets)
        let sending = Atomic<Bool>(true)
        let sender = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            while sending.load(ordering: .relaxed) {
                busy.send(binary: [UInt8](repeating: 1, count: 4096))   // a frame's states, to every page
                usleep(2000)
            }
            sender.signal()
        }
        var admitted = false, tries = 0
        // The page let in is kept open until the lines are read: its close
        // would be a line of its own ("its connection had ended").
        var newPage: SocketClient?
        while !admitted, tries < 30 {
            tries += 1
            let c = SocketClient(port: busy.port)
            admitted = c.upgrade(path: path, host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101")
            if admitted { newPage = c } else { usleep(500_000) }
        }
        sending.store(false, ordering: .relaxed)
        XCTAssertEqual(sender.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(admitted, lines.lines.joined(separator: "\n"))
        let closed = lines.lines.filter { $0.hasPrefix("serve: WebSocket ") && !$0.contains("403") }
        XCTAssertEqual(closed.count, config.maxSockets, closed.joined(separator: "\n"))
        XCTAssertEqual(Set(closed.map { $0.split(separator: " ")[2] }).count, config.maxSockets, "one line per page")
        XCTAssertEqual(closed.filter { $0.hasSuffix(" closed: the page read nothing of what was sent for 2 s") }.count, config.maxSockets,
                       closed.joined(separator: "\n"))
        withExtendedLifetime(newPage) {}
    }

    func testSocketsWithoutTheTokenOrFromAnotherOriginAreRefused() throws {
        let cases: [(String, String?)] = [
            ("/ws", "http://\(host)"),
            ("/ws?token=nope", "http://\(host)"),
            ("/ws?token=\(server.config.token)", "http://evil.example"),
            ("/ws?token=\(server.config.token)", "null"),
            ("/ws?token=\(server.config.token)", nil),
        ]
        for (path, origin) in cases {
            let c = SocketClient(port: server.port)
            let head = c.upgrade(path: path, host: host, origin: origin)
            XCTAssertTrue(head.hasPrefix("HTTP/1.1 403"), "\(path) \(origin ?? "-"): \(head)")
        }
        XCTAssertEqual(server.socketCount, 0)
        let refused = box.lines.filter { $0.hasPrefix("serve: 403 WebSocket /ws from 127.0.0.1: ") }
        XCTAssertEqual(refused.count, 5, box.lines.joined(separator: "\n"))
        XCTAssertTrue(refused[2].hasSuffix("the origin 'http://evil.example' is not the page's"), refused[2])
        // Binary frames, and more sockets than allowed.
        let a = SocketClient(port: server.port), b = SocketClient(port: server.port), c = SocketClient(port: server.port)
        for s in [a, b] { XCTAssertTrue(s.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101")) }
        waitFor { server.socketCount == 2 }
        XCTAssertFalse(c.upgrade(path: "/ws?token=\(server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        a.frame([1, 2, 3], opcode: 2)
        waitFor { server.socketCount == 1 }
        XCTAssertEqual(server.socketCount, 1)
        XCTAssertTrue(box.lines.contains { $0.hasSuffix("closed: only text messages are read") })
    }
}
