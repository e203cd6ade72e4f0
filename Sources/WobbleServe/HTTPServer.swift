import Foundation
import Synchronization
import CCivetweb
import WobbleSystem
import WobbleScript

/// One file the server answers from memory (the page's own files, embedded
/// in the binary).
public struct ServedAsset: Sendable, Equatable {
    public var contentType: String
    public var bytes: [UInt8]

    public init(contentType: String, bytes: [UInt8]) {
        self.contentType = contentType
        self.bytes = bytes
    }
}

/// How a server listens and what it may serve.
public struct ServerConfig: Sendable {
    /// The address to listen on (default: this machine only).
    public var host = "127.0.0.1"
    /// 0: a free port, chosen by the system.
    public var port = 0
    /// The secret every request and the WebSocket must carry (`?token=` or
    /// the cookie the page's first answer sets).
    public var token: String
    /// The folder whose files `/files/NAME` serves (the scene's folder,
    /// under the sandbox's rules for code files: regular files inside it
    /// after resolving `..` and links); nil: none.
    public var folder: String?
    /// The page's files by path (`/`, `/app.js`, …).
    public var assets: [String: ServedAsset] = [:]
    /// The largest file `/files/` sends.
    public var maxFileBytes = 256 << 20
    /// The largest WebSocket message read (a larger one closes the socket).
    public var maxMessageBytes = 1 << 20
    /// WebSocket connections at once (more are refused).
    public var maxSockets = 8
    /// Connections from one address whose request has not come in full
    /// (its head still trickling in), at once: a newer one closes that
    /// address's longest-waiting one. A slow client cannot hold every
    /// thread, and a page's own requests (whole at once) always get in.
    public var maxUnfinishedPerPeer = 16
    /// The same from every address together (a newer one closes the
    /// longest-waiting of all).
    public var maxUnfinished = 32
    /// How long a request's head may take to come in full, from the moment
    /// a thread takes its connection (then the connection is closed); the
    /// same bound holds a write that makes no progress (a client that
    /// never reads). Bodies are never read (only GET and HEAD).
    public var requestTimeoutMs = 5000

    public init(token: String) {
        self.token = token
    }

