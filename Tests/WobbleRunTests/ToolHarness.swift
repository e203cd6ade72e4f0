import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem

/// Runs the built `wobble-run` executable for end-to-end tests.
enum Tool {
    /// The executable beside the test bundle in the build products folder.
    /// `WOBBLE_RUN_EXECUTABLE` overrides it (to run the tests against
    /// another build, e.g. to see a new test fail on the old code).
    static let executable: URL = {
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
    static let slowdown = max(1, Double(ProcessInfo.processInfo.environment["WOBBLE_TEST_SLOWDOWN"] ?? "") ?? 1)

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// stdout as bytes (a GIF or video written to `-`).
        var stdoutBytes = Data()
        /// The first line of stderr.
        var firstError: String { String(stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? "") }
    }

    /// Starts the tool; the caller waits.
    /// `executable`: another program (a path, or a name looked up on PATH).
    static func start(_ args: [String], cwd: URL, executable other: String? = nil) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        if let other {
            p.executableURL = URL(fileURLWithPath: other.contains("/") ? other : ChildProcess.findExecutable(other) ?? other)
        } else {
            p.executableURL = executable
        }
        p.arguments = args
        p.currentDirectoryURL = cwd
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return (p, out, err)
    }

    /// Runs the tool to completion in `cwd`.
    @discardableResult
    static func run(_ args: [String], cwd: URL, executable other: String? = nil) throws -> Result {
        let (p, out, err) = try start(args, cwd: cwd, executable: other)
        // Read both pipes concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let g = DispatchGroup()
        g.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); g.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        g.wait()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), stdoutBytes: outData)
    }
}

/// A temporary folder with helpers to write scenes and images into.
final class Sandbox {
    let url: URL

    /// A scene on `img.png` (40×30) with one region poked at t = 0:
    /// 3 × wait(0.1) = 9 frames at 30 fps.
    static let poke = """
    image("img.png")
    addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    impulse(1, 1, 0)
    wait(0.1) wait(0.1) wait(0.1)
    """

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    /// A `w`×`h` test image: a colour gradient with a pattern (every pixel distinct enough to see movement).
    static func pattern(width w: Int, height h: Int, transparentColumns: Bool = false) -> RGBAImage {
        var px = [UInt8](repeating: 255, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                px[i] = UInt8(x * 255 / max(w - 1, 1))
                px[i + 1] = UInt8(y * 255 / max(h - 1, 1))
                px[i + 2] = UInt8(((x / 3 + y / 3) % 2) * 200)
                px[i + 3] = transparentColumns && x % 8 < 2 ? 0 : 255
            }
        }
        return RGBAImage(width: w, height: h, pixels: px)
    }

    func writeImage(_ name: String, _ img: RGBAImage) throws {
        try ImageIO.writePNG(img, to: path(name))
    }

    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    /// Every temporary leftover anywhere below the sandbox.
    func leftovers() -> [String] {
        let e = FileManager.default.enumerator(atPath: url.path)
        var out: [String] = []
        while let f = e?.nextObject() as? String {
            if f.contains("wobble-tmp") { out.append(f) }
        }
        return out
    }
}
