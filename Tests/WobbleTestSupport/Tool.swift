import Foundation
import WobbleCore
import WobbleMedia
import WobbleSystem

/// Runs the built `wobble-run` executable (and other programs) for
/// end-to-end tests: the one way the test targets find and run it.
public enum Tool {
    /// The executable beside the test bundle in the build products folder.
    /// `WOBBLE_RUN_EXECUTABLE` overrides it (to run the tests against
    /// another build, e.g. to see a new test fail on the old code).
    public static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["WOBBLE_RUN_EXECUTABLE"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("wobble-run")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        for b in Bundle.allBundles {
            let candidate = b.bundleURL.deletingLastPathComponent().appendingPathComponent("wobble-run")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        fatalError("wobble-run executable not found near \(Bundle.main.bundleURL.path)")
    }()

    /// How much slower than usual the tool runs (`WOBBLE_TEST_SLOWDOWN`,
    /// default 1): Scripts/sanitize.sh sets it, as a sanitizer slows every
    /// frame down; time limits in the tests scale with it.
    public static let slowdown = max(1, Double(ProcessInfo.processInfo.environment["WOBBLE_TEST_SLOWDOWN"] ?? "") ?? 1)

    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// stdout as bytes (a GIF or video written to `-`).
        public var stdoutBytes = Data()
        /// The first line of stderr.
        public init(status: Int32, stdout: String, stderr: String, stdoutBytes: Data = Data()) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
            self.stdoutBytes = stdoutBytes
        }
        public var firstError: String { String(stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? "") }
    }

    /// Starts the tool; the caller waits.
    /// `executable`: another program (a path, or a name looked up on PATH).
    public static func start(_ args: [String], cwd: URL, executable other: String? = nil,
                             env: [String: String]? = nil) throws -> (Process, Pipe, Pipe) {
        let url = other.map { URL(fileURLWithPath: $0.contains("/") ? $0 : ChildProcess.findExecutable($0) ?? $0) } ?? executable
        return try launch(url, args, cwd: cwd, env: env)
    }

    /// Runs `program` (a path, or a name looked up on PATH through
    /// /usr/bin/env) to completion: status, stdout, stderr. `env` replaces
    /// the environment.
    @discardableResult
    public static func exec(_ program: String, _ args: [String], cwd: URL? = nil, env: [String: String]? = nil) throws -> (status: Int32, stdout: Data, stderr: String) {
        let (p, out, err) = program.hasPrefix("/")
            ? try launch(URL(fileURLWithPath: program), args, cwd: cwd, env: env)
            : try launch(URL(fileURLWithPath: "/usr/bin/env"), [program] + args, cwd: cwd, env: env)
        let (outData, errData) = drain(out, err)
        p.waitUntilExit()
        return (p.terminationStatus, outData, String(decoding: errData, as: UTF8.self))
    }

    /// Starts `url` with stdin from /dev/null and stdout and stderr piped.
    static func launch(_ url: URL, _ args: [String], cwd: URL?, env: [String: String]?) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = url
        p.arguments = args
        if let cwd { p.currentDirectoryURL = cwd }
        if let env { p.environment = env }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return (p, out, err)
    }

    /// Reads both pipes to their ends concurrently, so neither fills up.
    public static func drain(_ out: Pipe, _ err: Pipe) -> (Data, Data) {
        nonisolated(unsafe) var errData = Data()
        let g = DispatchGroup()
        g.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); g.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        g.wait()
        return (outData, errData)
    }

    /// Runs the tool to completion in `cwd`.
    @discardableResult
    public static func run(_ args: [String], cwd: URL, executable other: String? = nil) throws -> Result {
        let (p, out, err) = try start(args, cwd: cwd, executable: other)
        let (outData, errData) = drain(out, err)
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), stdoutBytes: outData)
    }
}

/// A temporary folder with helpers to write scenes and images into,
/// removed with the sandbox: the one temporary-folder fixture of the tests.
public final class Sandbox {
    public let url: URL

    /// A scene on `img.png` (40×30) with one region poked at t = 0:
    /// 3 × wait(0.1) = 9 frames at 30 fps.
    public static let poke = """
    image("img.png")
    addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    impulse(1, 1, 0)
    wait(0.1) wait(0.1) wait(0.1)
    """

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The folder's path.
    public var path: String { url.path }

    /// `name` in the folder (as `path(_:)`).
    public func file(_ name: String) -> String { path(name) }

    /// Removes the folder now (it is removed when the sandbox goes anyway).
    public func remove() { try? FileManager.default.removeItem(at: url) }

    /// The names in the folder, or in its subfolder `sub` (hidden ones too), sorted.
    public func list(_ sub: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: sub.isEmpty ? path : file(sub)).sorted()
    }

    public func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    /// A `w`×`h` test image: a colour gradient with a checker of `checker`
    /// pixel squares (every pixel distinct enough to see movement).
    public static func pattern(width w: Int, height h: Int, checker: Int = 3, transparentColumns: Bool = false) -> RGBAImage {
        var px = [UInt8](repeating: 255, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                px[i] = UInt8(x * 255 / max(w - 1, 1))
                px[i + 1] = UInt8(y * 255 / max(h - 1, 1))
                px[i + 2] = UInt8(((x / checker + y / checker) % 2) * 200)
                px[i + 3] = transparentColumns && x % 8 < 2 ? 0 : 255
            }
        }
        return RGBAImage(width: w, height: h, pixels: px)
    }

    public func writeImage(_ name: String, _ img: RGBAImage) throws {
        try ImageIO.writePNG(img, to: path(name))
    }

    public func files() -> [String] {
        (try? list()) ?? []
    }

    /// Every temporary leftover anywhere below the sandbox.
    public func leftovers() -> [String] {
        let e = FileManager.default.enumerator(atPath: url.path)
        var out: [String] = []
        while let f = e?.nextObject() as? String {
            if f.contains("wobble-tmp") { out.append(f) }
        }
        return out
    }
}