    /// Why `host` cannot be listened on as given, nil when it can: an
    /// IPv4 address written as four decimal numbers 0–255 (`127.0.0.1`,
    /// `0.0.0.0`). Anything else would be read by the system's own rules
    /// (`256.0.0.0` as `0.0.0.0`, `010.0.0.1` in octal) and listen
    /// somewhere the person did not name.
    public static func hostProblem(_ host: String) -> String? {
        if host.contains(":") {
            return "--host '\(host)': this build's server listens on IPv4 addresses only (127.0.0.1, 0.0.0.0, or one of this machine's)"
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        let quad = parts.count == 4 && parts.allSatisfy { p in
            (1...3).contains(p.count) && p.allSatisfy { $0.isASCII && $0.isNumber }
                && (p.count == 1 || p.first != "0") && (Int(p) ?? 256) <= 255
        }
        return quad ? nil : "--host '\(ScenePaths.shown(host))' is not an IPv4 address written as four numbers 0 to 255 (like 127.0.0.1 or 0.0.0.0)"
    }

    /// A new random token: 128 bits as 32 hex digits.
    public static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(g.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }
}

/// Why a server could not start.
public struct ServerError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The HTTP and WebSocket server of `wobble-run serve` (civetweb, on its own
/// threads). Every request must carry the token; only GET and HEAD; the
/// page's files from memory, the scene folder's files under the sandbox's
/// rules, no listings; one WebSocket path, `/ws`, whose Origin must be the
/// page's own. A refused request gets a 4xx and one log line, and nothing
/// is read for it.
public final class HTTPServer: @unchecked Sendable {
    public let config: ServerConfig
    /// The port listened on (the system's choice when `config.port` is 0).
    public private(set) var port = 0
    /// Hears each text message of a WebSocket: the socket's number, the
    /// text; in the order they came, on a queue of the server's own.
    public var onMessage: (@Sendable (Int, String) -> Void)?
    /// Where `onMessage` runs: in order, without holding up civetweb's
    /// thread for the connection.
    private let delivery = SerialQueue(label: "wobble-run.serve.messages")
    /// Hears a WebSocket opened (its number) and closed.
    public var onOpen: (@Sendable (Int) -> Void)?
    public var onClose: (@Sendable (Int) -> Void)?
    /// Hears one line per refused request and per server complaint.
    public var log: @Sendable (String) -> Void

    private var context: OpaquePointer?
    private let lock = NSLock()
    /// The WebSockets open, by number.
    private var sockets: [Int: Socket] = [:]
    /// Admission's own lock (`arrived`, `begun`, `ended`): never held
    /// while anything is written, so no page can hold up a new connection.
    private let admission = NSLock()
    private var nextSocket = 1
    /// Sockets admitted whose handshake is not done yet (`reserve`).
    private var reserved: Set<Int> = []
    private var folder: String?
    /// civetweb's complaints while it starts (nil once started): a failed
    /// start says them in its one line instead.
    private var startup: [String]?

    /// A line of civetweb's: kept while starting, else logged.
    private func complain(_ line: String) {
        let kept = lock.withLock { () -> Bool in
            guard startup != nil else { return false }
            startup?.append(line)
            return true
        }
        if !kept { log("serve: \(line)") }
    }

    public init(_ config: ServerConfig, log: @escaping @Sendable (String) -> Void = { printError($0) }) {
        self.config = config
        self.log = log
    }

    /// The address a browser opens: the page, with the token.
    public var url: String {
        let host = config.host.contains(":") ? "[\(config.host)]" : config.host
        return "http://\(host == "0.0.0.0" || host == "[::]" ? "127.0.0.1" : host):\(port)/?token=\(config.token)"
    }

    /// The cookie that carries the token after the first answer (one per
    /// port: two servers on one machine do not share it).
    var cookieName: String { "wobble_token_\(port)" }

    /// Starts listening; throws when the address cannot be listened on.
    public func start() throws {
        guard context == nil else { return }
        guard config.token.count >= 16 else { throw ServerError("the token is too short") }
        if let f = config.folder {
            switch PathPolicy.canonical(f) {
            case .success(let c): folder = c
            case .failure(let r): throw ServerError("folder '\(ScenePaths.shown(f))' \(r.message)")
            }
        }
        // Debian's civetweb is built without IPv6.
        if let why = ServerConfig.hostProblem(config.host) { throw ServerError(why) }
        lock.withLock { startup = [] }
        _ = mg_init_library(UInt32(MG_FEATURES_WEBSOCKET))
        let host = config.host.contains(":") ? "[\(config.host)]" : config.host
        let options = ["listening_ports", "\(host):\(config.port)",
                       // Each open page holds a thread for its WebSocket,
                       // each unfinished request one while its head comes
                       // in (at most `maxUnfinished`), and 24 more answer.
                       "num_threads", "\(config.maxSockets + config.maxUnfinished + 24)",
                       "request_timeout_ms", "\(config.requestTimeoutMs)",
                       "enable_websocket_ping_pong", "yes",
                       "websocket_timeout_ms", "30000",
                       "max_request_size", "16384",
                       "decode_url", "no",
                       "enable_directory_listing", "no"]
        var callbacks = mg_callbacks()
        callbacks.log_message = { conn, message in
            HTTPServer.onFullStack {
                guard let message, let server = HTTPServer.from(mg_get_context(conn)) else { return 1 }
                server.complain(String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines))
                return 1
            }
        }
        // Admission: every connection a thread takes is unfinished until
        // its request's head is read (`arrived`, `begun`, `ended`).
        callbacks.init_connection = { conn, _ in
            HTTPServer.onFullStack {
                guard let conn, let server = HTTPServer.from(mg_get_context(conn)) else { return 0 }
                server.arrived(conn)
                return 0
            }
        }
        callbacks.begin_request = { conn in
            HTTPServer.onFullStack {
                guard let conn, let server = HTTPServer.from(mg_get_context(conn)) else { return 0 }
                server.begun(conn)
                return 0
            }
        }
        callbacks.connection_close = { conn in
            _ = HTTPServer.onFullStack {
                guard let conn, let server = HTTPServer.from(mg_get_context(conn)) else { return 0 }
                server.ended(conn)
                return 0
            }
        }
        let started: OpaquePointer? = withCStrings(options) { argv in
            mg_start(&callbacks, Unmanaged.passUnretained(self).toOpaque(), argv)
        }
        let said = lock.withLock { () -> [String] in
            defer { startup = nil }
            return startup ?? []
        }
        guard let ctx = started else {
            // One line: civetweb's own complaints (`cannot bind to …: 98
            // (Address already in use)`) become its reason.
            let why = said.first { $0.hasPrefix("cannot bind") }.flatMap { line -> String? in
                guard let open = line.lastIndex(of: "("), let close = line.lastIndex(of: ")"), open < close else { return nil }
                return String(line[line.index(after: open)..<close]).lowercased()
            }
            throw ServerError("cannot listen on \(host):\(config.port) (\(why ?? "the port is in use, or the address is not this machine's"))")
        }
        context = ctx
        var ports = [mg_server_port](repeating: mg_server_port(), count: 4)
        let n = mg_get_server_ports(ctx, 4, &ports)
        port = n > 0 ? Int(ports[0].port) : config.port
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Every callback runs on a full-size stack (`onFullStack`).
        mg_set_request_handler(ctx, "/", { conn, data in
            HTTPServer.onFullStack {
                guard let conn, let data else { return 500 }
                return Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().answer(conn)
            }
        }, me)
        mg_set_websocket_handler(ctx, "/ws", { conn, data in
            HTTPServer.onFullStack {
                guard let conn, let data else { return 1 }
                return Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().admit(conn)
            }
        }, { conn, data in
            _ = HTTPServer.onFullStack {
                guard let conn, let data else { return 0 }
                Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().opened(conn)
                return 0
            }
        }, { conn, bits, bytes, length, data in
            HTTPServer.onFullStack {
                guard let conn, let data else { return 0 }
                return Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().received(conn, bits: bits, bytes, length)
            }
        }, { conn, data in
            _ = HTTPServer.onFullStack {
                guard let conn, let data else { return 0 }
                Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue().closed(conn)
                return 0
            }
        }, me)
    }

    /// Runs `work` on a thread with a full-size stack (`SystemThread`)
    /// while the calling civetweb thread waits, and returns its result.
    /// civetweb's threads have 100 KB stacks (Debian's build sets it at
    /// compile time), and the Swift runtime's first use of a generic type at
    /// a call site demangles its name recursively, which overflowed them
    /// (a crash on the first request or message, depending on the build).
    /// Nothing here but the hop itself runs on civetweb's stack.
    static func onFullStack(_ work: @escaping () -> Int32) -> Int32 {
        SystemThread.onFullStack(work)
    }

    /// Stops listening and closes every connection (waits for civetweb's
    /// threads), promptly: civetweb's threads look at its stop flag only
    /// between waits of up to 2 s (the listening thread's on the listening
    /// socket, each WebSocket's on its socket), so each page is sent a
    /// WebSocket close first (the browser answers it, which ends that
    /// socket's thread), and while civetweb stops, a connection to the
    /// listening port now and then wakes the listening thread.
    public func stop() {
        guard let ctx = context else { return }
        context = nil
        stopping.store(true, ordering: .relaxed)
        _ = write([0x03, 0xE9], opcode: MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, to: nil)   // 1001: going away
        let stopped = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let stopping = ctx   // civetweb's context, used by that thread only from here on
        guard SystemThread.detach({
            mg_stop(stopping)
            stopped.signal()
        }) else {
            mg_stop(ctx)   // no thread to spare: stopped at civetweb's own pace
            lock.withLock { sockets.removeAll() }
            return
        }
        let host = ["0.0.0.0", "localhost"].contains(config.host) ? "127.0.0.1" : config.host
        while stopped.wait(timeout: .now() + 0.01) == .timedOut {
            Posix.knock(host: host, port: port)
        }
        lock.withLock { sockets.removeAll() }
    }

    deinit { stop() }

    /// Sends a text message to one WebSocket, or to all of them (nil);
    /// the number of sockets it reached.
    @discardableResult
    public func send(_ text: String, to socket: Int? = nil) -> Int {
        write(Array(text.utf8), opcode: MG_WEBSOCKET_OPCODE_TEXT, to: socket)
    }

    /// Sends a binary message to one WebSocket, or to all of them (nil);
    /// the number of sockets it reached.
    @discardableResult
    public func send(binary bytes: [UInt8], to socket: Int? = nil) -> Int {
        write(bytes, opcode: MG_WEBSOCKET_OPCODE_BINARY, to: socket)
    }

    /// One open WebSocket: its connection, written by one thread at a time
    /// and only while it is open (`closed` waits for a write under way
    /// before civetweb reuses the connection), and its descriptor once its
    /// reader found it.
    final class Socket: @unchecked Sendable {
        let conn: OpaquePointer
        let writing = NSLock()
        var open = true
        var fd: Int32?
        /// The bytes of every frame handed to the connection so far, and
        /// whether its reader closed it for not keeping up (`keepsUp`).
        let counts = NSLock()
        var written = 0
        var lagging = false
        init(_ conn: OpaquePointer) { self.conn = conn }

        /// Counts a frame of `payload` bytes (the server's frames are not
        /// masked: a head of 2, 4 or 10 bytes).
        func count(_ payload: Int) {
            let head = payload < 126 ? 2 : payload < 65536 ? 4 : 10
            counts.withLock { written += head + payload }
        }
    }

    /// Writes to each socket asked for outside the server's lock (a page
    /// that does not read holds up only its own writes). A write that
    /// fails (the page went, or read nothing for `requestTimeoutMs`) ends
    /// that socket: it is hung up, and its reader ends it.
    private func write(_ bytes: [UInt8], opcode: Int, to socket: Int?) -> Int {
        let targets = lock.withLock { sockets.filter { socket == nil || socket == $0.key }.map { ($0.key, $0.value) } }
        var reached = 0
        for (id, s) in targets {
            // nil: the socket was already ending (nothing to say again).
            let sent: Bool? = s.writing.withLock {
                guard s.open else { return nil }
                s.count(bytes.count)
                let n = bytes.withUnsafeBufferPointer { b in
                    b.withMemoryRebound(to: CChar.self) { mg_websocket_write(s.conn, Int32(opcode), $0.baseAddress, $0.count) }
                }
                // civetweb says the payload's bytes sent (a part, when the
                // page stopped reading), or the head's for an empty one.
                if bytes.isEmpty ? n > 0 : Int(n) == bytes.count { return true }
                s.open = false
                if let fd = s.fd { Posix.hangUp(fd) }
                // Closed by its reader (which said so), or by the page.
                return s.counts.withLock { s.lagging } || n <= 0 && opcode == MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE ? nil : false
            }
            if sent == true { reached += 1 } else if sent == false { log("serve: WebSocket \(id) closed: a message could not be sent (the page read nothing of it for \(config.requestTimeoutMs / 1000) s)") }
        }
        return reached
    }

    /// The number of open WebSockets.
    public var socketCount: Int { lock.withLock { sockets.count } }

    // MARK: requests

    private static func from(_ ctx: OpaquePointer?) -> HTTPServer? {
        guard let ctx, let data = mg_get_user_data(ctx) else { return nil }
        return Unmanaged<HTTPServer>.fromOpaque(data).takeUnretainedValue()
    }

    /// What a request asks, read from civetweb's request info.
    struct Request {
        var method: String
        var path: String
        /// The path had a NUL or a malformed `%` escape.
        var malformed: Bool
        var query: [String: String]
        var headers: [String: String]
        var remote: String

        init(_ info: UnsafePointer<mg_request_info>) {
            let i = info.pointee
            method = i.request_method.map { String(cString: $0) } ?? ""
            // civetweb leaves the path encoded (`decode_url` no): decoded
            // here, where a NUL (`%00`, which would cut a C string short) or
            // a malformed escape makes it malformed, not another path.
            let raw = (i.local_uri_raw ?? i.request_uri).map { String(cString: $0) } ?? ""
            let decoded = HTTPServer.percentDecoded(raw, plusIsSpace: false)
            path = decoded ?? raw
            malformed = decoded == nil
            query = HTTPServer.form(i.query_string.map { String(cString: $0) } ?? "")
            var h: [String: String] = [:]
            withUnsafeBytes(of: i.http_headers) { raw in
                let all = raw.bindMemory(to: mg_header.self)
                for k in 0..<min(Int(i.num_headers), all.count) {
                    guard let n = all[k].name, let v = all[k].value else { continue }
                    h[String(cString: n).lowercased()] = String(cString: v)
                }
            }
            headers = h
            remote = withUnsafeBytes(of: i.remote_addr) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
    }

    /// `a=1&b=2` decoded (`%XX` and `+`); a malformed pair is left out.
    static func form(_ query: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let k = percentDecoded(String(kv[0])), let v = percentDecoded(String(kv[1])) else { continue }
            if out[k] == nil { out[k] = v }
        }
        return out
    }

    /// `%XX` decoded (and `+` as a space, in a form); nil for a malformed
    /// escape, a NUL or bytes that are not UTF-8.
    static func percentDecoded(_ s: String, plusIsSpace: Bool = true) -> String? {
        var bytes: [UInt8] = []
        var it = Array(s.utf8).makeIterator()
        while let c = it.next() {
            if plusIsSpace && c == UInt8(ascii: "+") { bytes.append(0x20); continue }
            guard c == UInt8(ascii: "%") else { bytes.append(c); continue }
            guard let h = it.next(), let l = it.next(), let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16), v != 0 else { return nil }
            bytes.append(v)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Compares without stopping at the first difference (the time taken
    /// does not say how much of a guess was right).
    static func sameSecret(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for k in 0..<max(x.count, y.count) {
            diff |= (k < x.count ? x[k] : 0) ^ (k < y.count ? y[k] : 0)
        }
        return diff == 0
    }

    /// Whether the request carries the token (query or cookie).
    func authorised(_ r: Request) -> Bool {
        if let t = r.query["token"] { return HTTPServer.sameSecret(t, config.token) }
        for part in (r.headers["cookie"] ?? "").split(separator: ";") {
            let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == cookieName { return HTTPServer.sameSecret(String(kv[1]), config.token) }
        }
        return false
    }

    /// The hosts a browser may name in `Host` (and `Origin`): this server's
    /// address and, when it listens on this machine, its other names.
    var allowedHosts: Set<String> {
        var names: Set<String> = [config.host.contains(":") ? "[\(config.host)]" : config.host]
        if ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost"].contains(config.host) {
            names.formUnion(["127.0.0.1", "localhost", "[::1]"])
        }
        return Set(names.map { "\($0):\(port)" })
    }

    /// Whether a request's `Origin` is the page's own (`http://` and one of
    /// `allowedHosts`).
    func isOwnOrigin(_ origin: String) -> Bool {
        allowedHosts.contains { origin == "http://\($0)" }
    }

    private func refuse(_ conn: OpaquePointer, _ r: Request, _ status: Int, _ why: String) -> Int32 {
        log("serve: \(status) \(HTTPServer.printable(r.method)) \(HTTPServer.printable(r.path)) from \(r.remote): \(why)")
        let body = Array("\(status) \(why)\n".utf8)
        respond(conn, status: status, type: "text/plain; charset=utf-8", body: body, head: r.method == "HEAD", extra: [])
        return Int32(status)
    }

    /// A path or method as a log line shows it: printable ASCII, at most 200 characters.
    static func printable(_ s: String) -> String {
        let cleaned = String(s.unicodeScalars.prefix(200).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        return s.unicodeScalars.count > 200 ? cleaned + "…" : cleaned
    }

    static let reasons = [200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
                          413: "Content Too Large", 500: "Internal Server Error"]

    private func respond(_ conn: OpaquePointer, status: Int, type: String, body: [UInt8], head: Bool, extra: [String]) {
        var out = HTTPServer.head(status: status, type: type, length: body.count, extra: extra)
        if !head { out += body }
        _ = HTTPServer.write(conn, out)
    }

    /// Bytes to the connection; false when they could not all be sent (the
    /// client went, or read nothing for `requestTimeoutMs`).
    private static func write(_ conn: OpaquePointer, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write(conn, $0) }
    }

    private static func write(_ conn: OpaquePointer, _ raw: UnsafeRawBufferPointer) -> Bool {
        guard let base = raw.baseAddress, raw.count > 0 else { return true }
        return mg_write(conn, base, raw.count) == Int32(raw.count)
    }

    /// An answer's head: the status line and the headers every answer has.
    private static func head(status: Int, type: String, length: Int, extra: [String]) -> [UInt8] {
        var lines = ["HTTP/1.1 \(status) \(HTTPServer.reasons[status] ?? "Error")",
                     "Content-Type: \(type)",
                     "Content-Length: \(length)",
                     "Cache-Control: no-store",
                     "X-Content-Type-Options: nosniff",
                     "Referrer-Policy: no-referrer",
                     "Connection: close"] + extra
        lines.append("")
        lines.append("")
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    func answer(_ conn: OpaquePointer) -> Int32 {
        guard let info = mg_get_request_info(conn) else { return 500 }
        return answer(conn, Request(info))
    }

    func answer(_ conn: OpaquePointer, _ r: Request) -> Int32 {
        guard !r.malformed else { return refuse(conn, r, 400, "a malformed path") }
        guard authorised(r) else { return refuse(conn, r, 403, "no valid token") }
        guard allowedHosts.contains(r.headers["host"] ?? "") else { return refuse(conn, r, 403, "not this server's host name") }
        // A browser names the page that asks (cross-origin requests): only ours.
        if let origin = r.headers["origin"], !isOwnOrigin(origin) {
            return refuse(conn, r, 403, "the origin '\(HTTPServer.printable(origin))' is not the page's")
        }
        guard r.method == "GET" || r.method == "HEAD" else { return refuse(conn, r, 405, "only GET and HEAD") }
        let head = r.method == "HEAD"
        if let asset = config.assets[r.path] {
            var extra = ["Set-Cookie: \(cookieName)=\(config.token); Path=/; HttpOnly; SameSite=Strict"]
            if asset.contentType.hasPrefix("text/html") {
                extra.append("Content-Security-Policy: default-src 'self'; connect-src 'self' ws: ; img-src 'self' blob: data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
            }
            respond(conn, status: 200, type: asset.contentType, body: asset.bytes, head: head, extra: extra)
            return 200
        }
        guard r.path.hasPrefix("/files/") else { return refuse(conn, r, 404, "nothing here") }
        guard let folder else { return refuse(conn, r, 404, "no folder is served") }
        let name = String(r.path.dropFirst("/files/".count))
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.hasPrefix(".") }) else {
            return refuse(conn, r, 404, "not a file of the folder")
        }
        let policy = PathPolicy(folder: folder, allowIO: false)
        guard case .success(let path) = policy.code(name) else { return refuse(conn, r, 404, "not a file of the folder") }
        var answered = false
        do {
            guard let status = try Posix.fileStatus(path), (status.st_mode & S_IFMT) == S_IFREG else {
                return refuse(conn, r, 404, "not a file of the folder")
            }
            guard Int(status.st_size) <= config.maxFileBytes else { return refuse(conn, r, 413, "the file is too large to serve") }
            // Read through the descriptor that was checked (a link swapped
            // after the check above cannot lead out of the folder), and
            // sent a piece at a time: a file costs 256 KB of memory however
            // large it is and however many download it at once.
            try Posix.readFile(path, limit: config.maxFileBytes, inside: folder, chunk: 1 << 18, opened: { size in
                answered = true
                return HTTPServer.write(conn, HTTPServer.head(status: 200, type: HTTPServer.contentType(name), length: size, extra: [])) && !head
            }, each: { HTTPServer.write(conn, $0) })
            return 200
        } catch is FileTooLarge {
            return refuse(conn, r, 413, "the file is too large to serve")
        } catch {
            return answered ? 200 : refuse(conn, r, 404, "cannot be read")
        }
    }

    static func contentType(_ name: String) -> String {
        switch ScenePaths.fileExtension(name).lowercased() {
        case "png", "apng": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "lua", "txt": "text/plain; charset=utf-8"
        case "json": "application/json"
        case "wav": "audio/wav"
        case "mp3": "audio/mpeg"
        case "ogg", "oga": "audio/ogg"
        case "flac": "audio/flac"
        case "mp4": "video/mp4"
        case "webm": "video/webm"
        default: "application/octet-stream"
        }
    }

    // MARK: admission

    /// A connection whose request's head has not come in full.
    private struct Unfinished {
        /// The order connections arrived in (the smallest waited longest).
        var order: UInt64
        /// Its peer's address and port, once civetweb says them (it does
        /// not while `init_connection` runs: read at the next arrival).
        var peer: String?
        var port = 0
    }

    /// Each connection a thread holds, from when it took it until its
    /// request's head was read (civetweb's connection is one per thread,
    /// reused: its address names the connection while it is held).
    private var unfinished: [OpaquePointer: Unfinished] = [:]
    private var arrivals: UInt64 = 0
    /// Connections closed for newer ones since the last line said so, by address.
    private var evicted: [String: Int] = [:]
    private var lastEvictionLine: Double?

    /// A thread took `conn`: it is unfinished until its head is read. Past
    /// `maxUnfinishedPerPeer` from one address, or `maxUnfinished` in all,
    /// the longest-waiting one (of that address first) is hung up (its
    /// reading half): its thread wakes to the end of its stream at once
    /// and takes the next connection. Newer connections always get a thread this way, and a
    /// slow one can hold its thread only until newer ones need it (or
    /// `requestTimeoutMs`, whichever comes first).
    func arrived(_ conn: OpaquePointer) {
        let localPort = port
        let line: String? = admission.withLock {
            arrivals += 1
            unfinished[conn] = Unfinished(order: arrivals)
            // The peers civetweb says by now (every connection but the
            // newest, whose thread is still being set up).
            for (c, u) in unfinished where u.peer == nil {
                guard let info = mg_get_request_info(c) else { continue }
                unfinished[c]?.peer = withUnsafeBytes(of: info.pointee.remote_addr) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                unfinished[c]?.port = Int(info.pointee.remote_port)
            }
            // Over a bound, the longest-waiting are hung up until a
            // quarter of it is free again (one search for their sockets
            // for many connections, not one for each newer one).
            var victims: [(OpaquePointer, Unfinished)] = []
            func chooseUntil(_ fits: () -> Bool, from pool: () -> [(OpaquePointer, Unfinished)]) {
                while !fits(), let oldest = pool().min(by: { $0.1.order < $1.1.order }) {
                    unfinished[oldest.0] = nil
                    victims.append(oldest)
                }
            }
            let known = { self.unfinished.filter { $0.value.peer != nil }.map { ($0.key, $0.value) } }
            for (peer, count) in Dictionary(grouping: known(), by: { $0.1.peer ?? "" }).mapValues(\.count)
            where count > config.maxUnfinishedPerPeer {
                let keep = config.maxUnfinishedPerPeer * 3 / 4
                chooseUntil({ self.unfinished.values.filter { $0.peer == peer }.count <= keep },
                            from: { known().filter { $0.1.peer == peer } })
            }
            if unfinished.count > config.maxUnfinished {
                let keep = config.maxUnfinished * 3 / 4
                chooseUntil({ self.unfinished.count <= keep }, from: known)
            }
            if !victims.isEmpty {
                // Under the lock: `ended` (before civetweb closes its
                // descriptor) waits for it, so each socket found is still
                // that connection's.
                let open = Posix.connectedSockets(localPort: localPort)
                for (_, v) in victims {
                    guard let peer = v.peer else { continue }
                    if let fd = open["\(peer):\(v.port)"] {
                        // A request whose whole head has come, not yet
                        // read by its thread, is not slow: it is left to
                        // finish (under load its thread may take a moment).
                        if Posix.holdsWholeHead(fd) { continue }
                        // Only the reading half: a thread waiting for a
                        // slow head wakes to its end, and one that has
                        // just read a whole head (not yet `begun`: the
                        // socket then holds nothing to see) still answers.
                        // Hung up both ways, such a request under load
                        // lost its answer (1 in 8 in the slowloris test).
                        Posix.endReads(fd)
                    }
                    evicted[peer, default: 0] += 1
                }
            }
            // One line at the first, then at most one every 5 s.
            let now = monotonic()
            guard !evicted.isEmpty, lastEvictionLine.map({ now - $0 > 5 }) ?? true else { return nil }
            lastEvictionLine = now
            defer { evicted = [:] }
            let who = evicted.sorted { $0.key < $1.key }.map { "\($0.value) from \($0.key)" }.joined(separator: ", ")
            return "serve: closed \(who): connections whose request had not come in full, for newer ones (at most \(config.maxUnfinishedPerPeer) from one address, \(config.maxUnfinished) in all, wait for theirs)"
        }
        if let line { log(line) }
    }

    /// `conn`'s request's head was read.
    func begun(_ conn: OpaquePointer) {
        admission.withLock { _ = unfinished.removeValue(forKey: conn) }
    }

    /// civetweb is closing `conn` (its socket still open). A request whose
    /// head was read but that civetweb neither answered nor handed on (a
    /// target that is `*` or names another server in absolute form) gets
    /// its 400 and its line here.
    func ended(_ conn: OpaquePointer) {
        let wasUnfinished = admission.withLock { unfinished.removeValue(forKey: conn) != nil }
        guard wasUnfinished, let info = mg_get_request_info(conn), info.pointee.request_uri != nil,
              info.pointee.request_method != nil,
              let version = info.pointee.http_version.map({ String(cString: $0) }), version == "1.0" || version == "1.1" else { return }
        let target = String(cString: info.pointee.request_uri)
        // civetweb answers a target with spaces or controls itself (400).
        guard !target.utf8.contains(where: { $0 < 33 }) else { return }
        var r = Request(info)
        // The absolute form naming this server (civetweb's check wants an
        // authentication domain) is its path, as HTTP/1.1 asks of a server.
        if let (authority, path, query) = HTTPServer.absoluteForm(target), allowedHosts.contains(authority) {
            let decoded = HTTPServer.percentDecoded(path, plusIsSpace: false)
            r.path = decoded ?? path
            r.malformed = decoded == nil
            r.query = HTTPServer.form(query)
            _ = answer(conn, r)
            return
        }
        r.path = String(target.prefix { $0 != "?" })   // never the query (the token)
        _ = refuse(conn, r, 400, target == "*" ? "'*' (the whole server) is not a target this server answers"
                                              : "not a target on this server (only paths like /files/NAME are)")
    }

    /// `http://AUTHORITY/PATH?QUERY` in its parts (the authority as written,
    /// the path still encoded); nil for any other target.
    static func absoluteForm(_ target: String) -> (authority: String, path: String, query: String)? {
        guard target.utf8.count > 7, target.prefix(7).lowercased() == "http://" else { return nil }
        let rest = target.dropFirst(7)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let pathAndQuery = rest[slash...]
        let q = pathAndQuery.firstIndex(of: "?")
        return (String(rest[..<slash]), String(pathAndQuery[..<(q ?? pathAndQuery.endIndex)]),
                q.map { String(pathAndQuery[pathAndQuery.index(after: $0)...]) } ?? "")
    }

    // MARK: WebSockets

    func admit(_ conn: OpaquePointer) -> Int32 {
        guard let info = mg_get_request_info(conn) else { return 1 }
        let r = Request(info)
        let why: String?
        if !authorised(r) {
            why = "no valid token"
        } else if !allowedHosts.contains(r.headers["host"] ?? "") {
            why = "not this server's host name"
        } else if let origin = r.headers["origin"], !isOwnOrigin(origin) {
            why = "the origin '\(HTTPServer.printable(origin))' is not the page's"
        } else if r.headers["origin"] == nil {
            why = "no origin"
        } else if !reserve(conn) {
            why = "too many sockets (\(config.maxSockets))"
        } else {
            why = nil
        }
        if let why {
            log("serve: 403 WebSocket \(HTTPServer.printable(r.path)) from \(r.remote): \(why)")
            respond(conn, status: 403, type: "text/plain; charset=utf-8", body: Array("403 \(why)\n".utf8), head: false, extra: [])
            return 1
        }
        return 0
    }

    /// A place for `conn` among the sockets the server admits, taken as it
    /// is admitted (before its handshake is answered): counted from then
    /// on, so that sockets admitted at once cannot pass the limit together
    /// (counted only once open, the next could be admitted before the last
    /// one's answer had counted it). False where none is left.
    private func reserve(_ conn: OpaquePointer) -> Bool {
        let id: Int? = lock.withLock {
            guard sockets.count + reserved.count < config.maxSockets else { return nil }
            let id = nextSocket
            nextSocket += 1
            reserved.insert(id)
            return id
        }
        guard let id else { return false }
        mg_set_user_connection_data(conn, UnsafeMutableRawPointer(bitPattern: id))
        return true
    }

    /// A socket's handshake is answered: it counts as open, and this
    /// thread (civetweb's for the connection) reads its frames
    /// (`readFrames`) until it ends.
    func opened(_ conn: OpaquePointer) {
        let id = socketID(conn)
        let socket = Socket(conn)
        lock.withLock {
            reserved.remove(id)
            sockets[id] = socket
        }
        onOpen?(id)
        readFrames(socket, id: id)
    }

    private func socketID(_ conn: OpaquePointer) -> Int {
        Int(bitPattern: mg_get_user_connection_data(conn))
    }

    /// Set by `stop`: every socket's reader ends within a quarter second.
    private let stopping = Atomic<Bool>(false)

    /// Reads a socket's frames from its connection itself, under
    /// `WebSocketFrames`' rules (civetweb's own reader takes an unmasked
    /// frame, or one with RSV bits set, as any other and cannot say which
    /// it was): a text message is handed to `onMessage`; a ping answered;
    /// a close answered and the socket ended; anything else ends it with
    /// its close status and one line. 30 s without a byte: a ping; 90 s:
    /// the socket is ended. When it ends, the connection is shut down, so
    /// civetweb's reader, which runs next, ends at once.
    private func readFrames(_ socket: Socket, id: Int) {
        let conn = socket.conn
        guard let info = mg_get_request_info(conn) else { return }
        let peer = withUnsafeBytes(of: info.pointee.remote_addr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard let fd = Posix.connectedSocket(peer: peer, peerPort: Int(info.pointee.remote_port), localPort: port) else {
            log("serve: WebSocket \(id) closed: its connection had ended")
            return
        }
        socket.writing.withLock { socket.fd = fd }
        var frames = WebSocketFrames(maxPayload: config.maxMessageBytes)
        var chunk = [UInt8](repeating: 0, count: 65536)
        var heard = monotonic(), pinged = false
        var closing = false
        func end(_ status: UInt16, _ why: String?) {
            closing = true
            if let why { log("serve: WebSocket \(id) closed: \(why)") }
            send(WebSocketFrames.closePayload(status), opcode: MG_WEBSOCKET_OPCODE_CONNECTION_CLOSE, on: socket)
        }
        // A page must keep up: what had been written to it at any moment
        // is acknowledged by its system within `requestTimeoutMs` (a page
        // that reads nothing fills its receive buffer, and its system stops
        // acknowledging). Measured with the bytes written and those still
        // unacknowledged (SIOCOUTQ), so a write that still makes progress
        // into a growing send buffer cannot hide a page that never reads.
        var due: (bytes: Int, since: Double)?
        let patience = Double(config.requestTimeoutMs) / 1000
        func keepsUp() -> Bool {
            guard let queued = Posix.unacknowledgedBytes(fd) else { return true }
            let written = socket.counts.withLock { socket.written }
            let now = monotonic()
            if let d = due, written - queued >= d.bytes { due = nil }
            if due == nil, queued > 0 { due = (written, now) }
            guard let d = due, now - d.since > patience else { return true }
            socket.counts.withLock { socket.lagging = true }
            return false
        }
        reading: while !stopping.load(ordering: .relaxed) {
            do throws(WebSocketFrames.Violation) {
                while let f = try frames.next() {
                    switch f.opcode {
                    case WebSocketFrames.text where f.fin:
                        guard let text = String(validating: f.payload, as: UTF8.self) else {
                            end(1007, "a text message that is not UTF-8")
                            break reading
                        }
                        if let handler = onMessage { delivery.async { handler(id, text) } }
                    case WebSocketFrames.text:
                        end(1003, "fragmented messages are not read")
                        break reading
                    case WebSocketFrames.continuation:
                        // A fragmented message ends the socket at its
                        // first frame: none is ever under way here.
                        end(1002, "a continuation frame with no message begun")
                        break reading
                    case WebSocketFrames.binary:
                        end(1003, "only text messages are read")
                        break reading
                    case WebSocketFrames.ping:
                        send(f.payload, opcode: MG_WEBSOCKET_OPCODE_PONG, on: socket)
                    case WebSocketFrames.pong:
                        break
                    default:   // close: answered with its status (1000 when it has none)
                        guard f.payload.count != 1 else {
                            end(1002, "a close frame of one byte")
                            break reading
                        }
                        guard f.payload.count >= 2 else {
                            end(1000, nil)
                            break reading
                        }
                        let status = UInt16(f.payload[0]) << 8 | UInt16(f.payload[1])
                        guard WebSocketFrames.isSendableStatus(status) else {
                            end(1002, "a close frame with status \(status), which no endpoint may send")
                            break reading
                        }
                        guard String(validating: f.payload.dropFirst(2), as: UTF8.self) != nil else {
                            end(1007, "a close frame whose reason is not UTF-8")
                            break reading
                        }
                        end(status, nil)
                        break reading
                    }
                }
            } catch {
                end(error.status, error.why)
                break reading
            }
            let readable = Posix.waitReadable(fd, seconds: 0.25)
            guard keepsUp() else {
                Posix.hangUp(fd)   // a write held up on it fails at once
                log("serve: WebSocket \(id) closed: the page read nothing of what was sent for \(config.requestTimeoutMs / 1000) s")
                break reading
            }
            guard readable else {
                let quiet = monotonic() - heard
                if quiet > 90 {
                    end(1001, "no answer to a ping for 60 s")
                    break reading
                }
                if quiet > 30 && !pinged {
                    send([], opcode: MG_WEBSOCKET_OPCODE_PING, on: socket)
                    pinged = true
                }
                continue
            }
            let n = chunk.withUnsafeMutableBytes { Posix.receive(fd, into: $0) }
            guard n > 0 else { break reading }   // the page went
            frames.feed(chunk[0 ..< n])
            heard = monotonic()
            pinged = false
        }
        socket.writing.withLock {
            socket.open = false
            if closing { Posix.endWrites(fd) } else { Posix.hangUp(fd) }
        }
        // Our close frame sent: what the page still sends is read and
        // dropped for up to a second (closed with unread bytes, the
        // connection would be reset, and a page still sending, say a
        // message too large, would lose the close frame and its status).
        if closing {
            let until = monotonic() + 1
            while monotonic() < until, Posix.waitReadable(fd, seconds: until - monotonic()),
                  chunk.withUnsafeMutableBytes({ Posix.receive(fd, into: $0) }) > 0 {}
            Posix.hangUp(fd)
        }
    }

    /// One frame from the server on one connection.
    private func send(_ bytes: [UInt8], opcode: Int, on socket: Socket) {
        socket.count(bytes.count)
        bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { c in
                _ = mg_websocket_write(socket.conn, Int32(opcode), c.baseAddress, c.count)
            }
        }
    }

    /// civetweb's reader, after `readFrames` ended the connection: what it
    /// had read ahead of the handshake's answer (a client may send nothing
    /// before it) is not taken.
    func received(_ conn: OpaquePointer, bits: Int32, _ bytes: UnsafeMutablePointer<CChar>?, _ length: Int) -> Int32 {
        0
    }

    func closed(_ conn: OpaquePointer) {
        let id = socketID(conn)
        let was = lock.withLock {
            reserved.remove(id)
            return sockets.removeValue(forKey: id)
        }
        // A write under way ends before civetweb reuses the connection.
        was?.writing.withLock { was?.open = false }
        if was != nil { onClose?(id) }
    }
}

extension String {
    func leftPadded(to n: Int) -> String {
        count >= n ? self : String(repeating: "0", count: n - count) + self
    }
}

/// Calls `body` with a NULL-terminated `char *` array of `strings`.
func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var argv: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
    return argv.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}

/// One call handed from a civetweb thread to a full-size stack
/// (`HTTPServer.onFullStack`); the caller waits on `done`.

