import Foundation
import XCTest
import WobbleSystem
import WobbleCore
@testable import WobbleMedia

/// Where clips go: animated WebP and APNG read back with
/// Pillow and ffprobe, ProRes 4444 with alpha, `--matte`, and the pipeline
/// fixes (`-o - --json`, the written size, odd video sizes, colour tags).
final class FormatsTests: XCTestCase {
    var box: Sandbox!
    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil && ChildProcess.findExecutable("ffprobe") != nil }

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        // 64×48 with every alpha: a ramp from 0 to 255 across, the picture under it.
        try box.writeImage("alpha.png", Self.alphaRamp(width: 64, height: 48))
        try box.write("a.lua", """
            image("alpha.png")
            addSketch{x = 10, y = 8, w = 40, h = 30}
            prepare()
            impulse(1, 1, 0)
            wait(0.4)
            """)
    }

    override func tearDown() { box = nil }

    static func alphaRamp(width w: Int, height h: Int) -> RGBAImage {
        var img = Sandbox.pattern(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w { img.pixels[(y * w + x) * 4 + 3] = UInt8(x * 255 / (w - 1)) }
        }
        return img
    }

    /// A Python with Pillow (Debian's python3-pil), or nil.
    static let python: String? = {
        for p in ["/usr/bin/python3", "/usr/local/bin/python3"] where FileManager.default.isExecutableFile(atPath: p) {
            if let r = try? Tool.run(["-c", "import PIL"], cwd: URL(fileURLWithPath: "/"), executable: p), r.status == 0 { return p }
        }
        return nil
    }()

    static let compareScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Scripts/anim-compare.py").standardized.path

    /// Scripts/anim-compare.py's verdict on `file` against the PNG frames in `dir`.
    func compare(_ file: String, frames dir: String, fps: Double = 30) throws -> [String: Any] {
        guard let py = Self.python else { throw XCTSkip("Pillow (python3-pil) is not installed: the read-back needs it") }
        let r = try Tool.run([Self.compareScript, file, dir, String(fps)], cwd: box.url, executable: py)
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(object, r.stdout + r.stderr)
    }

    /// ffprobe's `-show_entries stream=…` values for the first video stream.
    func probe(_ file: String, _ entries: String, countFrames: Bool = false) throws -> [String] {
        let r = try Tool.run(["-v", "error"] + (countFrames ? ["-count_frames"] : []) +
                             ["-select_streams", "v:0", "-show_entries", "stream=" + entries, "-of", "csv=p=0", file],
                             cwd: box.url, executable: "ffprobe")
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
    }

    func render(_ args: [String], scene: String = "a.lua") throws -> Tool.Result {
        let r = try Tool.run([scene, "--backend", "cpu", "-q"] + args, cwd: box.url)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        return r
    }

    func size(_ name: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: box.path(name)))?[.size] as? Int) ?? -1
    }

    /// The JSON object on the last line of `text`.
    func lastJSON(_ text: String) throws -> [String: Any] {
        let last = text.split(separator: "\n").last.map(String.init) ?? ""
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], text)
    }

    // MARK: - WebP

    func testWebPDurationsAlphaQualityAndSize() throws {
        _ = try render(["-o", "frames/"])
        let r = try render(["-o", "clip.webp", "--json"])
        let j = try lastJSON(r.stdout)
        XCTAssertEqual(j["bytes"] as? Int, size("clip.webp"), "--json reports the written size")
        let c = try compare("clip.webp", frames: "frames")
        // 0.4 s at 30 fps: 12 frames, 400 ms in whole milliseconds
        // (libwebp merges identical frames into longer ones; the times stay exact).
        XCTAssertEqual(c["total"] as? Int, 400)
        let durations = try XCTUnwrap(c["durations"] as? [Int])
        XCTAssertEqual(durations.count, c["frames"] as? Int)
        // Every frame starts on round(1000 k / 30).
        var t = 0, k = 0
        for d in durations {
            t += d
            while (Double(k) * 1000 / 30).rounded() < Double(t) { k += 1 }
            XCTAssertEqual((Double(k) * 1000 / 30).rounded(), Double(t), "a frame ends at \(t) ms, not on a frame start: \(durations)")
        }
        XCTAssertEqual(c["alpha_equal"] as? Bool, true, "lossy WebP keeps alpha exactly (alpha_quality 100)")
        XCTAssertEqual(c["loop"] as? Int, 0)

        // A photo (the gallery's cat, 225×150): every frame within 35 dB of
        // its PNG frame, and the file smaller than our GIF of it.
        try FileManager.default.copyItem(atPath: PipelineTests.examples.appendingPathComponent("cat/chelsea.png").path,
                                         toPath: box.path("cat.png"))
        try box.write("cat.lua", """
            image("cat.png")
            addSketch{lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286}}
            addSketch{x = 190, y = 10, w = 150, h = 100}
            prepare()
            impulse(1, 1, 0)
            impulse(2, 0, 1)
            wait(0.6)
            """)
        _ = try render(["-o", "cat/", "--width", "225"], scene: "cat.lua")
        _ = try render(["-o", "cat.webp", "--width", "225"], scene: "cat.lua")
        _ = try render(["-o", "cat.gif", "--width", "225"], scene: "cat.lua")
        let cat = try compare("cat.webp", frames: "cat")
        XCTAssertGreaterThanOrEqual(cat["min_psnr"] as? Double ?? 0, 35, "\(cat)")
        XCTAssertEqual(cat["total"] as? Int, 600)
        XCTAssertLessThan(size("cat.webp"), size("cat.gif"))

        // Lossless at --quality 100: exactly the PNG frames; --loop 2 plays 3 times.
        _ = try render(["-o", "exact.webp", "--quality", "100", "--loop", "2"])
        let e = try compare("exact.webp", frames: "frames")
        XCTAssertEqual(e["exact"] as? Bool, true, "\(e)")
        XCTAssertEqual(e["total"] as? Int, 400)
        XCTAssertEqual(e["loop"] as? Int, 3)
        XCTAssertEqual(box.leftovers(), [])
    }

    // MARK: - APNG

    func testAPNGIsExactWithEveryFrameAndItsDelay() throws {
        _ = try render(["-o", "frames/"])
        _ = try render(["-o", "clip.apng"])
        let c = try compare("clip.apng", frames: "frames")
        XCTAssertEqual(c["exact"] as? Bool, true, "\(c)")
        XCTAssertEqual(c["frames"] as? Int, 12, "one APNG frame per clip frame")
        XCTAssertEqual(c["mode"] as? String, "RGBA")
        XCTAssertEqual(c["loop"] as? Int, 0)
        // The delays are exactly 1/30 s each: fcTL 1/30.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: box.path("clip.apng"))))
        var fcTL = 0, i = 8
        while i + 8 <= bytes.count {
            let n = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self) == "fcTL" {
                XCTAssertEqual(Array(bytes[(i + 28)..<(i + 32)]), [0, 1, 0, 30], "delay 1/30")
                fcTL += 1
            }
            i += 12 + n
        }
        XCTAssertEqual(fcTL, 12)
        XCTAssertEqual(i, bytes.count, "the chunks tile the file")
        if hasFFmpeg {
            XCTAssertEqual(try probe("clip.apng", "codec_name,nb_read_frames", countFrames: true), ["apng", "12"])
        }
        // --format apng for a .png path: one animated PNG there.
        let j = try lastJSON(try render(["-o", "one.png", "--format", "apng", "--json"]).stdout)
        XCTAssertEqual(j["bytes"] as? Int, size("one.png"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("one.png"))), Data(bytes))
        XCTAssertEqual(box.leftovers(), [])
    }

    func testWebPTimingAndPlays() {
        XCTAssertEqual((0..<6).map { AnimationTiming.duration(index: $0, fps: 30) }, [33, 34, 33, 33, 34, 33])
        XCTAssertEqual((0..<30).map { AnimationTiming.duration(index: $0, fps: 30) }.reduce(0, +), 1000)
        XCTAssertEqual((0..<7).map { AnimationTiming.duration(index: $0, fps: 7) }.reduce(0, +), 1000)
        XCTAssertEqual(AnimationTiming.millisecond(index: 90, fps: 29.97), 3003)
        XCTAssertEqual([0, -1, 1, 4, 65534, 65535].map(AnimationTiming.plays(loop:)), [0, 1, 2, 5, 65535, 65536], "APNG stores 65536 plays; a WebP refuses --loop 65535")
    }

    func testAPNGDelayFractions() {
        XCTAssertTrue(APNGChunks.delay(fps: 30) == (1, 30))
        XCTAssertTrue(APNGChunks.delay(fps: 29.97) == (100, 2997))
        XCTAssertTrue(APNGChunks.delay(fps: 0.01) == (100, 1))
        XCTAssertTrue(APNGChunks.delay(fps: 1000) == (1, 1000))
        let (n, d) = APNGChunks.delay(fps: 123.4567)
        XCTAssertEqual(Double(n) / Double(d), 1 / 123.4567, accuracy: 1e-8)
    }

    // MARK: - Video

    func testMOVOfATransparentSourceIsProResWithItsAlpha() throws {
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        _ = try render(["-o", "frames/"])
        _ = try render(["-o", "clip.mov"])
        let s = try probe("clip.mov", "codec_name,pix_fmt,nb_read_frames", countFrames: true)
        XCTAssertEqual(s.first, "prores")
        XCTAssertTrue(s.count == 3 && s[1].hasPrefix("yuva444p"), "\(s)")
        XCTAssertEqual(s.last, "12")
        // The alpha plane of every frame matches the PNG frames' alpha.
        let raw = try Tool.run(["-v", "error", "-i", "clip.mov", "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
                               cwd: box.url, executable: "ffmpeg").stdoutBytes
        XCTAssertEqual(raw.count, 12 * 64 * 48 * 4)
        var worst = 0
        for k in 0..<12 {
            let png = try ImageIO.load(path: box.path(String(format: "frames/frame_%05d.png", k)))
            for p in 0..<(64 * 48) {
                worst = max(worst, abs(Int(raw[raw.startIndex + (k * 64 * 48 + p) * 4 + 3]) - Int(png.pixels[p * 4 + 3])))
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "alpha differs by \(worst)")
        // An opaque source stays H.264; WebM keeps VP9's alpha.
        _ = try render(["-o", "opaque.mov"], scene: "s.lua")
        XCTAssertEqual(try probe("opaque.mov", "codec_name,pix_fmt"), ["h264", "yuv420p"])
        _ = try render(["-o", "clip.webm"])
        let alphaMode = try Tool.run(["-v", "error", "-show_entries", "stream_tags=alpha_mode", "-of", "csv=p=0", "clip.webm"],
                                     cwd: box.url, executable: "ffprobe")
        XCTAssertEqual(alphaMode.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "1")
    }

    func testOddSizeVideoReportsItsRealSizeAndColourTags() throws {
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        try box.writeImage("odd.png", Sandbox.pattern(width: 161, height: 121))
        try box.write("odd.lua", Sandbox.poke.replacingOccurrences(of: "img.png", with: "odd.png"))
        let r = try render(["-o", "odd.mp4", "--json"], scene: "odd.lua")
        let j = try lastJSON(r.stdout)
        let s = try probe("odd.mp4", "width,height,color_space,color_primaries,color_transfer,color_range")
        XCTAssertEqual(s, ["162", "122", "tv", "bt709", "bt709", "bt709"], "width, height, range, space, transfer, primaries")
        XCTAssertEqual(j["width"] as? Int, 162, "--json says the size ffprobe sees")
        XCTAssertEqual(j["height"] as? Int, 122)
        XCTAssertEqual(j["bytes"] as? Int, size("odd.mp4"))
        // The added column and row repeat the edge (not black).
        let raw = try Tool.run(["-v", "error", "-i", "odd.mp4", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                               cwd: box.url, executable: "ffmpeg").stdoutBytes
        XCTAssertEqual(raw.count, 162 * 122 * 3)
        func px(_ x: Int, _ y: Int) -> Int { Int(raw[raw.startIndex + (y * 162 + x) * 3]) }
        XCTAssertLessThan(abs(px(161, 60) - px(160, 60)), 12, "the padding column repeats the edge")
        XCTAssertGreaterThan(px(161, 60), 200, "the right edge of the gradient is red, not black")
        // Every video is tagged, ProRes and VP9 too.
        for (scene, out) in [("a.lua", "t.mov"), ("a.lua", "t.webm")] {
            _ = try render(["-o", out], scene: scene)
            XCTAssertEqual(try probe(out, "color_space,color_primaries,color_transfer,color_range"), ["tv", "bt709", "bt709", "bt709"], out)
        }
    }

    // MARK: - Pipelines

    func testStdoutCarriesOnlyTheOutputAndStderrEndsWithTheJSON() throws {
        _ = try render(["-o", "file.gif"], scene: "s.lua")
        let r = try render(["-o", "-", "--json"], scene: "s.lua")
        XCTAssertEqual(r.stdoutBytes, try Data(contentsOf: URL(fileURLWithPath: box.path("file.gif"))), "stdout is exactly the GIF")
        let j = try lastJSON(r.stderr)
        XCTAssertEqual(j["output"] as? String, "-")
        XCTAssertEqual(j["bytes"] as? Int, r.stdoutBytes.count)
        XCTAssertEqual(j["frames"] as? Int, 9)
        // A failure with -o -: the error line, then the JSON last, stdout empty.
        let bad = try Tool.run(["s.lua", "-q", "-o", "-", "--json", "--fps", "x"], cwd: box.url)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stdoutBytes.count, 0)
        XCTAssertEqual(try lastJSON(bad.stderr)["error"] as? String, "--fps: 'x' is not a number")
        // WebP and APNG to stdout too.
        for f in ["webp", "apng"] {
            let s = try render(["-o", "-", "--format", f, "--json"], scene: "s.lua")
            XCTAssertEqual(try lastJSON(s.stderr)["bytes"] as? Int, s.stdoutBytes.count, f)
            XCTAssertEqual(s.stdoutBytes.prefix(4), Data(f == "webp" ? Array("RIFF".utf8) : [0x89, 0x50, 0x4E, 0x47]), f)
        }
    }

    // MARK: - --matte

    func testMatteBlendsPartlyTransparentPixels() throws {
        guard let py = Self.python else { throw XCTSkip("Pillow (python3-pil) is not installed") }
        _ = try render(["-o", "matte.gif", "--matte", "#ffffff"])
        _ = try render(["-o", "plain.gif"])
        // The first frame's column 32 (alpha 128): blended onto white, opaque.
        let script = """
            import sys
            from PIL import Image
            for f in sys.argv[1:]:
                im = Image.open(f).convert("RGBA")
                print(im.getpixel((32, 2)), im.getpixel((0, 2)), im.getpixel((63, 2)))
            """
        let r = try Tool.run(["-c", script, "matte.gif", "plain.gif"], cwd: box.url, executable: py)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, r.stderr)
        let src = Self.alphaRamp(width: 64, height: 48)
        let i = (2 * 64 + 32) * 4, a = Int(src.pixels[i + 3])
        let want = (0..<3).map { (Int(src.pixels[i + $0]) * a + 255 * (255 - a) + 127) / 255 }
        XCTAssertTrue(lines[0].hasPrefix("("), lines[0])
        let got = lines[0].dropFirst().split(separator: ")")[0].split(separator: ",").prefix(4).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(got.count, 4, lines[0])
        XCTAssertEqual(got[3], 255, "a blended pixel is opaque")
        for c in 0..<3 { XCTAssertLessThan(abs(got[c] - want[c]), 24, "channel \(c): \(got) vs \(want) (palette error only)") }
        XCTAssertTrue(lines[0].contains("(0, 0, 0, 0)"), "fully transparent stays transparent: \(lines[0])")
        XCTAssertFalse(lines[1].hasPrefix("(\(got[0]), "), "without --matte the pixel is not blended: \(lines[1])")
        for check in [false, true] {
            let webp = try Tool.run(["s.lua", "-q", "--matte", "white", "-o", "m.webp"] + (check ? ["--check"] : []), cwd: box.url)
            XCTAssertEqual(webp.status, 2)
            XCTAssertEqual(webp.firstError, "wobble-run: --matte applies to GIF output; WebP keeps the alpha channel")
        }
        let mp4 = try Tool.run(["s.lua", "-q", "--matte", "white", "-o", "m.mp4", "--check"], cwd: box.url)
        XCTAssertEqual(mp4.status, 2)
        XCTAssertEqual(mp4.firstError, "wobble-run: --matte applies to GIF output; MP4 is H.264, composited over black (no alpha channel)")
        let badColour = try Tool.run(["s.lua", "--matte", "teal-ish"], cwd: box.url)
        XCTAssertEqual(badColour.status, 2)
        XCTAssertTrue(badColour.firstError.hasPrefix("wobble-run: --matte: 'teal-ish' is not a colour"), badColour.firstError)
    }
}

