import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// End-to-end: the built executable on tiny images (CPU backend unless the
/// test is about GLES): frame counts, pixels, bytes, exit codes, error lines.
final class E2ETests: XCTestCase {
    var box: Sandbox!
    let source = Sandbox.pattern(width: 40, height: 30)

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", source)
    }

    let poke = Sandbox.poke

    func testHelpAndVersion() throws {
        let h = try Tool.run(["--help"], cwd: box.url)
        XCTAssertEqual(h.status, 0)
        for opt in ["--output", "--format", "--fps", "--width", "--height", "--image", "--frames", "--overlay", "--backend",
                    "--check", "--seed", "--timeout", "--max-frames", "--allow-io", "--quiet", "--help", "--version"] {
            XCTAssertTrue(h.stdout.contains(opt), "help lacks \(opt)")
        }
        let v = try Tool.run(["--version"], cwd: box.url)
        XCTAssertEqual(v.status, 0)
        XCTAssertTrue(v.stdout.hasPrefix("wobble-run "))
    }

    func testUsageErrorsExitTwo() throws {
        try box.write("s.lua", poke)
        let cases: [([String], String)] = [
            (["s.lua", "--bogus"], "wobble-run: unknown option '--bogus'; see --help"),
            (["s.lua", "--fsp", "3"], "wobble-run: unknown option '--fsp' (did you mean '--fps'?); see --help"),
            (["s.lua", "--frames", "5-3"], "wobble-run: --frames: 5-3: the first frame is after the last"),
            (["s.lua", "--frames", "x"], "wobble-run: --frames: 'x' is not a range A-B of frame numbers (0-based)"),
            (["s.lua", "--fps", "abc"], "wobble-run: --fps: 'abc' is not a number"),
            (["s.lua", "--backend", "vulkan"], "wobble-run: --backend: 'vulkan' is not one of auto, gles, cpu, reference"),
            ([], "wobble-run: no scene given; usage: wobble-run SCENE.lua [options] [-- args...]"),
            (["s.lua", "-o"], "wobble-run: -o needs a value (PATH)"),
        ]
        for (args, line) in cases {
            let r = try Tool.run(args, cwd: box.url)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertEqual(r.firstError, line, "\(args)")
        }
    }

    func testRendersPNGFramesOutsideUnchangedInsideMoved() throws {
        try box.write("s.lua", poke)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "out/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")   // not a terminal: no progress
        let files = try FileManager.default.contentsOfDirectory(atPath: box.path("out")).sorted()
        XCTAssertEqual(files, (0..<9).map { String(format: "frame_%05d.png", $0) })
        let shape = RegionShape(lt: Point(8, 6), rt: Point(32, 6), rb: Point(32, 24), lb: Point(8, 24), center: Point(20, 15))
        var movedFrames = 0
        for (k, f) in files.enumerated() {
            let img = try ImageIO.load(path: box.path("out/\(f)"))
            XCTAssertEqual(img.width, 40)
            XCTAssertEqual(img.height, 30)
            var moved = 0
            for y in 0..<30 {
                for x in 0..<40 {
                    if !shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)) {
                        XCTAssertTrue(img.pixel(x, y) == source.pixel(x, y), "frame \(k) (\(x),\(y)) outside moved")
                    } else if img.pixel(x, y) != source.pixel(x, y) {
                        moved += 1
                    }
                }
            }
            if k == 0 { XCTAssertEqual(moved, 0, "frame 0 is at τ = 0") }
            if moved > 20 { movedFrames += 1 }
        }
        XCTAssertGreaterThanOrEqual(movedFrames, 7)
    }

    func testScriptErrorLines() throws {
        let cases: [(String, String)] = [
            ("image('img.png')\naddSketch()\nprepare()\nimpulse(1, 0, 0)\n", "s.lua:4: impulse: direction must be non-zero"),
            ("image('img.png')\nlocal x = = 3\n", "s.lua:2: unexpected symbol near '='"),
            ("image('img.png')\nerror('boom')\n", "s.lua:2: boom"),
            ("image('img.png')\nlocal t = nil\nprint(t.x)\n", "s.lua:3: attempt to index a nil value (local 't')"),
            ("image('img.png')\nwait(-1)\n", "s.lua:2: wait: seconds must be a finite number >= 0"),
            ("addSketch()\nwait(1)\n", "s.lua:2: wait: no image: call image(path) before the first frame, or pass --image"),
            ("image('nope.png')\n", "s.lua:1: image: image 'nope.png': no such file"),
        ]
        for (script, line) in cases {
            try box.write("s.lua", script)
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "o.gif"], cwd: box.url)
            XCTAssertEqual(r.status, 1, script)
            XCTAssertEqual(r.firstError, line, script)
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("o.gif")))
        }
        // Errors found after the script returned read wobble-run: …
        try box.write("s.lua", "addSketch()\n")
        let r = try Tool.run(["s.lua", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: no image: the scene calls no image(path) and no --image was given")
    }

    func testBadImagesNameTheFile() throws {
        try box.write("s.lua", poke)
        try box.write("text.png", "hello, I am not a picture\n")
        var r = try Tool.run(["s.lua", "--image", "text.png", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: image 'text.png': not a PNG or JPEG file")
        r = try Tool.run(["s.lua", "--image", "missing.jpg", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: image 'missing.jpg': no such file")
        let png = try ImageIO.encodePNG(source)
        _ = FileManager.default.createFile(atPath: box.path("cut.png"), contents: Data(png.prefix(png.count / 2)))
        r = try Tool.run(["s.lua", "--image", "cut.png", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: image 'cut.png': truncated or corrupt PNG"), r.firstError)
    }

    func testCheckWritesNothingAndReportsErrors() throws {
        try box.write("s.lua", poke)
        var r = try Tool.run(["s.lua", "--check", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.firstError, "ok: 9 frames, 0.3 s at 30 fps, 40×30")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("o.gif")))
        try box.write("t.lua", "image('img.png')\nwait(1)\nfps(12)\n")
        r = try Tool.run(["t.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "t.lua:3: fps: cannot change the frame rate (30) once a frame has been recorded")
        r = try Tool.run(["t.lua", "--check", "--fps", "10", "--max-frames", "5"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "t.lua:2: wait: the clip would have 10 frames, more than the limit of 5 (--max-frames)")
    }

    func testDefaultOutputIsSceneNameGIFAndPermissions() throws {
        try box.write("jelly.lua", poke)
        let r = try Tool.run(["jelly.lua", "--backend", "cpu"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let attrs = try FileManager.default.attributesOfItem(atPath: box.path("jelly.gif"))
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o644)
        XCTAssertTrue(box.leftovers().isEmpty)
        // A created folder gets 0755.
        XCTAssertEqual(try Tool.run(["jelly.lua", "--backend", "cpu", "-o", "made/"], cwd: box.url).status, 0)
        let dirAttrs = try FileManager.default.attributesOfItem(atPath: box.path("made"))
        XCTAssertEqual((dirAttrs[.posixPermissions] as? NSNumber)?.intValue, 0o755)
        let fAttrs = try FileManager.default.attributesOfItem(atPath: box.path("made/frame_00000.png"))
        XCTAssertEqual((fAttrs[.posixPermissions] as? NSNumber)?.intValue, 0o644)
    }

    func testOutputFromScriptIsRelativeToTheScript() throws {
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.writeImage("sub/img.png", source)
        try box.write("sub/s.lua", poke + "\noutput('result.gif')\n")
        let r = try Tool.run(["sub/s.lua", "--backend", "cpu"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("sub/result.gif")))
    }

    func testExistingOutputsSurviveFailures() throws {
        try box.write("ok.lua", poke)
        XCTAssertEqual(try Tool.run(["ok.lua", "--backend", "cpu", "-o", "keep.gif"], cwd: box.url).status, 0)
        XCTAssertEqual(try Tool.run(["ok.lua", "--backend", "cpu", "-o", "frames/"], cwd: box.url).status, 0)
        try box.write("frames/notes.txt", "mine")
        let gifBefore = try Data(contentsOf: URL(fileURLWithPath: box.path("keep.gif")))
        let framesBefore = box.snapshot("frames")
        try box.write("bad.lua", poke + "\nerror('late failure')\n")
        try box.write("text.png", "not an image")
        for args in [["bad.lua", "-o", "keep.gif"], ["bad.lua", "-o", "frames/"],
                     ["ok.lua", "--image", "text.png", "-o", "keep.gif"], ["ok.lua", "--image", "text.png", "-o", "frames/"]] {
            let r = try Tool.run(args + ["--backend", "cpu"], cwd: box.url)
            XCTAssertEqual(r.status, 1, "\(args)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("keep.gif"))), gifBefore)
        XCTAssertEqual(box.snapshot("frames"), framesBefore)
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
    }

    func testOutputThatIsTheSceneOrTheImageIsRefused() throws {
        try box.write("s.lua", poke)
        let scene = try Data(contentsOf: URL(fileURLWithPath: box.path("s.lua")))
        let image = try Data(contentsOf: URL(fileURLWithPath: box.path("img.png")))
        var r = try Tool.run(["s.lua", "--backend", "cpu", "--format", "gif", "-o", "s.lua"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.firstError, "wobble-run: output 's.lua' is the scene 's.lua' itself; choose another output")
        try box.write("one.lua", "image('img.png')\n")
        r = try Tool.run(["one.lua", "--backend", "cpu", "-o", "./img.png"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: output './img.png' is the image "), r.firstError)
        try box.write("two.lua", "image('img.png')\noutput('img.png')\n")
        r = try Tool.run(["two.lua", "--backend", "cpu"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: output "), r.firstError)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("s.lua"))), scene)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("img.png"))), image)
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
    }

    func testOutputThroughALinkOrToAPipe() throws {
        try box.write("s.lua", poke)
        // A link to /dev/stdout (here a pipe), as `-o /dev/stdout` is: the GIF
        // goes down the pipe, and the link is not replaced by a file.
        try FileManager.default.createSymbolicLink(atPath: box.path("stdout.gif"), withDestinationPath: "/dev/stdout")
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "stdout.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("GIF89a"), "stdout: \(r.stdout.prefix(20))")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: box.path("stdout.gif")), "/dev/stdout")
        // A link to a file: the file is replaced (atomically), the link stays.
        try box.write("real.gif", "old")
        try FileManager.default.createSymbolicLink(atPath: box.path("link.gif"), withDestinationPath: "real.gif")
        r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "link.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: box.path("link.gif")), "real.gif")
        let gif = try Data(contentsOf: URL(fileURLWithPath: box.path("real.gif")))
        XCTAssertEqual(Array(gif.prefix(6)), Array("GIF89a".utf8))
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
    }

    func testInterruptedRenderLeavesNothingBehind() throws {
        // A long render: 900 frames of 200×150 on the CPU backend.
        try box.writeImage("big.png", Sandbox.pattern(width: 200, height: 150))
        try box.write("long.lua", """
        image("big.png")
        addSketch{x = 10, y = 10, w = 180, h = 130}
        prepare()
        for i = 1, 30 do impulse(1, 1, 0.5) wait(1) end
        """)
        try box.write("ok.lua", poke)
        XCTAssertEqual(try Tool.run(["ok.lua", "--backend", "cpu", "-o", "keep.gif"], cwd: box.url).status, 0)
        XCTAssertEqual(try Tool.run(["ok.lua", "--backend", "cpu", "-o", "frames/"], cwd: box.url).status, 0)
        let gifBefore = try Data(contentsOf: URL(fileURLWithPath: box.path("keep.gif")))
        let framesBefore = box.snapshot("frames")
        // SIGHUP: the terminal or SSH session closed mid-render.
        for (sig, out, code) in [(SIGINT, "keep.gif", Int32(130)), (SIGTERM, "frames/", Int32(143)),
                                 (SIGHUP, "keep.gif", Int32(129))] {
            let (p, _, errPipe) = try Tool.start(["long.lua", "--backend", "cpu", "-o", out], cwd: box.url)
            // Wait until rendering has begun (a temporary output exists), at most 20 s.
            let deadline = Date().addingTimeInterval(20)
            while box.leftovers().isEmpty && Date() < deadline && p.isRunning { usleep(20_000) }
            XCTAssertFalse(box.leftovers().isEmpty, "render never started")
            let sent = Date()
            kill(p.processIdentifier, sig)
            p.waitUntilExit()
            XCTAssertLessThan(Date().timeIntervalSince(sent), 1.5 * Tool.slowdown)
            XCTAssertEqual(p.terminationStatus, code, String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("keep.gif"))), gifBefore)
        XCTAssertEqual(box.snapshot("frames"), framesBefore)
    }

    func testTimeoutStopsRunawayScripts() throws {
        try box.write("loop.lua", "image('img.png')\nwhile true do end\n")
        let start = Date()
        let r = try Tool.run(["loop.lua", "--timeout", "0.5", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        XCTAssertTrue(r.firstError.hasPrefix("loop.lua:2: "), r.firstError)
        XCTAssertTrue(r.firstError.contains("--timeout"), r.firstError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("o.gif")))
    }

    func testMaxFramesRefusedBeforeWritingAnything() throws {
        try box.write("long.lua", "image('img.png')\nwait(100)\n")
        let r = try Tool.run(["long.lua", "--max-frames", "50", "-o", "out/"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "long.lua:2: wait: the clip would have 3000 frames, more than the limit of 50 (--max-frames)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("out")))
    }

    func testSandboxAndAllowIO() throws {
        try box.write("io.lua", "image('img.png')\nlocal f = io.open('written.txt', 'w')\nf:write('hi')\nf:close()\n")
        var r = try Tool.run(["io.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "io.lua:2: attempt to index a nil value (global 'io')")
        try box.write("os.lua", "image('img.png')\nos.execute('touch pwned')\n")
        r = try Tool.run(["os.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "os.lua:2: attempt to call a nil value (field 'execute')")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("pwned")))
        r = try Tool.run(["io.lua", "--check", "--allow-io"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try String(contentsOfFile: box.path("written.txt"), encoding: .utf8), "hi")
    }

    func testSeedMakesOutputReproducible() throws {
        try box.write("r.lua", """
        image("img.png")
        addSketch{x = 4, y = 4, w = 32, h = 22}
        prepare()
        impulse(1, math.random() - 0.5, math.random() - 0.5)
        wait(0.5)
        """)
        for (name, seed) in [("a", "7"), ("b", "7"), ("c", "8")] {
            XCTAssertEqual(try Tool.run(["r.lua", "--backend", "cpu", "--seed", seed, "-o", "\(name).gif"], cwd: box.url).status, 0)
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: box.path("a.gif")))
        XCTAssertEqual(a, try Data(contentsOf: URL(fileURLWithPath: box.path("b.gif"))))
        XCTAssertNotEqual(a, try Data(contentsOf: URL(fileURLWithPath: box.path("c.gif"))))
    }

    func testScriptArgumentsAndFPSOverride() throws {
        try box.write("a.lua", "image('img.png')\nfps(10)\nwait(tonumber(arg[1]))\nassert(arg[2] == 'x y')\n")
        let r = try Tool.run(["a.lua", "--check", "--", "2", "x y"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.firstError, "ok: 20 frames, 2 s at 10 fps, 40×30")
        let r2 = try Tool.run(["a.lua", "--check", "--fps", "25", "--", "2", "x y"], cwd: box.url)
        XCTAssertEqual(r2.firstError, "ok: 50 frames, 2 s at 25 fps, 40×30")
    }

    /// A script that returns at 2.967 s has 90 frames at 30 fps (frame 89
    /// at 2.9667 s is before its end): the clip plays 3 s, and `--check`,
    /// `--json` and a render's summary say 3 (they said 2.967, the time the
    /// script returned).
    func testDurationIsHowLongTheFramesPlay() throws {
        try box.write("d.lua", "image('img.png')\nwait(2.967)\n")
        let r = try Tool.run(["d.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.firstError, "ok: 90 frames, 3 s at 30 fps, 40×30")
        let j = try Tool.run(["d.lua", "--check", "--json"], cwd: box.url)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["frames"] as? Int, 90)
        XCTAssertEqual(json["duration"] as? Double, 3)
        let g = try Tool.run(["d.lua", "-o", "d.gif", "--json"], cwd: box.url)
        let rendered = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(g.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(rendered["duration"] as? Double, 3)
        // The GIF's delays add up to the same 3 s (300 cs).
        var centiseconds = 0
        try GIFReader.frames(path: box.path("d.gif")) { _, delay in centiseconds += delay }
        XCTAssertEqual(centiseconds, 300)
        // A --frames selection plays its own frames: --check, --json and the
        // file agree (they said the whole clip's 3 s).
        let c = try Tool.run(["d.lua", "--check", "--frames", "0-8"], cwd: box.url)
        XCTAssertEqual(c.firstError, "ok: 9 frames, 0.3 s at 30 fps, 40×30")
        let p = try Tool.run(["d.lua", "--frames", "30-59", "-o", "part.gif", "--json"], cwd: box.url)
        XCTAssertEqual(p.status, 0, p.stderr)
        let part = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(p.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(part["frames"] as? Int, 30)
        XCTAssertEqual(part["duration"] as? Double, 1)
        centiseconds = 0
        try GIFReader.frames(path: box.path("part.gif")) { _, delay in centiseconds += delay }
        XCTAssertEqual(centiseconds, 100)
    }

    func testNullFormatAndFrameSelectionErrors() throws {
        try box.write("s.lua", poke)
        var r = try Tool.run(["s.lua", "--backend", "cpu", "--format", "null"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(box.files(), ["img.png", "s.lua"])
        r = try Tool.run(["s.lua", "--backend", "cpu", "--frames", "20-30", "-o", "out/"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: --frames 20-30 selects no frame: the clip has 9 frames (0-8)")
    }
}

extension Sandbox {
    /// Names and bytes of every file in a folder.
    func snapshot(_ dir: String) -> [String: Data] {
        var out: [String: Data] = [:]
        for f in (try? FileManager.default.contentsOfDirectory(atPath: path(dir))) ?? [] {
            out[f] = try? Data(contentsOf: URL(fileURLWithPath: path("\(dir)/\(f)")))
        }
        return out
    }
}

extension E2ETests {
    /// A pathological pattern keeps Lua inside one C call, where the count
    /// hook cannot fire: the watchdog still ends the run.
    func testTimeoutStopsALongLibraryCall() throws {
        try box.write("slow.lua", "image('img.png')\nstring.find(string.rep('a', 40), string.rep('a-', 30) .. 'b')\n")
        let start = Date()
        let r = try Tool.run(["slow.lua", "--timeout", "0.5", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertLessThan(Date().timeIntervalSince(start), 8)
        XCTAssertEqual(r.firstError, "slow.lua: script timed out after 0.5 s (--timeout), inside a library call")
    }
}

extension E2ETests {
    /// Under a terminal (a pseudo-terminal made by util-linux `script`),
    /// progress and the summary line appear on stderr; `-q` silences them.
    func testProgressOnATerminal() throws {
        try box.write("s.lua", poke)
        let cmd = "'\(Tool.executable.path)' s.lua --backend cpu --format null"
        let r = try Tool.runShell("script -qec \"\(cmd)\" /dev/null", cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("frame 9/9"), r.stdout)
        XCTAssertTrue(r.stdout.contains(" fps"), r.stdout)
        XCTAssertTrue(r.stdout.contains("left"), r.stdout)
        XCTAssertTrue(r.stdout.contains("rendered: 9 frames, 40×30, 0.3 s at 30 fps"), r.stdout)
        let q = try Tool.runShell("script -qec \"\(cmd) -q\" /dev/null", cwd: box.url)
        XCTAssertEqual(q.status, 0)
        XCTAssertFalse(q.stdout.contains("frame"), q.stdout)
    }
}

extension Tool {
    /// Runs a shell command line (for `script`, which makes a pseudo-terminal).
    static func runShell(_ line: String, cwd: URL) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line]
        p.currentDirectoryURL = cwd
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: "")
    }
}

extension E2ETests {
    /// Without any EGL display the GLES backend says so, suggests the CPU
    /// backend and writes nothing.
    func testNoEGLDisplaySuggestsCPUBackend() throws {
        try box.write("s.lua", poke)
        let r = try Tool.runShell("WOBBLE_EGL_PLATFORM=default '\(Tool.executable.path)' s.lua --backend gles -o o.gif", cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.hasPrefix("wobble-run: no EGL display available ("), r.stdout)
        XCTAssertTrue(r.stdout.contains("Use --backend cpu to render without EGL"), r.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("o.gif")))
        XCTAssertTrue(box.leftovers().isEmpty)
    }

    /// EGL starts at the first frame that moves: a still (frame 0, before
    /// the kick shows) renders without any EGL display, the same bytes as
    /// the CPU backend, and -v says the GLES backend was not started; a
    /// frame that moves needs the display (above).
    func testAStillNeedsNoEGL() throws {
        try box.write("s.lua", poke)
        let r = try Tool.runShell("WOBBLE_EGL_PLATFORM=default '\(Tool.executable.path)' s.lua --backend gles --frames 0-0 -v -o still.png", cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stdout)
        XCTAssertTrue(r.stdout.contains("wobble-run: GLES backend: not started (no frame moved: the still image needs no shader)\n"), r.stdout)
        let cpu = try Tool.run(["s.lua", "--frames", "0-0", "--backend", "cpu", "-o", "cpu.png"], cwd: box.url)
        XCTAssertEqual(cpu.status, 0, cpu.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("still.png"))),
                       try Data(contentsOf: URL(fileURLWithPath: box.path("cpu.png"))))
        let moving = try Tool.runShell("WOBBLE_EGL_PLATFORM=default '\(Tool.executable.path)' s.lua --backend gles --frames 2-2 -o moving.png", cwd: box.url)
        XCTAssertEqual(moving.status, 1)
        XCTAssertTrue(moving.stdout.hasPrefix("wobble-run: no EGL display available ("), moving.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("moving.png")))
        XCTAssertTrue(box.leftovers().isEmpty)
    }

    /// GLES: -v names the EGL platform and renderer.
    func testVerboseNamesTheRenderer() throws {
        try box.write("s.lua", poke)
        let r = try Tool.run(["s.lua", "--backend", "gles", "-v", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: GLES backend: EGL "), r.firstError)
        XCTAssertTrue(r.stderr.contains("renderer "), r.stderr)
        XCTAssertTrue(r.stderr.contains("wrote o.gif: 9 frames, 40×30"), r.stderr)
    }

    /// The default backend (auto) is GLES on a hardware GPU, else the CPU
    /// path: -v says which and why, --json names it, and --backend forces one.
    func testTheDefaultBackendIsNamed() throws {
        try box.write("s.lua", poke)
        let r = try Tool.run(["s.lua", "-v", "--json", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let cpu = r.firstError == "wobble-run: backend cpu (--backend auto: no hardware GPU, the CPU path is faster than a software GL)"
        let gles = r.firstError == "wobble-run: backend gles (--backend auto: a hardware GPU)"
        XCTAssertTrue(cpu || gles, r.firstError)
        XCTAssertTrue(r.stdout.contains(cpu ? "\"backend\":\"cpu\"" : "\"backend\":\"gles\""), r.stdout)
        for backend in ["cpu", "reference", "gles"] {
            let forced = try Tool.run(["s.lua", "--backend", backend, "--json", "-q", "-o", "\(backend).gif"], cwd: box.url)
            XCTAssertEqual(forced.status, 0, forced.stderr)
            XCTAssertTrue(forced.stdout.contains("\"backend\":\"\(backend)\""), forced.stdout)
        }
        let check = try Tool.run(["s.lua", "--check", "--json"], cwd: box.url)
        XCTAssertTrue(check.stdout.contains("\"backend\":null"), check.stdout)
    }
}

extension E2ETests {
    /// GIF above 50 fps: rendered, with a warning (browsers slow such GIFs down).
    func testWarningAboveFiftyFPSForGIF() throws {
        try box.write("s.lua", poke)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "--fps", "60", "-o", "o.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.firstError, "wobble-run: warning: 60 fps is more than GIF players show (browsers slow GIFs above 50 fps down); consider --fps 25 or 50")
        let png = try Tool.run(["s.lua", "--backend", "cpu", "--fps", "60", "-o", "f/"], cwd: box.url)
        XCTAssertEqual(png.stderr, "")
        // (--loop -1: the poke ends mid-wobble, which a looping GIF warns about)
        let ok = try Tool.run(["s.lua", "--backend", "cpu", "--fps", "50", "--loop", "-1", "-o", "p.gif"], cwd: box.url)
        XCTAssertEqual(ok.stderr, "")
    }
}

extension E2ETests {
    /// An existing folder is PNG frames even when named like a GIF; --format
    /// only decides when the path says nothing, and may not contradict it.
    func testOutputFormatFromPathAndFormatOption() throws {
        try box.write("s.lua", poke)
        try FileManager.default.createDirectory(atPath: box.path("d.gif"), withIntermediateDirectories: false)
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "d.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("d.gif/frame_00008.png")))
        r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "a.gif", "--format", "png"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.firstError, "wobble-run: --format png contradicts the output 'a.gif'; drop one of them")
        r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "plain", "--format", "gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("plain"))).prefix(6), Data("GIF89a".utf8))
        r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "plain2"], cwd: box.url)
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: cannot tell the output format of 'plain2'"), r.firstError)
    }

    /// math.randomseed() without arguments reseeds from --seed, not the clock.
    func testRandomseedWithoutArgumentsStaysReproducible() throws {
        try box.write("r.lua", "image('img.png')\nmath.random(10)\nmath.randomseed()\nprint(math.random(1000000))\n")
        let a = try Tool.run(["r.lua", "--check", "--seed", "5", "-q"], cwd: box.url)
        let b = try Tool.run(["r.lua", "--check", "--seed", "5", "-q"], cwd: box.url)
        let c = try Tool.run(["r.lua", "--check", "--seed", "6", "-q"], cwd: box.url)
        XCTAssertEqual(a.status, 0, a.stdout)
        XCTAssertEqual(a.stdout, b.stdout)
        XCTAssertNotEqual(a.stdout, c.stdout)
    }

    /// An open range starting past the end selects no frame (exit 1), even a huge one.
    func testHugeOpenFrameRange() throws {
        try box.write("s.lua", "image('img.png')\n")
        var r = try Tool.run(["s.lua", "--check", "--frames", "9223372036854775807-"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: --frames 9223372036854775807- selects no frame: the clip has 1 frame (0-0)")
        r = try Tool.run(["s.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.firstError, "ok: 1 frame, 0.033 s at 30 fps, 40×30", "one frame at 30 fps plays 1/30 s")
    }
}

extension E2ETests {
    /// Running out of Lua memory names the script and the limit.
    func testOutOfMemoryNamesTheScript() throws {
        try box.write("m.lua", "image('img.png')\nlocal s = 'x'\nwhile true do s = s .. s end\n")
        let r = try Tool.run(["m.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "m.lua: not enough memory (a script gets at most 1024 MiB of Lua memory)")
    }

    /// A GIF with the overlay keeps the overlay's colours: its palette is
    /// made from the still as the first frame shows it, overlay painted
    /// (made from the photo alone, the blue outline came out grey and the
    /// red dots brown: 26 dB against the PNG frame); and the frames
    /// assembled into a GIF are the same bytes as the direct render.
    func testAGIFWithTheOverlayKeepsItsColoursAndMatchesTheAssembledFrames() throws {
        let scene = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Examples/cat/cat.lua").standardized.path
        let common = [scene, "--backend", "cpu", "--frames", "0-2", "--width", "200", "--overlay", "-q"]
        for (out, extra) in [("o.gif", [String]()), ("f/", [])] {
            let r = try Tool.run(common + extra + ["-o", out], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        var decoded: [RGBAImage] = []
        try GIFReader.frames(path: box.path("o.gif")) { image, _ in decoded.append(image) }
        XCTAssertEqual(decoded.count, 3)
        let first = try ImageIO.load(path: box.path("f/frame_00000.png"))
        let db = PSNR.of(first, try XCTUnwrap(decoded.first), channels: .rgb)
        XCTAssertGreaterThanOrEqual(db, 35, "the overlay's colours in the palette")
        let a = try Tool.run(["--assemble", "f", "-q", "-o", "a.gif"], cwd: box.url)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("a.gif"))),
                       try Data(contentsOf: URL(fileURLWithPath: box.path("o.gif"))))
    }

}
