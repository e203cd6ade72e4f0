import Foundation
import XCTest
import WobbleCore
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// End-to-end tests of the features for artists and pipelines: overlay,
/// `--frames` slices, `--image`, `--width`, `--loop`, video, quiet pipes,
/// `--watch` and `--assemble`. Tiny images and the CPU backend keep them fast.
final class PolishTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
    }

    let poke = Sandbox.poke

    func run(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let r = try Tool.run(args, cwd: box.url)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        return r
    }

    func png(_ name: String) throws -> RGBAImage { try ImageIO.load(path: box.path(name)) }
    func bytes(_ name: String) throws -> Data { try Data(contentsOf: box.url.appendingPathComponent(name)) }

    func frameFiles(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: box.path(dir))) ?? []).filter { $0.hasPrefix("frame_") }.sorted()
    }

    static func ffmpegInstalled() -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/ffmpeg", X_OK) == 0 }
            && path.split(separator: ":").contains { access("\($0)/ffprobe", X_OK) == 0 }
    }

    // MARK: - Overlay

    /// A mid-grey 64×48 image and one sketch, 0.1 s before and after prepare().
    func writeOverlayScene(luaOverlay: Bool) throws {
        try box.writeImage("grey.png", RGBAImage(width: 64, height: 48,
                                                 pixels: [UInt8](repeating: 128, count: 64 * 48 * 4).enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element }))
        try box.write("ov.lua", """
        image("grey.png")
        \(luaOverlay ? "overlay(true)" : "")
        addSketch{x = 8, y = 8, w = 48, h = 32}
        wait(0.1)
        prepare()
        impulse(1, 1, 0)
        wait(0.1)
        """)
    }

    func assertOverlayDrawn(_ img: RGBAImage, file: StaticString = #filePath, line: UInt = #line) {
        let corner = img.pixel(8, 8), center = img.pixel(32, 24), edge = img.pixel(14, 8), far = img.pixel(2, 2)
        XCTAssertTrue(corner.r > 200 && corner.g < 60 && corner.b < 60, "corner not red: \(corner)", file: file, line: line)
        XCTAssertTrue(center.g > 150 && center.r < 60 && center.b < 60, "center not green: \(center)", file: file, line: line)
        XCTAssertTrue(edge.r < 60 && edge.g < 60 && edge.b < 60, "edge not dark: \(edge)", file: file, line: line)
        // The boundary (mL, LT, mT) at t = 0.5: (14, 12).
        var blue = false
        for j in 11...12 { for i in 13...14 where img.pixel(i, j).b > 180 && img.pixel(i, j).r < 80 { blue = true } }
        XCTAssertTrue(blue, "no blue boundary near (14, 12)", file: file, line: line)
        XCTAssertEqual(far.r, 128, "far pixel changed", file: file, line: line)
    }

    func testOverlayFlagDrawsTheControlLayerBeforePrepare() throws {
        try writeOverlayScene(luaOverlay: false)
        _ = try run(["ov.lua", "--backend", "cpu", "--overlay", "-o", "on/"])
        _ = try run(["ov.lua", "--backend", "cpu", "-o", "off/"])
        XCTAssertEqual(frameFiles("on").count, 6)
        assertOverlayDrawn(try png("on/frame_00000.png"))
        // Without --overlay frame 0 is the still image.
        XCTAssertEqual(try png("off/frame_00000.png"), try png("grey.png"))
        // After prepare() the control layer is empty: the live model is
        // drawn instead, orange on its boundary, labelled; a grid line at x = 50.
        let on = try png("on/frame_00004.png"), off = try png("off/frame_00004.png")
        var orange = false
        for j in 10...13 { for i in 12...15 where on.pixel(i, j).r > 200 && on.pixel(i, j).b < 80 && off.pixel(i, j) != on.pixel(i, j) { orange = true } }
        XCTAssertTrue(orange, "no orange live boundary near (14, 12)")
        XCTAssertGreaterThan(on.pixel(50, 46).r, off.pixel(50, 46).r, "no grid line at x = 50")
        XCTAssertTrue(on.pixel(2, 2) == off.pixel(2, 2), "far pixel changed")
    }

    func testOverlayFromLuaMatchesTheFlag() throws {
        try writeOverlayScene(luaOverlay: true)
        _ = try run(["ov.lua", "--backend", "cpu", "-o", "lua/"])
        assertOverlayDrawn(try png("lua/frame_00000.png"))
        _ = try run(["ov.lua", "--backend", "cpu", "--overlay", "-o", "flag/"])
        for f in frameFiles("lua") {
            XCTAssertEqual(try bytes("lua/" + f), try bytes("flag/" + f), f)
        }
    }

    func testOverlayScalesWithWidth() throws {
        try writeOverlayScene(luaOverlay: true)
        _ = try run(["ov.lua", "--backend", "cpu", "--width", "128", "--frames", "0", "-o", "big/"])
        let img = try png("big/frame_00000.png")
        XCTAssertEqual(img.width, 128)
        XCTAssertEqual(img.height, 96)
        let corner = img.pixel(16, 16), center = img.pixel(64, 48)
        XCTAssertTrue(corner.r > 200 && corner.g < 60, "corner at 2× not red: \(corner)")
        XCTAssertTrue(center.g > 150 && center.r < 60, "center at 2× not green: \(center)")
    }

    // MARK: - Frames, image, size, loop

    func testFrameSlicesEqualTheFullRender() throws {
        try box.write("s.lua", poke)
        _ = try run(["s.lua", "--backend", "cpu", "-o", "full/"])
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "0-3", "-o", "part/"])
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "4-", "-o", "part/"])
        let full = frameFiles("full")
        XCTAssertEqual(full.count, 9)
        XCTAssertEqual(frameFiles("part"), full, "the second slice must keep the first slice's frames")
        for f in full { XCTAssertEqual(try bytes("full/" + f), try bytes("part/" + f), f) }
        // A slice in the middle keeps its timeline index.
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "5-6", "-o", "mid/"])
        XCTAssertEqual(frameFiles("mid"), ["frame_00005.png", "frame_00006.png"])
        XCTAssertEqual(try bytes("mid/frame_00006.png"), try bytes("full/frame_00006.png"))
    }

    func testImageOptionReplacesTheScriptsImage() throws {
        try box.write("s.lua", poke)
        let other = Sandbox.pattern(width: 50, height: 20, transparentColumns: true)
        try box.writeImage("other.png", other)
        _ = try run(["s.lua", "--backend", "cpu", "--image", "other.png", "-o", "o/"])
        let f0 = try png("o/frame_00000.png")
        XCTAssertEqual(f0.width, 50)
        XCTAssertEqual(f0.height, 20)
        XCTAssertEqual(f0, other, "frame 0 is the --image picture")
    }

    func testWidthAndHeightSetThePNGSize() throws {
        try box.write("s.lua", poke)
        _ = try run(["s.lua", "--backend", "cpu", "--width", "20", "-o", "w/"])
        var f = try png("w/frame_00000.png")
        XCTAssertEqual([f.width, f.height], [20, 15])
        _ = try run(["s.lua", "--backend", "cpu", "--height", "60", "-o", "h/"])
        f = try png("h/frame_00008.png")
        XCTAssertEqual([f.width, f.height], [80, 60])
        _ = try run(["s.lua", "--backend", "cpu", "--width", "33", "--height", "7", "-o", "wh/"])
        f = try png("wh/frame_00003.png")
        XCTAssertEqual([f.width, f.height], [33, 7])
    }

    /// The NETSCAPE2.0 loop count, or nil without the extension.
    func loopCount(_ gif: Data) -> Int? {
        let b = [UInt8](gif), tag = Array("NETSCAPE2.0".utf8)
        guard b.count > tag.count + 5 else { return nil }
        for i in 0...(b.count - tag.count - 5) where Array(b[i..<(i + tag.count)]) == tag {
            let j = i + tag.count
            XCTAssertEqual(b[j], 3, "sub-block size")
            XCTAssertEqual(b[j + 1], 1, "sub-block id")
            return Int(b[j + 2]) | Int(b[j + 3]) << 8
        }
        return nil
    }

    func testLoopOptionInTheGIF() throws {
        try box.write("s.lua", poke)
        _ = try run(["s.lua", "--backend", "cpu", "-o", "forever.gif"])
        _ = try run(["s.lua", "--backend", "cpu", "--loop", "3", "-o", "three.gif"])
        _ = try run(["s.lua", "--backend", "cpu", "--loop", "-1", "-o", "once.gif"])
        XCTAssertEqual(loopCount(try bytes("forever.gif")), 0)
        XCTAssertEqual(loopCount(try bytes("three.gif")), 3)
        XCTAssertNil(loopCount(try bytes("once.gif")))
        let bad = try Tool.run(["s.lua", "--loop", "70000", "-o", "x.gif"], cwd: box.url)
        XCTAssertEqual(bad.status, 2)
    }

    // MARK: - Video

    func probe(_ name: String) throws -> [String: String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                       "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "default=noprint_wrappers=1",
                       box.path(name)]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        var facts: [String: String] = [:]
        for l in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let kv = l.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { facts[String(kv[0])] = String(kv[1]) }
        }
        return facts
    }

    func testVideoOutput() throws {
        guard PolishTests.ffmpegInstalled() else {
            throw XCTSkip("ffmpeg/ffprobe not on PATH (Scripts/install-deps.sh --bench installs them)")
        }
        try box.write("s.lua", poke)
        var r = try run(["s.lua", "--backend", "cpu", "-o", "clip.mp4"])
        XCTAssertEqual(r.stderr, "")
        var facts = try probe("clip.mp4")
        XCTAssertEqual(facts["nb_read_frames"], "9")
        XCTAssertEqual([facts["width"], facts["height"]], ["40", "30"])
        r = try run(["s.lua", "--backend", "cpu", "--width", "21", "-o", "clip.webm"])
        facts = try probe("clip.webm")
        XCTAssertEqual(facts["nb_read_frames"], "9")
        XCTAssertEqual(facts["codec_name"], "vp9")
        XCTAssertEqual([facts["width"], facts["height"]], ["21", "16"])
        XCTAssertEqual(box.leftovers(), [])
        // Assembling PNG frames into a video.
        _ = try run(["s.lua", "--backend", "cpu", "-o", "frames/"])
        _ = try run(["--assemble", "frames", "-o", "joined.mp4", "--fps", "10"])
        XCTAssertEqual(try probe("joined.mp4")["nb_read_frames"], "9")
    }

    // MARK: - Quiet pipes

    func testNoProgressWhenStderrIsNotATerminal() throws {
        try box.write("s.lua", poke)
        for out in ["q.gif", "q/"] {
            // (--loop -1: the poke ends mid-wobble, which a looping GIF warns about)
            let r = try run(["s.lua", "--backend", "cpu", "--loop", "-1", "-o", out])
            XCTAssertEqual(r.stderr, "", "stderr is a pipe here: no progress, no summary")
            XCTAssertEqual(r.stdout, "")
        }
    }

    // MARK: - Watch

    /// Waits (polling every 50 ms, at most `seconds`) until `condition` holds.
    func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// Stops a `--watch` with SIGINT (status 130); its stderr.
    func stopWatching(_ p: Process, _ errPipe: Pipe, file: StaticString = #filePath, line: UInt = #line) -> String {
        p.interrupt()   // SIGINT
        XCTAssertTrue(waitFor(5) { !p.isRunning }, "SIGINT did not stop --watch", file: file, line: line)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 130, file: file, line: line)
        return String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func testWatchRendersAgainWhenTheSceneChanges() throws {
        try box.write("s.lua", poke)
        let (p, _, errPipe) = try Tool.start(["s.lua", "--watch", "--backend", "cpu", "-o", "w.gif"], cwd: box.url)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let out = box.path("w.gif")
        XCTAssertTrue(waitFor(30) { FileManager.default.fileExists(atPath: out) }, "no first render")
        let first = try bytes("w.gif")
        usleep(300_000)   // the watcher has taken its baseline
        // Impulse downwards instead of to the right: different frames.
        try box.write("s.lua", poke.replacingOccurrences(of: "impulse(1, 1, 0)", with: "impulse(1, 0, 1)"))
        XCTAssertTrue(waitFor(10) { (try? self.bytes("w.gif")).map { $0 != first } ?? false }, "no render after the change")
        XCTAssertTrue(p.isRunning, "watching goes on")
        // A broken scene: the error is printed, the output stays, watching goes on.
        let second = try bytes("w.gif")
        try box.write("s.lua", "image('img.png')\nimpulse(1, 0, 0)\n")
        usleep(1_500_000)
        XCTAssertTrue(p.isRunning)
        XCTAssertEqual(try bytes("w.gif"), second)
        let err = stopWatching(p, errPipe)
        XCTAssertTrue(err.contains("watching s.lua and "), err)
        XCTAssertTrue(err.contains("s.lua changed"), err)
        XCTAssertTrue(err.contains("s.lua:2:"), "the script error is shown: \(err)")
        XCTAssertEqual(box.leftovers(), [])
    }

    /// `--watch` in a folder whose name is not UTF-8 (byte 0xFF) sees the
    /// scene there and renders again after an edit.
    func testWatchInAFolderWhoseNameIsNotUTF8RendersAgain() throws {
        try box.write("s.lua", poke)
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        func sh(_ script: String) throws -> Tool.Result {
            try Tool.run(["-c", script], cwd: box.url, executable: "/bin/bash")
        }
        XCTAssertEqual(try sh("mkdir $'d\\xff' && cp s.lua img.png $'d\\xff'/").status, 0)
        let tool = Tool.executable.path.replacingOccurrences(of: "'", with: "'\\''")
        let (p, _, errPipe) = try Tool.start(["-c", "cd $'d\\xff' && exec '\(tool)' s.lua --watch --backend cpu -o w.gif"],
                                             cwd: box.url, executable: "/bin/bash")
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        func gif() -> Data? {
            guard let r = try? sh("cat $'d\\xff'/w.gif 2>/dev/null"), r.status == 0, !r.stdoutBytes.isEmpty else { return nil }
            return r.stdoutBytes
        }
        XCTAssertTrue(waitFor(30) { gif() != nil }, "no first render")
        let first = try XCTUnwrap(gif())
        usleep(300_000)   // the watcher has taken its baseline
        let edited = poke.replacingOccurrences(of: "impulse(1, 1, 0)", with: "impulse(1, 0, 1)")
        XCTAssertEqual(try sh("printf '%s' \(q(edited)) > $'d\\xff'/s.lua.new && mv $'d\\xff'/s.lua.new $'d\\xff'/s.lua").status, 0)
        XCTAssertTrue(waitFor(10) { gif().map { $0 != first } ?? false }, "no render after the change")
        XCTAssertTrue(p.isRunning, "watching goes on")
        let err = stopWatching(p, errPipe)
        XCTAssertTrue(err.contains("watching s.lua and 1 file; Ctrl-C stops"), err)
        XCTAssertTrue(err.contains("s.lua changed: rendering again"), err)
        XCTAssertEqual(box.leftovers(), [])
    }

    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    // MARK: - Assemble

    func testAssembleJoinsSlicesIntoTheSameGIF() throws {
        try box.write("s.lua", poke)
        _ = try run(["s.lua", "--backend", "cpu", "-o", "direct.gif"])
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "0-4", "-q", "-o", "slices/"])
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "5-8", "-q", "-o", "slices/"])
        let r = try run(["--assemble", "slices", "-o", "joined.gif"])
        XCTAssertEqual(r.stderr, "")
        // Frame 0 shows nothing moved (the impulse at t = 0 has not
        // displaced anything yet): the same palette, the same bytes.
        XCTAssertEqual(try bytes("joined.gif"), try bytes("direct.gif"))
        _ = try run(["--assemble", "slices", "--loop", "2", "-o", "twice.gif"])
        XCTAssertEqual(loopCount(try bytes("twice.gif")), 2)
    }

    func testAssembleSlicesStartingAnywhereAndGaps() throws {
        try box.write("s.lua", poke)
        _ = try run(["s.lua", "--backend", "cpu", "--frames", "3-8", "-o", "late/"])
        _ = try run(["--assemble", "late", "-o", "late.gif", "--fps", "30"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("late.gif")))
        try FileManager.default.removeItem(atPath: box.path("late/frame_00005.png"))
        var r = try Tool.run(["--assemble", "late", "-o", "gap.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: --assemble 'late': frame 5 is missing (frame_00004.png is followed by frame_00006.png)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("gap.gif")))
        try FileManager.default.createDirectory(atPath: box.path("empty"), withIntermediateDirectories: false)
        r = try Tool.run(["--assemble", "empty", "-o", "e.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: --assemble 'empty': no frame_NNNNN.png files in it")
        r = try Tool.run(["--assemble", "late"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.firstError, "wobble-run: --assemble needs -o OUTPUT (x.gif, x.webp, x.apng, x.mp4, x.webm, x.mov)")
        XCTAssertEqual(box.leftovers(), [])
    }
}
