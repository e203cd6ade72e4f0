import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem
import WobbleTestSupport

/// The APNG's frames decode exactly to the PNG frames of the same render in
/// three decoders: Pillow, ffmpeg and Chromium's `ImageDecoder`
/// (`Browser/decode-apng.py`, in the browser tests' environment:
/// Playwright and Pillow, `Scripts/install-browser-tests.sh`). No frame is
/// disposed "previous": decoders get that op wrong (Pillow 13 drew the
/// clip below up to 152 levels off).
final class APNGDecoderTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        let (python, _) = try BrowserStudioTests.browser()
        if (try? Tool.exec(python, ["-c", "import PIL"]))?.status != 0 {
            let why = "Pillow is not installed in the browser tests' environment (\(python)); Scripts/install-browser-tests.sh installs it"
            if ProcessInfo.processInfo.environment["WOBBLE_BROWSER_TESTS"] == "1" { XCTFail(why) }
            throw XCTSkip(why)
        }
        guard ChildProcess.findExecutable("ffmpeg") != nil else { throw XCTSkip("ffmpeg is not installed") }
        box = try Sandbox()
    }

    override func tearDown() { box = nil }

    /// The three decoders' verdict on `anim` against the PNG frames in `frames`.
    func decode(_ anim: String, frames: String) throws -> [String: Any] {
        let (python, chromium) = try BrowserStudioTests.browser()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/decode-apng.py").path
        var env = ProcessInfo.processInfo.environment
        env["WOBBLE_CHROMIUM"] = chromium
        let r = try Tool.exec(python, [script, anim, frames], cwd: box.url, env: env)
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line + r.stderr)
    }

    /// A classic wobble of half a second sampled at 8 fps swings out and
    /// back to the still picture every other frame (frame k + 2 equals
    /// frame k): the clip that had seven frames disposed "previous", each
    /// followed by a 1×1 frame (Pillow 13 drew fourteen of the cat's
    /// sixteen frames wrong, up to 152 levels). An opaque photo and a
    /// partly transparent picture, with and without `--overlay`.
    func testTheFramesDecodeExactlyInPillowFFmpegAndChromium() throws {
        var mixed = Sandbox.pattern(width: 96, height: 72, checker: 4)
        for y in 0..<72 {
            for x in 48..<96 { mixed.pixels[(y * 96 + x) * 4 + 3] = UInt8((x - 48) * 255 / 47) }
        }
        try box.writeImage("mixed.png", mixed)
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        try FileManager.default.copyItem(atPath: repo.appendingPathComponent("Examples/cat/chelsea.png").path, toPath: box.path("cat.png"))
        let cat = "x = 150, y = 120, w = 200, h = 160", small = "x = 10, y = 8, w = 70, h = 56"
        for (image, region, extra) in [("cat.png", cat, [String]()), ("mixed.png", small, []), ("mixed.png", small, ["--overlay"])] {
            try box.write("s.lua", """
                image("\(image)")
                local a = addSketch{\(region), duration = 0.5}
                prepare()
                impulse(a, 1, 0)
                wait(2)
                """)
            try? FileManager.default.removeItem(atPath: box.path("frames"))
            let f = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--fps", "8", "-o", "frames/"] + extra, cwd: box.url)
            XCTAssertEqual(f.status, 0, f.stderr)
            let a = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--fps", "8", "-o", "s.apng"] + extra, cwd: box.url)
            XCTAssertEqual(a.status, 0, a.stderr)
            let what = "\(image) \(extra)"
            let j = try decode("s.apng", frames: "frames")
            XCTAssertEqual(j["reference"] as? Int, 16, what)
            XCTAssertEqual(j["frames"] as? [String: Int], ["pillow": 16, "ffmpeg": 16, "chromium": 16], what)
            XCTAssertEqual(j["disposePrevious"] as? Int, 0, "\(what): no frame is disposed \"previous\"")
            let wrong = try XCTUnwrap(j["wrong"] as? [String: [[Int]]], "\(j)")
            XCTAssertEqual(wrong["pillow"], [], "\(what): frames (index, levels) Pillow \(j["pillowVersion"] ?? "") decodes differently")
            XCTAssertEqual(wrong["ffmpeg"], [], "\(what): frames ffmpeg decodes differently")
            XCTAssertEqual(wrong["chromium"], [], "\(what): frames Chromium's ImageDecoder decodes differently")
        }
    }
}
