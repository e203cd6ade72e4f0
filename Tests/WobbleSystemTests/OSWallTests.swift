import Foundation
import XCTest

/// The OS wall: WobbleSystem is the only module that calls the operating
/// system (files, processes, signals, environment, threads, the clock,
/// exit); the C shims (`Sources/C*`) are its helpers. No other source file
/// imports Glibc or Darwin, or calls the system's functions by name: one
/// home per concern, every call checked the same way, and a front end or a
/// test can replace what it needs (a manual clock) in one place.
final class OSWallTests: XCTestCase {
    /// System functions that only WobbleSystem calls. A file that declares a
    /// function, constant, closure parameter or enum case of the same name
    /// (`func write(`, `let open:`, `_ read: () -> T`, `case rename(String)`)
    /// calls its own.
    static let calls = ["open", "openat", "fstat", "stat", "lstat", "read", "pread", "write", "close",
                        "signal", "sigaction", "setenv", "getenv", "unsetenv", "_exit", "exit",
                        "execv", "execvp", "posix_spawn", "kill", "usleep", "nanosleep", "sleep",
                        "clock_gettime", "pthread_create", "pthread_self", "isatty", "getpid", "strerror",
                        "fflush", "poll", "pipe", "dup2", "access", "time", "localtime_r",
                        "getrlimit", "setrlimit", "realpath", "mkdir", "unlink", "rename"]
    /// Foundation and Dispatch ways around the wall (a name from the start
    /// of a word; one starting with a dot wherever it is): threads, the global
    /// pool and queues of their own (`SerialQueue`, `SerialWorker`,
    /// `SystemThread`), other clocks, the environment and the CPU count
    /// (`Environment`, `ThisProcess.cores`: `ProcessInfo` is all of it),
    /// the standard streams (`printError`, `Messages`), file-system
    /// queries (`FileSystem`, `Posix`), and paths taken apart or put
    /// together another way than `ScenePaths` (Foundation's `URL` and
    /// `NSString` path methods).
    static let spellings = ["Thread.detachNewThread", "Thread {", "Thread(", "DispatchQueue.global", "DispatchQueue(",
                            "concurrentPerform", "DispatchTime.now", "Date()", "systemUptime",
                            "ProcessInfo", ".activeProcessorCount", "FileHandle.standard", "FileManager",
                            "URL(fileURLWithPath", "NSString)."]
    static let systemModules = ["Glibc", "Darwin", "Musl"]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The breaches in one file's text: `path:line: what`.
    ///
    /// The scan reads bytes (the whole tree's sources, ~38,000 lines, in a
    /// debug build: Foundation's `range(of:)` and a regular expression per
    /// line took 14 s). A line whose code (strings and comment taken out)
    /// has a byte outside ASCII goes through `slowBreaches`, the same rules
    /// on `String`s, so nothing depends on how bytes spell Unicode.
    static func breaches(_ text: String, path: String) -> [String] {
        let own = ownNames(Array(text.utf8))
        var out: [String] = []
        var inBlockString = false
        for (i, raw) in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let where_ = "\(path):\(i + 1)"
            // Multi-line string literals (help text) are not code.
            if occurrences(of: tripleQuote, in: raw) % 2 == 1 { inBlockString.toggle(); continue }
            if inBlockString { continue }
            var line = Array(raw)
            var blanked: [UInt8]? = line
            if line.contains(quote) { blanked = blankingStrings(line) }
            if var code = blanked, let c = firstIndex(of: comment, in: code) { code.removeSubrange(c...); blanked = code }
            guard let code = blanked, code.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\r") }) else {
                out += slowBreaches(String(decoding: raw, as: UTF8.self), at: where_, own: own)
                continue
            }
            line = code
            if firstIndex(of: importWord, in: line) != nil {
                let words = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
                if let k = words.firstIndex(of: "import"), k + 1 < words.count, systemModules.contains(words[k + 1]) {
                    out.append("\(where_): imports \(words[k + 1])")
                }
            }
            let called = calledNames(line)
            for name in calls where !own.contains(name) && called.contains(name) {
                out.append("\(where_): calls \(name)()")
            }
            for (s, bytes) in spellingBytes where s.hasPrefix(".") ? firstIndex(of: bytes, in: line) != nil : starts(line, bytes) {
                out.append("\(where_): uses \(s)")
            }
        }
        return out
    }

    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    static let tripleQuote = Array("\"\"\"".utf8), comment = Array("//".utf8), importWord = Array("import".utf8)
    static let spellingBytes = spellings.map { ($0, Array($0.utf8)) }
    static let callNames = Set(calls)

    /// The system names a file declares itself (`func write(`, `let open`,
    /// `var read`, `_ read: `, `rename: (`, `case rename(`): anywhere in
    /// the text, as a substring (`let opened` declares `open`).
    static func ownNames(_ text: [UInt8]) -> Set<String> {
        var own = Set<String>()
        func run(from k: Int) -> Int {
            var e = k
            while e < text.count, isIdentifier(text[e]) { e += 1 }
            return e
        }
        func has(_ p: [UInt8], at k: Int) -> Bool { matches(p, text, at: k) }
        let marks = Set([letWord, varWord, funcWord, caseWord, underscoreWord, closureMark].map { $0[0] })
        for k in text.indices where marks.contains(text[k]) {
            // `let NAME`, `var NAME`: NAME begins the identifier after the keyword.
            for p in [letWord, varWord] where has(p, at: k) {
                let e = run(from: k + p.count)
                let word = String(decoding: text[(k + p.count) ..< e], as: UTF8.self)
                for name in calls where word.hasPrefix(name) { own.insert(name) }
            }
            // `func NAME(`, `func NAME<`, `case NAME(`, `_ NAME: `: the whole identifier, then the mark.
            for (p, after) in [(funcWord, [UInt8(ascii: "(")]), (funcWord, [UInt8(ascii: "<")]),
                               (caseWord, [UInt8(ascii: "(")]), (underscoreWord, Array(": ".utf8))] where has(p, at: k) {
                let e = run(from: k + p.count)
                let word = String(decoding: text[(k + p.count) ..< e], as: UTF8.self)
                if callNames.contains(word), has(after, at: e) { own.insert(word) }
            }
            // `NAME: (`: NAME ends the identifier before the mark.
            if has(closureMark, at: k) {
                var b = k
                while b > 0, isIdentifier(text[b - 1]) { b -= 1 }
                let word = String(decoding: text[b ..< k], as: UTF8.self)
                for name in calls where word.hasSuffix(name) { own.insert(name) }
            }
        }
        return own
    }

    static let letWord = Array("let ".utf8), varWord = Array("var ".utf8), funcWord = Array("func ".utf8),
               caseWord = Array("case ".utf8), underscoreWord = Array("_ ".utf8), closureMark = Array(": (".utf8)

    /// Whether `a` holds `p` at `k` (a plain loop: fast in a debug build).
    static func matches(_ p: [UInt8], _ a: [UInt8], at k: Int) -> Bool {
        guard k + p.count <= a.count else { return false }
        var i = 0
        while i < p.count {
            if a[k + i] != p[i] { return false }
            i += 1
        }
        return true
    }

    static func isIdentifier(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    /// Non-overlapping occurrences of `p` in `line`, left to right.
    static func occurrences(of p: [UInt8], in line: some Collection<UInt8>) -> Int {
        let a = Array(line)
        var n = 0, k = 0
        while k + p.count <= a.count {
            if a[k] == p[0], matches(p, a, at: k) { n += 1; k += p.count } else { k += 1 }
        }
        return n
    }

    static func firstIndex(of p: [UInt8], in line: [UInt8], from start: Int = 0) -> Int? {
        var k = start
        while k + p.count <= line.count {
            if line[k] == p[0], matches(p, line, at: k) { return k }
            k += 1
        }
        return nil
    }

    /// Each string literal (`"…"`, its escapes skipped) as `""`, as the
    /// regular expression `"(?:[^"\\]|\\.)*"` replaces them: an unclosed
    /// one and what follows stay. Nil when a backslash escapes a line break
    /// (`.` matches none: the `String` scan decides).
    static func blankingStrings(_ line: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = [], k = 0
        while k < line.count {
            guard line[k] == quote else { out.append(line[k]); k += 1; continue }
            var e = k + 1
            while e < line.count, line[e] != quote {
                if line[e] == backslash {
                    guard e + 1 < line.count else { e = line.count; break }
                    let next = line[e + 1]
                    if next == UInt8(ascii: "\r") || (next == 0xC2 && e + 2 < line.count && line[e + 2] == 0x85)
                        || (next == 0xE2 && e + 3 < line.count && line[e + 2] == 0x80 && (line[e + 3] == 0xA8 || line[e + 3] == 0xA9)) {
                        return nil
                    }
                    e += 2
                } else {
                    e += 1
                }
            }
            guard e < line.count else { out += line[k...]; break }
            out += [quote, quote]
            k = e + 1
        }
        return out
    }

    /// The names in `line` written as calls: an identifier followed by `(`
    /// with no letter, digit, `_` or `.` before it (`open(`, not
    /// `file.open(` or `reopen(`).
    static func calledNames(_ line: [UInt8]) -> Set<String> {
        var names = Set<String>()
        for (k, b) in line.enumerated() where b == UInt8(ascii: "(") {
            var s = k
            while s > 0, isIdentifier(line[s - 1]) { s -= 1 }
            guard s < k, s == 0 || line[s - 1] != UInt8(ascii: ".") else { continue }
            names.insert(String(decoding: line[s ..< k], as: UTF8.self))
        }
        return names
    }

    /// Whether `token` occurs in `line` where it is not the tail of a longer
    /// name or a member (`SystemThread(`, `file.write(`, `Posix.close(`).
    static func starts(_ line: [UInt8], _ token: [UInt8]) -> Bool {
        var k = 0
        while let r = firstIndex(of: token, in: line, from: k) {
            if r == 0 || !(isIdentifier(line[r - 1]) || line[r - 1] == UInt8(ascii: ".")) { return true }
            k = r + 1
        }
        return false
    }

    /// `breaches` for one line on `String`s (a line with bytes outside
    /// ASCII, or a carriage return).
    static func slowBreaches(_ raw: String, at where_: String, own: Set<String>) -> [String] {
        var out: [String] = []
        var line = raw
        if line.contains("\"") { line = line.replacingOccurrences(of: #""(?:[^"\\]|\\.)*""#, with: "\"\"", options: .regularExpression) }
        if let c = line.range(of: "//") { line = String(line[..<c.lowerBound]) }
        let words = line.split(separator: " ").map(String.init)
        if let k = words.firstIndex(of: "import"), k + 1 < words.count, systemModules.contains(words[k + 1]) {
            out.append("\(where_): imports \(words[k + 1])")
        }
        for name in calls where !own.contains(name) && starts(line, name + "(") {
            out.append("\(where_): calls \(name)()")
        }
        // (A member, `.name`, is a breach on whatever it is read from.)
        for s in spellings where s.hasPrefix(".") ? line.contains(s) : starts(line, s) {
            out.append("\(where_): uses \(s)")
        }
        return out
    }

    /// `starts` on a `String`.
    static func starts(_ line: String, _ token: String) -> Bool {
        var rest = line[...]
        while let r = rest.range(of: token) {
            let before = r.lowerBound == line.startIndex ? nil : line[line.index(before: r.lowerBound)]
            if before.map({ !($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") }) ?? true { return true }
            rest = line[r.upperBound...]
        }
        return false
    }

    func testNoFileOutsideWobbleSystemCallsTheOS() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var found: [String] = []
        var scanned = 0
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        where module != "WobbleSystem" && !module.hasPrefix("C") {
            let dir = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: dir.path) else { continue }
            for case let name as String in files where name.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
                found += Self.breaches(text, path: "Sources/\(module)/\(name)")
                scanned += 1
            }
        }
        XCTAssertGreaterThan(scanned, 100, "the scan found the sources")
        XCTAssertEqual(found, [], "calls to the OS belong in WobbleSystem (Sources/WobbleSystem): add or use a named call there")
    }

    func testTheScanNamesAPlantedBreach() {
        let text = """
            import Foundation
            import Glibc
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            // close(fd) in a comment
            let s = "write(1) in a string"
            try Posix.close(fd, shown: path)
            file.write(bytes)
            let t = SystemThread.detach { }
            DispatchQueue.global().async { }
            exit(1)
            let home = ProcessInfo.processInfo.environment["HOME"]
            let n = info.activeProcessorCount
            FileHandle.standardError.write(Data("x".utf8))
            let names = try FileManager.default.contentsOfDirectory(atPath: "/dev")
            let q = DispatchQueue(label: "x")
            let ext = URL(fileURLWithPath: p).pathExtension + (dir as NSString).appendingPathComponent(n)
            let fine = Environment.value("HOME") ?? "FileManager" + ScenePaths.join(dir, n)
            """
        XCTAssertEqual(Self.breaches(text, path: "Sources/WobbleMedia/X.swift"), [
            "Sources/WobbleMedia/X.swift:2: imports Glibc",
            "Sources/WobbleMedia/X.swift:3: calls open()",
            "Sources/WobbleMedia/X.swift:4: calls close()",
            "Sources/WobbleMedia/X.swift:10: uses DispatchQueue.global",
            "Sources/WobbleMedia/X.swift:11: calls exit()",
            "Sources/WobbleMedia/X.swift:12: uses ProcessInfo",
            "Sources/WobbleMedia/X.swift:13: uses .activeProcessorCount",
            "Sources/WobbleMedia/X.swift:14: uses FileHandle.standard",
            "Sources/WobbleMedia/X.swift:15: uses FileManager",
            "Sources/WobbleMedia/X.swift:16: uses DispatchQueue(",
            "Sources/WobbleMedia/X.swift:17: uses URL(fileURLWithPath",
            "Sources/WobbleMedia/X.swift:17: uses NSString).",
        ])
    }

    func testAFileCallsItsOwnFunctionOfASystemName() {
        let text = "struct S {\n    func write(_ b: [UInt8]) {}\n    func f() { write([]) ; close(3) }\n}\n"
        XCTAssertEqual(Self.breaches(text, path: "A.swift"), ["A.swift:3: calls close()"])
        let command = "enum C {\n    case rename(String)\n}\nlet c = C.rename(\"x\"); unlink(p)\n"
        XCTAssertEqual(Self.breaches(command, path: "B.swift"), ["B.swift:4: calls unlink()"])
    }
}
