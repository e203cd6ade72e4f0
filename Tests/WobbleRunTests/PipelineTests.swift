import CGIF
import Foundation
import WobbleCore
import WobbleMedia
import XCTest
import WobbleSystem

/// Pipelines: `--json`, `print()` on stdout, `-o -`, warnings, the frame
/// rate PNG frames record, one output table for render and `--check`.
final class PipelineTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
    }

    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil }

    static var examples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples").standardized
    }

    /// The JSON object on the last line of stdout.
    func json(_ r: Tool.Result, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        return try XCTUnwrap(object, "no JSON object on stdout: \(r.stdout)", file: file, line: line)
    }

    /// The number of images in a GIF (one per frame) and its size.
    func gifFrames(_ data: Data) throws -> (count: Int, width: Int, height: Int) {
        let path = box.path("decoded-\(UUID().uuidString).gif")
        try data.write(to: URL(fileURLWithPath: path))
        var err: Int32 = 0
        guard let gif = DGifOpenFileName(path, &err) else { throw MediaError("DGifOpenFileName: \(err)") }
        defer { DGifCloseFile(gif, &err) }
        guard DGifSlurp(gif) == GIF_OK else { throw MediaError("DGifSlurp: \(gif.pointee.Error)") }
        return (Int(gif.pointee.ImageCount), Int(gif.pointee.SWidth), Int(gif.pointee.SHeight))
    }

    /// ffprobe's count of decoded video frames in `data`, or nil without ffprobe.
    func videoFrames(_ data: Data, ext: String) throws -> Int? {
        guard ChildProcess.findExecutable("ffprobe") != nil else { return nil }
        let name = "probe-\(UUID().uuidString).\(ext)"
        try data.write(to: URL(fileURLWithPath: box.path(name)))
        let probe = try Tool.run(["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                  "stream=nb_read_frames", "-of", "csv=p=0", name], cwd: box.url, executable: "ffprobe")
        return Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    // MARK: - --json

    func testJSONForAGoodAFailingAndAStillScene() throws {
        // Good: a render, with every field.
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--json", "-o", "out.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        var j = try json(r)
        XCTAssertEqual(j["frames"] as? Int, 9)
        XCTAssertEqual(j["fps"] as? Double, 30)
        XCTAssertEqual((j["duration"] as? Double) ?? 0, 0.3, accuracy: 1e-9)
        XCTAssertEqual(j["width"] as? Int, 40)
        XCTAssertEqual(j["height"] as? Int, 30)
        XCTAssertEqual(j["output"] as? String, "out.gif")
        XCTAssertEqual(j["still"] as? Bool, false, "the poke is still moving at 0.3 s")
        XCTAssertNil(j["error"])
        let warnings = try XCTUnwrap(j["warnings"] as? [String])
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings[0].contains("untilStill()"), warnings[0])
        // --check: the same object, output null.
        r = try Tool.run(["s.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        j = try json(r)
        XCTAssertEqual(j["frames"] as? Int, 9)
        XCTAssertTrue(j["output"] is NSNull)

        // A still scene: it comes to rest, no warning.
        try box.write("still.lua", Sandbox.poke + "\nuntilStill()\n")
        r = try Tool.run(["still.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        j = try json(r)
        XCTAssertEqual(j["still"] as? Bool, true)
        XCTAssertEqual((j["warnings"] as? [String])?.count, 0, "\(j)")
        XCTAssertGreaterThan(j["frames"] as? Int ?? 0, 100)

        // Failing: exit 1, the error's first line in "error", what was known.
        try box.write("bad.lua", "image(\"img.png\")\nwait(0.2)\nimpulse(nil, 0, 0)\n")
        r = try Tool.run(["bad.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        j = try json(r)
        XCTAssertEqual(j["error"] as? String, "bad.lua:3: impulse: direction must be non-zero")
        XCTAssertTrue(j["frames"] is NSNull)
        XCTAssertEqual(r.firstError, "bad.lua:3: impulse: direction must be non-zero", "stderr keeps its one line")

        // A usage error: exit 2, JSON too, without the "wobble-run: " prefix.
        r = try Tool.run(["s.lua", "--json", "--fps", "x"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(try json(r)["error"] as? String, "--fps: 'x' is not a number")
        // A render error after the script: the clip's fields are known.
        r = try Tool.run(["s.lua", "--json", "-q", "--backend", "cpu", "-o", "/nonexistent/x.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        j = try json(r)
        XCTAssertEqual(j["frames"] as? Int, 9)
        XCTAssertEqual(j["error"] as? String, "output '/nonexistent/x.gif': folder '/nonexistent' does not exist")
    }

    // MARK: - print()

    func testPrintGoesToStdoutUnlessTheOutputIsStdout() throws {
        try box.write("p.lua", "print('hello', 42)\n" + Sandbox.poke)
        var r = try Tool.run(["p.lua", "--backend", "cpu", "-q", "-o", "out.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "hello\t42\n")
        XCTAssertFalse(r.stderr.contains("hello"), r.stderr)
        // With --json the object follows on its own last line.
        r = try Tool.run(["p.lua", "--check", "--json"], cwd: box.url)
        XCTAssertTrue(r.stdout.hasPrefix("hello\t42\n{"), r.stdout)
        // -o -: the GIF alone on stdout, print on stderr.
        r = try Tool.run(["p.lua", "--backend", "cpu", "-q", "-o", "-"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdoutBytes.prefix(6), Data("GIF89a".utf8))
        XCTAssertTrue(r.stderr.contains("hello\t42\n"), r.stderr)
        XCTAssertEqual(try gifFrames(r.stdoutBytes).count, 9)
        r = try Tool.run(["p.lua", "--backend", "cpu", "-q", "-o", "/dev/stdout"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("hello"), r.stderr)
        XCTAssertEqual(try gifFrames(r.stdoutBytes).count, 9)
    }

    // MARK: - -o - through a pipe

    func testStdoutGIFAndVideoThroughAPipeDecodeToEveryFrame() throws {
        for out in ["-", "/dev/stdout"] {
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", out], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let gif = try gifFrames(r.stdoutBytes)
            XCTAssertEqual(gif.count, 9, out)
            XCTAssertEqual(gif.width, 40)
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("-")), "'-' is stdout, not a file")
        }
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed: the video half needs it") }
        for out in ["-", "/dev/stdout"] {
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", out, "--format", "mp4"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdoutBytes.dropFirst(4).prefix(4), Data("ftyp".utf8))
            if let n = try videoFrames(r.stdoutBytes, ext: "mp4") { XCTAssertEqual(n, 9, out) }
        }
        // Through a shell pipe into another program.
        let r = try Tool.run(["-c", "'\(Tool.executable.path)' s.lua --backend cpu -q -o - --format mp4 | cat > piped.mp4"],
                             cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 0, r.stderr)
        let piped = try Data(contentsOf: URL(fileURLWithPath: box.path("piped.mp4")))
        if let n = try videoFrames(piped, ext: "mp4") { XCTAssertEqual(n, 9) }
    }

    /// A reader that stops early (`| head -c 10`) or a closed stdout: one
    /// clear line, exit 1, no crash.
    func testStdoutThatStopsReadingIsAnErrorNotACrash() throws {
        // A photo (it does not compress to less than a pipe's buffer) and a
        // poke that goes on for 3 s: about 2 MB of GIF.
        try FileManager.default.copyItem(atPath: Self.examples.appendingPathComponent("cat/chelsea.png").path, toPath: box.path("cat.png"))
        try box.write("long.lua", """
            image("cat.png")
            addSketch{x = 8, y = 6, w = 300, h = 200}
            prepare()
            impulse(1, 1, 0)
            wait(3)
            """)
        let exe = Tool.executable.path
        var r = try Tool.run(["-c", "set -o pipefail; '\(exe)' long.lua --backend cpu -q --loop -1 -o - | head -c 10 > /dev/null"],
                             cwd: box.url, executable: "/bin/bash")
        XCTAssertEqual(r.status, 1, "exit 1 when the reader goes away, not death by SIGPIPE (141): \(r.stderr)")
        XCTAssertEqual(r.stderr, "wobble-run: write '-': Broken pipe\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("-")))
        r = try Tool.run(["-c", "'\(exe)' s.lua --backend cpu -q --loop -1 -o - >&-"], cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: output '-': standard output is closed\n")
        // --json with stdout closed: the error still on stderr, exit 1.
        r = try Tool.run(["-c", "'\(exe)' s.lua --check --json >&-"], cwd: box.url, executable: "/bin/sh")
        XCTAssertLessThan(r.status, 128, r.stderr)
    }

    // MARK: - One output table

    func testCheckRefusesAnOutputExactlyAsTheRenderDoes() throws {
        let cases: [([String], Int32, String)] = [
            (["-o", "x.jpg"], 2, "wobble-run: cannot tell the output format of 'x.jpg': use x.gif, x.webp, x.apng, a folder/ or a pattern like out_%04d.png for PNG frames, x.mp4, x.webm, x.mov, x.mkv, x.html (a live web page), '-' (stdout), or --format"),
            (["-o", "/nonexistent/x.gif"], 1, "wobble-run: output '/nonexistent/x.gif': folder '/nonexistent' does not exist"),
            (["-o", "x.webm", "--format", "mp4"], 2, "wobble-run: --format mp4 contradicts the output 'x.webm'; drop one of them"),
            (["-o", "-", "--format", "png"], 2, "wobble-run: PNG frames cannot go to stdout ('-o -'); write them to a folder (frames/) or a pattern (out_%04d.png)"),
            (["-o", "one.png"], 2, "wobble-run: output 'one.png': the clip has 9 frames; write PNG frames to a folder ('one/') or a pattern ('one_%04d.png'), or make one animated PNG (--format apng)"),
        ]
        for (args, status, line) in cases {
            let render = try Tool.run(["s.lua", "--backend", "cpu", "-q"] + args, cwd: box.url)
            let check = try Tool.run(["s.lua", "--check", "-q"] + args, cwd: box.url)
            XCTAssertEqual(render.status, status, "render \(args): \(render.stderr)")
            XCTAssertEqual(check.status, status, "--check \(args): \(check.stderr)")
            XCTAssertEqual(check.firstError, render.firstError, "\(args)")
            if !line.isEmpty { XCTAssertEqual(check.firstError, line) }
        }
        XCTAssertFalse(box.files().contains { $0.hasPrefix("x.") || $0 == "one.png" }, "\(box.files())")
    }

    // MARK: - Warnings

    func testEachWarning() throws {
        func warnings(_ scene: String, _ extra: [String] = ["--check"]) throws -> [String] {
            try box.write("w.lua", scene)
            let r = try Tool.run(["w.lua", "--json"] + extra, cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let list = try json(r)["warnings"] as? [String] ?? []
            // Each is on stderr too, one line each.
            for w in list { XCTAssertTrue(r.stderr.contains("wobble-run: warning: \(w)\n"), r.stderr) }
            return list
        }
        var w = try warnings("""
            image("img.png")
            addSketch{x = 8, y = 6, w = 10, h = 10}
            prepare()
            touch(35, 25, 30, 20)
            impulse(1, 1, 0)
            untilStill()
            """)
        XCTAssertEqual(w, ["w.lua:4: touch at (35, 25) hits nothing: no live region contains the start point"])
        w = try warnings("""
            image("img.png")
            addSketch{x = 8, y = 6, w = 10, h = 10}
            touch(10, 10, 12, 12)
            wait(1)
            """)
        XCTAssertEqual(w, ["w.lua:3: touch at (10, 10) hits nothing: there is no live region (prepare() first)",
                           "1 sketch was never prepared: call prepare() to make it wobble",
                           "nothing moves in the clip's 30 frames"])
        // Every region deleted (as the studio's Delete leaves a scene): prepare() ran, with nothing to make live.
        w = try warnings("""
            image("img.png")
            prepare()
            touch(10, 10, 12, 12)
            wait(1)
            """)
        XCTAssertEqual(w, ["w.lua:3: touch at (10, 10) hits nothing: the scene has no region (prepare() found no sketch to make live)",
                           "nothing moves in the clip's 30 frames"])
        w = try warnings("""
            image("img.png")
            addSketch{x = 400, y = 300, w = 100, h = 100}
            prepare()
            impulse(1, 1, 0)
            untilStill()
            """)
        XCTAssertEqual(w, ["a region lies outside the 40×30 image (the first: corners (400, 300) (500, 300) (500, 400) (400, 400), center (450, 350)); geometry is in source-image pixels"])
        w = try warnings("""
            image("img.png")
            addSketch{x = 8, y = 6, w = 10, h = 10}
            prepare()
            wait(1)
            """)
        XCTAssertEqual(w, ["nothing moves in the clip's 30 frames (no impulse, touch or shake reached a region)"])
        // Mid-wobble: only for a looping GIF.
        w = try warnings(Sandbox.poke, ["--check"])
        XCTAssertEqual(w, ["the GIF loops but ends while regions still move (it jumps when it starts over); end the scene with untilStill(), or pass --loop -1"])
        XCTAssertEqual(try warnings(Sandbox.poke, ["--check", "--loop", "-1"]), [])
        XCTAssertEqual(try warnings(Sandbox.poke, ["--check", "-o", "frames/"]), [])
        // A region that reaches past an edge on purpose is no mistake.
        XCTAssertEqual(try warnings("""
            image("img.png")
            addSketch{lt = {-10, -5}, rt = {50, -5}, rb = {50, 35}, lb = {-10, 35}}
            prepare()
            impulse(1, 1, 0)
            untilStill()
            """), [])
    }

    func testTheGalleryRendersWithNoWarning() throws {
        let dir = Self.examples
        let scenes = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().flatMap { folder -> [String] in
            let sub = dir.appendingPathComponent(folder)
            return ((try? FileManager.default.contentsOfDirectory(atPath: sub.path)) ?? [])
                .filter { $0.hasSuffix(".lua") }.map { sub.appendingPathComponent($0).path }
        }
        XCTAssertGreaterThanOrEqual(scenes.count, 6)
        for scene in scenes {
            let r = try Tool.run([scene, "--check", "--json"], cwd: box.url)
            XCTAssertEqual(r.status, 0, "\(scene): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("warning"), "\(scene): \(r.stderr)")
            let j = try json(r)
            XCTAssertEqual((j["warnings"] as? [String])?.count, 0, "\(scene)")
            // Seamless: it ends at rest, or it is one period of a loop().
            let still = j["still"] as? Bool, loop = j["loop"] as? Bool
            XCTAssertTrue(still == true || loop == true, "\(scene) loops seamlessly only if it ends at rest or uses loop()")
            XCTAssertNotEqual(still, loop, "\(scene): a loop() keeps moving")
        }
    }

    // MARK: - Frame rate in PNG frames; --max-frames

    func testAssembleUsesTheFrameRateThePNGFramesRecord() throws {
        // 8 s at 25 fps: 200 frames.
        try box.write("c.lua", """
            image("img.png")
            fps(25)
            addSketch{x = 8, y = 6, w = 24, h = 18}
            prepare()
            impulse(1, 1, 0)
            wait(8)
            """)
        var r = try Tool.run(["c.lua", "--backend", "cpu", "-q", "--width", "8", "-o", "frames/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let first = try XCTUnwrap(FileHandle(forReadingAtPath: box.path("frames/frame_00000.png"))?.readToEnd())
        XCTAssertEqual(PNGFrameRate.read(bytes: [UInt8](first)), 25)
        XCTAssertEqual(try ImageIO.load(path: box.path("frames/frame_00199.png")).width, 8, "a tEXt chunk leaves the PNG readable")
        r = try Tool.run(["--assemble", "frames", "-q", "--json", "-o", "out.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let j = try json(r)
        XCTAssertEqual(j["fps"] as? Double, 25)
        XCTAssertEqual(j["frames"] as? Int, 200)
        XCTAssertEqual((j["duration"] as? Double) ?? 0, 8, accuracy: 1e-9)
        // The GIF plays 8 s: its delays add up to 800 cs.
        let gif = box.path("out.gif")
        var err: Int32 = 0
        let g = try XCTUnwrap(DGifOpenFileName(gif, &err))
        defer { DGifCloseFile(g, &err) }
        XCTAssertEqual(DGifSlurp(g), GIF_OK)
        var total = 0
        for n in 0..<Int(g.pointee.ImageCount) {
            let image = g.pointee.SavedImages[n]
            for e in 0..<Int(image.ExtensionBlockCount) where image.ExtensionBlocks[e].Function == GRAPHICS_EXT_FUNC_CODE {
                let b = image.ExtensionBlocks[e].Bytes!
                total += Int(b[1]) | Int(b[2]) << 8
            }
        }
        XCTAssertEqual(total, 800)
        // --fps still wins.
        r = try Tool.run(["--assemble", "frames", "-q", "--json", "--fps", "50", "--check"], cwd: box.url)
        XCTAssertEqual(try json(r)["duration"] as? Double, 4)
    }

    /// `--assemble --check` prints the `ok:` line a scene's `--check` does
    /// (it printed nothing), the frame rate in its short form.
    func testAssembleCheckPrintsTheOkLine() throws {
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--width", "8", "-o", "frames/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try Tool.run(["--assemble", "frames", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "ok: 9 frames, 0.3 s at 30 fps, 8×6\n")
        r = try Tool.run(["--assemble", "frames", "--fps", "0.33333333", "--frames", "0-0", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "ok: 1 frame, 3 s at 0.333 fps, 8×6\n")
        r = try Tool.run(["--assemble", "frames", "--check", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "", "-q: no line")
    }

    func testMaxFramesCountsTheFramesWritten() throws {
        try box.write("long.lua", Sandbox.poke + "\nwait(4.7)\n")   // 150 frames
        var r = try Tool.run(["long.lua", "--backend", "cpu", "-q", "--frames", "0-9", "--max-frames", "10", "-o", "f/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("f")).count, 10)
        r = try Tool.run(["long.lua", "--backend", "cpu", "-q", "--frames", "0-10", "--max-frames", "10", "-o", "g/"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: --frames 0-10 selects 11 frames, more than --max-frames 10")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("g")))
        r = try Tool.run(["long.lua", "--check", "--max-frames", "10"], cwd: box.url)
        XCTAssertEqual(r.status, 1, "a whole render still counts every frame")
    }

    // MARK: - --quality

    func testQualityTradesBytesForFidelity() throws {
        try box.writeImage("big.png", Sandbox.pattern(width: 160, height: 120))
        try box.write("q.lua", """
            image("big.png")
            addSketch{x = 20, y = 20, w = 120, h = 80, strength = 0.2}
            prepare()
            impulse(1, 1, 0.3)
            wait(1)
            """)
        var sizes: [Int] = []
        for q in ["10", "75", "100"] {
            let r = try Tool.run(["q.lua", "--backend", "cpu", "-q", "--quality", q, "-o", "q\(q).gif"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            sizes.append(try Data(contentsOf: URL(fileURLWithPath: box.path("q\(q).gif"))).count)
        }
        XCTAssertLessThan(sizes[0], sizes[1], "\(sizes)")
        XCTAssertLessThan(sizes[1], sizes[2], "\(sizes)")
        // Without --quality: the defaults, the same bytes as 75.
        let r = try Tool.run(["q.lua", "--backend", "cpu", "-q", "-o", "qd.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("qd.gif"))),
                       try Data(contentsOf: URL(fileURLWithPath: box.path("q75.gif"))))
        // Video: --quality is the CRF.
        if hasFFmpeg {
            var video: [Int] = []
            for q in ["10", "90"] {
                let v = try Tool.run(["q.lua", "--backend", "cpu", "-q", "--quality", q, "-o", "q\(q).mp4"], cwd: box.url)
                XCTAssertEqual(v.status, 0, v.stderr)
                video.append(try Data(contentsOf: URL(fileURLWithPath: box.path("q\(q).mp4"))).count)
            }
            XCTAssertLessThan(video[0], video[1], "\(video)")
        }
        let bad = try Tool.run(["q.lua", "--quality", "0"], cwd: box.url)
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.firstError, "wobble-run: --quality: 0 is out of range (1...100)")
    }
}
