import Foundation
import WobbleSystem
import XCTest

/// Region-only frames end to end: every gallery scene renders to the same
/// GIF, PNG frames and MP4 (decoded frames) as with whole frames
/// (`WOBBLE_WHOLE_FRAMES=1`, the testing switch), on both backends; so do
/// `--overlay`, `--width`, `--matte` and the alpha-keeping formats (WebP,
/// APNG) on the transparent sticker. Short frame ranges over the clips'
/// starts (regions start moving there) keep it quick.
final class RegionFramesE2ETests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws { box = try Sandbox() }

    static var examples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples").standardized
    }

    /// The gallery's scene files.
    var scenes: [String] {
        let dir = Self.examples.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.sorted().compactMap { name in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(name)")) ?? []
            return files.first { $0.hasSuffix(".lua") }.map { "\(dir)/\(name)/\($0)" }
        }
    }

    /// Runs wobble-run with `args`, region-only or with whole frames, and
    /// returns what `-o` names: a file's bytes, a folder's files in order
    /// (their bytes joined, with their names), or a video's decoded frames.
    func output(_ args: [String], whole: Bool, out: String, file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        var env = ProcessInfo.processInfo.environment
        env["WOBBLE_WHOLE_FRAMES"] = whole ? "1" : nil
        let path = box.path((whole ? "whole-" : "region-") + out) + (out.hasSuffix("/") ? "/" : "")
        let r = try Tool.exec(Tool.executable.path, args + ["-q", "-o", path], cwd: box.url, env: env)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        if out.hasSuffix("/") {
            var joined = Data()
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
                joined.append(Data(name.utf8))
                joined.append(try Data(contentsOf: URL(fileURLWithPath: path + name)))
            }
            return joined
        }
        if out.hasSuffix(".mp4") {
            let d = try Tool.exec("ffmpeg", ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            XCTAssertEqual(d.status, 0, d.stderr, file: file, line: line)
            return d.stdout
        }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func assertSame(_ args: [String], out: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let region = try output(args, whole: false, out: out, file: file, line: line)
        let whole = try output(args, whole: true, out: out, file: file, line: line)
        XCTAssertGreaterThan(whole.count, 0, "\(args)", file: file, line: line)
        XCTAssertTrue(region == whole, "\(args) \(out): region-only output differs from whole frames (\(region.count) vs \(whole.count) bytes)",
                      file: file, line: line)
    }

    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil }

    func testGalleryOnGLES() throws {
        XCTAssertGreaterThanOrEqual(scenes.count, 9)
        // Frames 14-25: every scene's regions move there; in some they
        // start moving inside the range (see testGalleryOnCPU).
        for (k, scene) in scenes.enumerated() {
            let args = [scene, "--backend", "gles", "--frames", "14-25", "--width", "64"]
            try assertSame(args, out: "g.gif")
            try assertSame(args, out: "g/")
            if hasFFmpeg && k % 3 == 0 { try assertSame(args, out: "g.mp4") }
        }
    }

    func testGalleryOnCPU() throws {
        // The CPU reference is slower: four frames, PNG frames for every
        // scene, GIF and MP4 for some (the regions of cat, latte, purr,
        // spoon, springs, sticker and sway start moving in frames 1-10,
        // table-bump's and whiskers' in frame 16).
        for (k, scene) in scenes.enumerated() {
            let args = [scene, "--backend", "cpu", "--frames", "15-18", "--width", "48"]
            try assertSame(args, out: "c/")
            if k % 3 == 2 { try assertSame(args, out: "c.gif") }
        }
        if hasFFmpeg { try assertSame([scenes[0], "--backend", "cpu", "--frames", "15-18", "--width", "48"], out: "c.mp4") }
    }

    func testOverlayWidthAndTransparency() throws {
        let sticker = Self.examples.appendingPathComponent("sticker/sticker.lua").path
        let cat = Self.examples.appendingPathComponent("cat/cat.lua").path
        for backend in ["gles", "cpu"] {
            let frames = backend == "gles" ? "4-15" : "8-11"
            let common = ["--backend", backend, "--frames", frames, "--width", backend == "gles" ? "80" : "48"]
            try assertSame([cat] + common + ["--overlay"], out: "o.gif")
            try assertSame([sticker] + common + ["--matte", "#203040"], out: "m.gif")
            try assertSame([sticker] + common, out: "a.webp")
            guard backend == "gles" else { continue }
            try assertSame([sticker] + common + ["--overlay"], out: "so/")
            try assertSame([sticker] + common, out: "a.apng")
        }
    }
}
