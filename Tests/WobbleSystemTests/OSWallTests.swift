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
    static func breaches(_ text: String, path: String) -> [String] {
        var own = Set<String>()
        for name in calls where ["func \(name)(", "func \(name)<", "let \(name)", "var \(name)", "_ \(name): ", "\(name): (", "case \(name)("]
            .contains(where: { text.contains($0) }) { own.insert(name) }
        var out: [String] = []
        var inBlockString = false
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let where_ = "\(path):\(i + 1)"
            var line = String(raw)
            // Multi-line string literals (help text) are not code.
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inBlockString.toggle(); continue }
            if inBlockString { continue }
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
        }
        return out
    }

    /// Whether `token` occurs in `line` where it is not the tail of a longer
    /// name or a member (`SystemThread(`, `file.write(`, `Posix.close(`).
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