/// `--preset`: each platform's file meets every limit of its published
/// rules (read back with ffprobe and Pillow); a clip it cannot take fails
/// with the limit named and writes nothing.
final class PresetTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try FileManager.default.copyItem(atPath: PipelineTests.examples.appendingPathComponent("cat/chelsea.png").path,
                                         toPath: box.path("cat.png"))
        for (name, seconds) in [("cat", 1.0), ("long", 4.5)] {
            try box.write("\(name).lua", """
                image("cat.png")
                local a = addSketch{lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286}}
                local b = addSketch{x = 190, y = 10, w = 150, h = 100}
                prepare()
                impulse(a, 1, 0)
                impulse(b, 0, 1)
                wait(\(seconds))
                """)
        }
    }

    override func tearDown() { box = nil }

    /// What Pillow (and ffprobe for WebM) sees in `file`.
    func inspect(_ file: String) throws -> [String: Any] {
        guard let py = FormatsTests.python else { throw XCTSkip("Pillow (python3-pil) is not installed") }
        let script = """
            import json, os, sys
            from PIL import Image
            f = sys.argv[1]
            im = Image.open(f)
            d = []
            n = 0
            while True:
                try:
                    im.seek(n)
                except EOFError:
                    break
                im.load()  # Pillow sets a WebP frame's duration when it decodes it
                d.append(im.info.get("duration") or 0)
                n += 1
            im.seek(0)
            first = im.convert("RGBA")
            print(json.dumps({"format": im.format, "width": im.size[0], "height": im.size[1], "frames": n,
                              "durations": d, "loop": im.info.get("loop"), "bytes": os.path.getsize(f),
                              "corner_alpha": first.getpixel((0, 0))[3]}))
            """
        let r = try Tool.run(["-c", script, file], cwd: box.url, executable: py)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    func preset(_ name: String, scene: String = "cat.lua", _ extra: [String] = []) throws -> (Tool.Result, [String: Any]) {
        let r = try Tool.run([scene, "--backend", "cpu", "-q", "--preset", name, "--json"] + extra, cwd: box.url)
        XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
        let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], r.stdout)
        return (r, j)
    }

    func testTelegramWebMFitsEveryLimit() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        let (_, j) = try preset("telegram")
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        XCTAssertEqual(j["output"] as? String, "cat-telegram.webm")
        let probe = try Tool.run(["-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height,r_frame_rate:format=format_name,duration,size",
                                  "-of", "json", "cat-telegram.webm"], cwd: box.url, executable: "ffprobe")
        let info = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(info["streams"] as? [[String: Any]])
        let format = try XCTUnwrap(info["format"] as? [String: Any])
        XCTAssertEqual(streams.count, 1, "one video stream, no audio")
        XCTAssertEqual(streams[0]["codec_name"] as? String, "vp9")
        XCTAssertTrue((format["format_name"] as? String ?? "").contains("webm"))
        let w = streams[0]["width"] as? Int ?? 0, h = streams[0]["height"] as? Int ?? 0
        XCTAssertEqual(max(w, h), 512, "one side 512")
        XCTAssertLessThanOrEqual(min(w, h), 512)
        XCTAssertEqual(streams[0]["r_frame_rate"] as? String, "30/1")
        XCTAssertLessThanOrEqual(Double(format["duration"] as? String ?? "") ?? 99, 3)
        let bytes = Int(format["size"] as? String ?? "") ?? Int.max
        XCTAssertLessThanOrEqual(bytes, 256 * 1024)
        XCTAssertEqual(p["bytes"] as? Int, bytes)
        XCTAssertEqual(j["bytes"] as? Int, bytes)
        XCTAssertNotNil(p["quality"] as? Int)
        XCTAssertEqual(p["limit"] as? Int, 256 * 1024)
        // Two passes, the quality capped at 95, the bitrate the limit's
        // (256 KB in the clip's 1 s) and a little more.
        XCTAssertEqual(p["rate_control"] as? String, "two-pass")
        XCTAssertEqual(p["quality"] as? Int, 95)
        let bitrate = try XCTUnwrap(p["bitrate"] as? Int)
        XCTAssertTrue((256 * 1024 * 8...256 * 1024 * 8 * 6 / 5).contains(bitrate), "\(bitrate)")
        XCTAssertEqual(p["passes"] as? Int, 2, "pass 1, then pass 2 once")
    }

    /// The tool run with `TMPDIR` (and optionally `PATH`) set, in the
    /// sandbox: status, the `--json` object (nil without one), stderr.
    func run(_ args: [String], tmpdir: String, path: String? = nil) throws -> (Int32, [String: Any]?, String) {
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmpdir
        if let path { env["PATH"] = path }
        let r = try Tool.exec(Tool.executable.path, args, cwd: box.url, env: env)
        let last = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return (r.status, try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], r.stderr)
    }

    /// What is in the folder `name` of the sandbox (hidden entries too).
    func entries(_ name: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: box.path(name)) }

    /// The two-pass file: the same bytes on every run, and pass 1's
    /// statistics (a private folder in TMPDIR) gone afterwards; a relative
    /// TMPDIR whose name has a colon serves too (ffmpeg reads pass 1's
    /// statistics through its URL parser, which took "t:" for a protocol).
    func testTelegramTwoPassIsDeterministicAndLeavesNoStatistics() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: box.path("t:mp"), withIntermediateDirectories: false)
        var files: [Data] = []
        for (name, tmp) in [("a.webm", box.path("tmp")), ("b.webm", "t:mp")] {
            let (status, j, err) = try run(["cat.lua", "--backend", "cpu", "-q", "--preset", "telegram", "--json", "-o", name], tmpdir: tmp)
            XCTAssertEqual(status, 0, err)
            XCTAssertEqual((j?["preset"] as? [String: Any])?["rate_control"] as? String, "two-pass")
            XCTAssertEqual(try entries("tmp"), [], "the statistics and their folder are removed")
            XCTAssertEqual(try entries("t:mp"), [])
            files.append(try Data(contentsOf: box.url.appendingPathComponent(name)))
        }
        XCTAssertGreaterThan(files[0].count, 1000)
        XCTAssertLessThanOrEqual(files[0].count, 256 * 1024)
        XCTAssertEqual(files[0], files[1], "the same scene gives the same bytes")
    }

    /// A still scene is easy: pass 2 stops at the quality cap, far under
    /// the limit (the bitrate does not inflate it to fill the limit).
    func testTelegramStillSceneStopsAtTheQualityCap() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        try box.write("still.lua", """
            image("cat.png")
            prepare()
            wait(3)
            """)
        let (_, j) = try preset("telegram", scene: "still.lua", ["-o", "still.webm"])
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        XCTAssertEqual(p["rate_control"] as? String, "two-pass")
        XCTAssertEqual(p["quality"] as? Int, 95, "the cap")
        XCTAssertEqual(p["frames"] as? Int, 90)
        XCTAssertEqual(p["passes"] as? Int, 2)
        let bytes = try Data(contentsOf: box.url.appendingPathComponent("still.webm")).count
        XCTAssertEqual(p["bytes"] as? Int, bytes)
        XCTAssertLessThan(bytes, 256 * 1024 / 2, "well under the limit: \(bytes)")
        // The bitrate asked would fill the limit: it was not what stopped it.
        let asked = try XCTUnwrap(p["bitrate"] as? Int)
        XCTAssertGreaterThanOrEqual(asked * 3 / 8, 256 * 1024)
        // About a plain render's at quality 95 (a two-pass file is not
        // byte for byte one; without the cap it would be several times it).
        let r = try Tool.run(["still.lua", "--backend", "cpu", "-q", "--width", "512", "--height", "341", "--quality", "95", "-o", "cap.webm"],
                             cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let cap = try Data(contentsOf: box.url.appendingPathComponent("cap.webm")).count
        XCTAssertLessThanOrEqual(bytes, cap * 11 / 10, "\(bytes) against \(cap) at quality 95")
    }

    /// A clip too rich for quality 95 within the limit is held to it: the
    /// file fits, and fills most of it.
    func testTelegramHardClipIsHeldToTheLimit() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        let (_, j) = try preset("telegram", scene: "long.lua", ["--frames", "0-89", "-o", "hard.webm"])
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        XCTAssertEqual(p["rate_control"] as? String, "two-pass")
        let picture = try XCTUnwrap(p["picture"] as? [Int])
        let bytes = try Data(contentsOf: box.url.appendingPathComponent("hard.webm")).count
        XCTAssertLessThanOrEqual(bytes, 256 * 1024)
        XCTAssertGreaterThan(bytes, 256 * 1024 * 7 / 10, "the limit, not the cap, held it")
        // At the cap alone the same frames are over the limit.
        let r = try Tool.run(["long.lua", "--backend", "cpu", "-q", "--frames", "0-89", "--width", "\(picture[0])", "--height", "\(picture[1])",
                              "--fps", "30", "--quality", "95", "-o", "cap.webm"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThan(try Data(contentsOf: box.url.appendingPathComponent("cap.webm")).count, 256 * 1024)
    }

    /// A folder `bin` holding an `ffmpeg` script (`script` given the real
    /// ffmpeg's path), and an empty `tmp` beside it; the folder's path.
    private func fakeFFmpeg(_ script: (String) -> String) throws -> String {
        guard let real = ChildProcess.findExecutable("ffmpeg") else { throw XCTSkip("ffmpeg is not installed") }
        let bin = box.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: false)
        try script(real).write(toFile: bin + "/ffmpeg", atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(bin + "/ffmpeg", 0o755), 0)
        return bin
    }

    /// An ffmpeg that fails in pass 2: the run fails with ffmpeg's line,
    /// writes nothing, and the statistics' folder is gone.
    func testTelegramPassFailureLeavesNoStatistics() throws {
        let bin = try fakeFFmpeg { real in """
            #!/bin/sh
            case "$*" in *"-pass 2"*) cat >/dev/null; echo 'fake ffmpeg: pass 2 fell over' >&2; exit 3;; esac
            exec \(real) "$@"
            """ }
        let (status, _, err) = try run(["cat.lua", "--backend", "cpu", "-q", "--preset", "telegram", "-o", "t.webm"], tmpdir: box.path("tmp"),
                                       path: bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"))
        XCTAssertEqual(status, 1, err)
        let lines = err.split(separator: "\n").map(String.init)
        let first = lines.first ?? ""
        XCTAssertTrue(first.hasPrefix("wobble-run: video 'telegram try at pass 2 at ") && first.hasSuffix(" kbit/s.webm': ffmpeg failed (ffmpeg's exit status 3)"), first)
        XCTAssertEqual(lines.last, "  ffmpeg: fake ffmpeg: pass 2 fell over")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("t.webm")))
        XCTAssertEqual(try entries("tmp"), [])
    }

    /// Pass 1 ends well but its statistics are empty (TMPDIR filled up
    /// under ffmpeg): no pass 2 on them; the quality is searched instead,
    /// `-v` says why, and the file fits.
    func testTelegramWithEmptyStatisticsSearchesTheQuality() throws {
        let bin = try fakeFFmpeg { real in """
            #!/bin/sh
            case "$*" in *"-pass 1"*)
              log=$(printf '%s\\n' "$@" | sed -n '/^-passlogfile$/{n;p;}')
              \(real) "$@"; status=$?
              : > "$log-0.log"
              exit $status;;
            esac
            exec \(real) "$@"
            """ }
        let (status, json, err) = try run(["cat.lua", "--backend", "cpu", "-v", "--json", "--frames", "0-29", "--preset", "telegram", "-o", "t.webm"],
                                          tmpdir: box.path("tmp"), path: bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"))
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(err.split(separator: "\n").contains { $0.hasPrefix("wobble-run: telegram: no two-pass encode (pass 1's statistics in ")
                && $0.hasSuffix(" are empty; is TMPDIR full?): the quality is searched instead") }, err)
        let preset = try XCTUnwrap(json?["preset"] as? [String: Any])
        XCTAssertNil(preset["rate_control"], "a searched quality")
        XCTAssertNotNil(preset["quality"])
        let bytes = try XCTUnwrap(preset["bytes"] as? Int)
        XCTAssertLessThanOrEqual(bytes, 256 * 1024)
        XCTAssertEqual(try Data(contentsOf: box.url.appendingPathComponent("t.webm")).count, bytes)
        XCTAssertEqual(try entries("tmp"), [])
    }

    /// An ffmpeg without libvpx-vp9 would make the sticker VP8, which
    /// Telegram refuses: one line, nothing written (it wrote VP8, exit 0).
    func testTelegramWithoutAVP9EncoderSaysSo() throws {
        let bin = try fakeFFmpeg { real in """
            #!/bin/sh
            for a in "$@"; do [ "$a" = "-encoders" ] && { \(real) "$@" | grep -v -e libvpx-vp9; exit 0; }; done
            for a in "$@"; do [ "$a" = "libvpx-vp9" ] && { echo "Unknown encoder 'libvpx-vp9'" >&2; exit 1; }; done
            exec \(real) "$@"
            """ }
        let (status, _, err) = try run(["cat.lua", "--backend", "cpu", "-q", "--frames", "0-9", "--preset", "telegram", "-o", "t.webm"],
                                       tmpdir: box.path("tmp"), path: bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"))
        XCTAssertEqual(status, 1, err)
        XCTAssertEqual(err.split(separator: "\n").first.map(String.init),
                       "wobble-run: telegram: Telegram video stickers take VP9 only, and the installed ffmpeg has no VP9 encoder (libvpx-vp9): install an ffmpeg built with libvpx")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("t.webm")))
        XCTAssertEqual(try entries("tmp"), [])
    }

    /// SIGINT while pass 1 writes its statistics: status 130, and the
    /// folder holding them is gone.
    func testTelegramInterruptedInPassOneLeavesNoStatistics() throws {
        // Pass 1 writes its statistics file, then hangs (not reading its frames).
        let bin = try fakeFFmpeg { real in """
            #!/bin/sh
            case "$*" in *"-pass 1"*)
              log=$(printf '%s\\n' "$@" | sed -n '/^-passlogfile$/{n;p;}')
              echo stats > "$log-0.log"
              exec sleep 60;;
            esac
            exec \(real) "$@"
            """ }
        let p = Process()
        p.executableURL = Tool.executable
        p.arguments = ["cat.lua", "--backend", "cpu", "-q", "--preset", "telegram", "-o", "t.webm"]
        p.currentDirectoryURL = box.url
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = box.path("tmp")
        env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin")
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        func statistics() -> Bool {
            let folders = (try? entries("tmp")) ?? []
            return folders.contains { ((try? entries("tmp/" + $0)) ?? []).contains("pass-0.log") }
        }
        let deadline = Date().addingTimeInterval(30 * Tool.slowdown)
        while !statistics() && p.isRunning && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(statistics(), "pass 1 never wrote its statistics")
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 130)
        XCTAssertEqual(try entries("tmp"), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("t.webm")))
    }

    /// Where no folder for pass 1's statistics can be made (TMPDIR is not
    /// there), the quality is searched, as for the other formats (`-v` says
    /// so). The file a preset keeps is then, byte for byte, what a plain
    /// render at the size, frame rate and quality it chose writes: the
    /// search's tries are ordinary encodes, whichever way the quality was
    /// found.
    func testThePresetsFileIsThePlainRenderAtTheQualityChosen() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        let (status, json, err) = try run(["long.lua", "--backend", "cpu", "-v", "--preset", "telegram", "--json", "--frames", "0-89", "-o", "kept.webm"],
                                          tmpdir: box.path("missing"))
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(err.contains("wobble-run: telegram: no two-pass encode (the temporary folder '\(box.path("missing"))' cannot be opened: "), err)
        XCTAssertTrue(err.contains("): the quality is searched instead\n"), err)
        let j = try XCTUnwrap(json, err)
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        XCTAssertNil(p["rate_control"], "a searched quality")
        XCTAssertNil(p["bitrate"])
        let q = try XCTUnwrap(p["quality"] as? Int)
        let picture = try XCTUnwrap(p["picture"] as? [Int])
        XCTAssertLessThan(q, 95, "the limit is what chose it")
        let r = try Tool.run(["long.lua", "--backend", "cpu", "-q", "--frames", "0-89", "--width", "\(picture[0])", "--height", "\(picture[1])",
                              "--fps", "30", "--quality", "\(q)", "-o", "plain.webm"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let kept = try Data(contentsOf: box.url.appendingPathComponent("kept.webm"))
        XCTAssertEqual(kept.count, p["bytes"] as? Int)
        XCTAssertLessThanOrEqual(kept.count, 256 * 1024)
        XCTAssertEqual(kept, try Data(contentsOf: box.url.appendingPathComponent("plain.webm")))
    }

    func testWhatsAppWebPFitsEveryLimit() throws {
        let (_, j) = try preset("whatsapp")
        let i = try inspect("cat-whatsapp.webp")
        XCTAssertEqual(i["format"] as? String, "WEBP")
        XCTAssertEqual(i["width"] as? Int, 512)
        XCTAssertEqual(i["height"] as? Int, 512)
        XCTAssertGreaterThan(i["frames"] as? Int ?? 0, 1)
        XCTAssertLessThanOrEqual(i["bytes"] as? Int ?? .max, 500 * 1024)
        let d = try XCTUnwrap(i["durations"] as? [Int])
        XCTAssertGreaterThanOrEqual(d.min() ?? 0, 8, "frames of at least 8 ms")
        XCTAssertLessThanOrEqual(d.reduce(0, +), 10_000)
        XCTAssertEqual(i["corner_alpha"] as? Int, 0, "the square is padded with transparency")
        XCTAssertEqual((j["preset"] as? [String: Any])?["picture"] as? [Int], [512, 341])
    }

    func testDiscordAPNGFitsEveryLimit() throws {
        let (_, j) = try preset("discord")
        let i = try inspect("cat-discord.png")
        XCTAssertEqual(i["format"] as? String, "PNG")
        XCTAssertEqual(i["width"] as? Int, 320)
        XCTAssertEqual(i["height"] as? Int, 320)
        XCTAssertEqual(i["frames"] as? Int, 30, "an APNG, one frame per clip frame")
        XCTAssertLessThanOrEqual(i["bytes"] as? Int ?? .max, 512 * 1024)
        XCTAssertEqual(i["corner_alpha"] as? Int, 0)
        XCTAssertNotNil((j["preset"] as? [String: Any])?["colour_bits"] as? Int)
    }

    func testLINEAPNGFitsEveryLimit() throws {
        let (_, j) = try preset("line")
        let i = try inspect("cat-line.png")
        XCTAssertEqual(i["format"] as? String, "PNG")
        let w = i["width"] as? Int ?? 0, h = i["height"] as? Int ?? 0
        XCTAssertLessThanOrEqual(w, 320)
        XCTAssertLessThanOrEqual(h, 270)
        XCTAssertTrue(w >= 270 || h >= 270, "one side at least 270: \(w)×\(h)")
        let frames = i["frames"] as? Int ?? 0
        XCTAssertTrue((5...20).contains(frames), "\(frames) frames")
        let total = (i["durations"] as? [Double] ?? []).reduce(0, +)
        let plays = i["loop"] as? Int ?? 0
        XCTAssertTrue((1...4).contains(plays), "1 to 4 plays, not \(plays)")
        XCTAssertLessThanOrEqual(total, 4000 + 1e-6)
        XCTAssertLessThanOrEqual(total * Double(plays), 4000 + 1e-6, "all plays within 4 s")
        XCTAssertEqual(total, 1000, accuracy: 1e-6, "the clip's length")
        XCTAssertLessThanOrEqual(i["bytes"] as? Int ?? .max, 300 * 1024)
        XCTAssertEqual((j["preset"] as? [String: Any])?["frames"] as? Int, frames)
        XCTAssertEqual((j["preset"] as? [String: Any])?["plays"] as? Int, plays)
        // The fix the too-long error offers works: --frames is a time window.
        let (_, part) = try preset("line", scene: "long.lua", ["--frames", "0-119", "-o", "part.png"])
        let pi = try inspect("part.png")
        XCTAssertEqual(pi["frames"] as? Int, 20)
        XCTAssertEqual((pi["durations"] as? [Double] ?? []).reduce(0, +), 4000, accuracy: 1e-6)
        XCTAssertEqual(pi["loop"] as? Int, 1, "4 s plays once")
        XCTAssertEqual(part["duration"] as? Double, 4)
    }

    func testSlackGIFFitsEveryLimit() throws {
        let (_, j) = try preset("slack")
        let i = try inspect("cat-slack.gif")
        XCTAssertEqual(i["format"] as? String, "GIF")
        XCTAssertEqual(i["width"] as? Int, 128)
        XCTAssertEqual(i["height"] as? Int, 128)
        XCTAssertEqual(i["frames"] as? Int, 30)
        XCTAssertLessThanOrEqual(i["bytes"] as? Int ?? .max, 128 * 1024)
        XCTAssertEqual(j["width"] as? Int, 128)
        XCTAssertEqual(i["corner_alpha"] as? Int, 0)
    }

    /// A clip the platform cannot take: the limit and the fix in one line,
    /// exit 1, no file (a render and --check alike); bad preset use is exit 2.
    func testAClipThePlatformCannotTakeWritesNothing() throws {
        let cases: [(String, String)] = [
            ("telegram", "wobble-run: telegram: Telegram video stickers last at most 3 s; this clip lasts 4.5 s: end the scene sooner, or take a part with --frames 0-89 (nothing written)"),
            ("line", "wobble-run: line: LINE animated stickers last at most 4 s; this clip lasts 4.5 s: end the scene sooner, or take a part with --frames 0-119 (nothing written)"),
        ]
        for (name, line) in cases {
            for check in [false, true] {
                let r = try Tool.run(["long.lua", "--backend", "cpu", "-q", "--preset", name] + (check ? ["--check"] : []), cwd: box.url)
                XCTAssertEqual(r.status, 1, "\(name): \(r.stderr)")
                XCTAssertEqual(r.firstError, line)
            }
        }
        try box.write("tenlong.lua", "image('cat.png')\naddSketch{x = 10, y = 10, w = 50, h = 50}\nprepare()\nwait(10.5)\n")
        let ten = try Tool.run(["tenlong.lua", "--backend", "cpu", "-q", "--preset", "whatsapp"], cwd: box.url)
        XCTAssertEqual(ten.status, 1)
        XCTAssertEqual(ten.firstError, "wobble-run: whatsapp: WhatsApp animated stickers last at most 10 s; this clip lasts 10.5 s: end the scene sooner, or take a part with --frames 0-299 (nothing written)")
        // Noise that changes everywhere for 3 s cannot become a 128 KB emoji,
        // not at the lowest quality, not at a quarter of the frame rate.
        try box.writeImage("noise.png", OutputTrustTests.noise(width: 128, height: 128))
        try box.write("noise.lua", """
            image("noise.png")
            addSketch{x = 0, y = 0, w = 128, h = 128}
            prepare()
            impulse(1, 1, 0)
            wait(3)
            """)
        let noise = try Tool.run(["noise.lua", "--backend", "cpu", "-q", "--preset", "slack"], cwd: box.url)
        XCTAssertEqual(noise.status, 1)
        // Each lower frame rate is said, and a warning met again is not repeated.
        let warnings = noise.stderr.split(separator: "\n").filter { $0.hasPrefix("wobble-run: warning: ") }
        XCTAssertEqual(warnings.filter { $0.hasPrefix("wobble-run: warning: slack: no file fits the 128 KB at ") }.map { $0.hasSuffix("fewer frames") },
                       [true, true], noise.stderr)
        XCTAssertTrue(warnings.contains { $0.contains("at 30 fps (the smallest ") && $0.hasSuffix("trying 15 fps, fewer frames") }, noise.stderr)
        XCTAssertTrue(warnings.contains { $0.contains("at 15 fps (the smallest ") && $0.hasSuffix("trying 7.5 fps, fewer frames") }, noise.stderr)
        XCTAssertEqual(Set(warnings).count, warnings.count, "no warning twice: \(noise.stderr)")
        XCTAssertTrue(noise.firstError.hasPrefix("wobble-run: slack: even at the lowest quality and 7.5 fps the file is "), noise.firstError)
        XCTAssertTrue(noise.firstError.hasSuffix("more than the 128 KB Slack custom emoji may have; make the clip shorter or its moving regions smaller (nothing written)"), noise.firstError)
        // A search that finds no file reports the size a file would have had:
        // the canvas (128×128), not the picture on it (128×85).
        try box.writeImage("wide.png", OutputTrustTests.noise(width: 192, height: 128))
        try box.write("wide.lua", "image('wide.png')\naddSketch{x = 0, y = 0, w = 192, h = 128}\nprepare()\nimpulse(1, 1, 0)\nwait(6)\n")
        let wide = try Tool.run(["wide.lua", "--backend", "cpu", "-q", "--preset", "slack", "--json"], cwd: box.url)
        XCTAssertEqual(wide.status, 1, wide.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(wide.stdout.utf8)) as? [String: Any], wide.stdout)
        XCTAssertEqual(report["width"] as? Int, 128, wide.stdout)
        XCTAssertEqual(report["height"] as? Int, 128, wide.stdout)
        XCTAssertTrue(report["output"] is NSNull, wide.stdout)
        XCTAssertTrue((report["error"] as? String)?.hasPrefix("slack: even at the lowest quality and 7.5 fps the file is ") == true, wide.stdout)
        try box.write("still.lua", "image('cat.png')\n")
        let still = try Tool.run(["still.lua", "--backend", "cpu", "-q", "--preset", "line"], cwd: box.url)
        XCTAssertEqual(still.status, 1)
        XCTAssertEqual(still.firstError, "wobble-run: line: LINE animated stickers have 5 to 20 frames; this clip is one still frame: let the scene run (wait) for some time (nothing written)")
        let unknown = try Tool.run(["cat.lua", "--preset", "myspace"], cwd: box.url)
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.firstError, "wobble-run: --preset: 'myspace' is not a known platform; use one of telegram, whatsapp, discord, line, slack")
        let size = try Tool.run(["cat.lua", "--preset", "slack", "--width", "64"], cwd: box.url)
        XCTAssertEqual(size.status, 2)
        let format = try Tool.run(["cat.lua", "--preset", "slack", "-o", "x.webp"], cwd: box.url)
        XCTAssertEqual(format.status, 2, format.stderr)
        XCTAssertEqual(box.files(), ["cat.lua", "cat.png", "long.lua", "noise.lua", "noise.png", "still.lua", "tenlong.lua", "wide.lua", "wide.png"],
                       "nothing written")
        XCTAssertEqual(box.leftovers(), [])
    }
}
