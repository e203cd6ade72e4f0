import Foundation
import WobbleCore
import WobbleMedia
import WobbleSystem
import XCTest

/// `loop()` end to end: the clip equals a late period of the same kicks
/// repeated (an independent reference: the scene without `loop()`), in
/// both backends, with classic, spring and pinned regions in one scene;
/// slices, `--json`, `--check` and the errors.
final class LoopE2ETests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 80, height: 60))
    }

    static let regions = """
    local a = addSketch{x = 4, y = 4, w = 36, h = 40}
    local b = addSketch{x = 42, y = 6, w = 34, h = 48, motion = "spring", duration = 0.8, pin = "bottom"}
    prepare()
    enableMotion()
    """
    /// One period (1.5 s = 45 frames at 30 fps) of kicks.
    static let period = """
    wait(0.1) impulse(a, 1, 0)
    wait(0.4) impulse(b, 0, 1)
    wait(0.5) impulse(b, 1, 0.5, 0.7) shake(1.5, 0)
    wait(0.5)
    """
    static let loopScene = "image(\"img.png\")\nloop()\n" + regions + "\n" + period + "\n"
    static let referenceScene = "image(\"img.png\")\n" + regions + "\nfor n = 1, 20 do\n" + period + "\nend\nwait(0.1)\n"

    func frame(_ dir: String, _ k: Int) throws -> RGBAImage {
        try ImageIO.load(path: box.path(dir + String(format: "frame_%05d.png", k)))
    }

    func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        PSNR.of(a, b, channels: .rgba)
    }

    func testALoopIsALatePeriodOfItsKicksRepeatedInBothBackends() throws {
        try box.write("loop.lua", LoopE2ETests.loopScene)
        try box.write("ref.lua", LoopE2ETests.referenceScene)
        for backend in ["cpu", "gles"] {
            var r = try Tool.run(["loop.lua", "--backend", backend, "-q", "-o", "loop-\(backend)/"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            // The 20th period of the reference: frames 855 ..< 900, and 900 (frame 0 again).
            r = try Tool.run(["ref.lua", "--backend", backend, "-q", "--frames", "855-900", "-o", "ref-\(backend)/"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("loop-\(backend)/frame_00045.png")), "one period: 45 frames")
            let still = try frame("loop-\(backend)/", 0)
            var moving = 0
            for k in 0 ..< 45 {
                let got = try frame("loop-\(backend)/", k)
                let expected = try frame("ref-\(backend)/", 855 + k)
                let db = psnr(got, expected)
                XCTAssertGreaterThanOrEqual(db, 45, "\(backend) frame \(k): \(db) dB against the reference")
                if got != still { moving += 1 }
            }
            XCTAssertGreaterThan(moving, 40, "\(backend): the loop keeps moving")
            // The frame after the last is frame 0.
            XCTAssertGreaterThanOrEqual(psnr(try frame("loop-\(backend)/", 0), try frame("ref-\(backend)/", 900)), 45)
        }
    }

    func testSlicesJSONAndCheck() throws {
        try box.write("loop.lua", LoopE2ETests.loopScene)
        var r = try Tool.run(["loop.lua", "--backend", "cpu", "-q", "-o", "full/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try Tool.run(["loop.lua", "--backend", "cpu", "-q", "--frames", "10-20", "-o", "slice/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        for k in 10 ... 20 {
            let name = String(format: "frame_%05d.png", k)
            XCTAssertEqual(FileManager.default.contents(atPath: box.path("slice/" + name)),
                           FileManager.default.contents(atPath: box.path("full/" + name)), "frame \(k) of the slice")
        }
        // A GIF of a loop: no "ends while regions still move" warning, "loop": true.
        r = try Tool.run(["loop.lua", "--backend", "cpu", "-q", "--json", "-o", "loop.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        XCTAssertEqual(j["loop"] as? Bool, true)
        XCTAssertEqual(j["still"] as? Bool, false)
        XCTAssertEqual(j["frames"] as? Int, 45)
        XCTAssertEqual(j["warnings"] as? [String], [])
        r = try Tool.run(["loop.lua", "--check", "--json"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\"loop\":true"), r.stdout)
    }

    /// The largest channel difference between two frames, in levels.
    func maxDifference(_ a: RGBAImage, _ b: RGBAImage) -> Int {
        zip(a.pixels, b.pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// A spring that, played from rest, rests in the period's last frame
    /// interval (poked at 0, resting at 0.694 s of a 0.7 s period: what `L`
    /// makes of a clip that ran until its regions rested). Resting set the
    /// swing to 0 there: the loop popped at the seam. Every frame, and the
    /// frame after the last, is within a level of the same kicks played
    /// for seven periods by a spring that never rests (threshold 0): the
    /// sixth period, and the seventh's first frame.
    func testASpringThatWouldRestAtTheSeamFlowsIntoTheNextPeriod() throws {
        let sketch = "addSketch{x = 4, y = 4, w = 72, h = 52, motion = \"spring\", duration = 0.3, damping = 0.3, strength = 0.3"
        try box.write("loop.lua", "image(\"img.png\")\nloop()\nlocal a = \(sketch)}\nprepare()\nimpulse(a, 1, 0)\nwait(0.7)\n")
        try box.write("ref.lua", "image(\"img.png\")\nlocal a = \(sketch), threshold = 0}\nprepare()\n"
                                 + "for n = 1, 7 do\n  impulse(a, 1, 0)\n  wait(0.7)\nend\n")
        var r = try Tool.run(["loop.lua", "--backend", "cpu", "-q", "-o", "loop/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("loop/frame_00021.png")), "one period: 21 frames")
        // The sixth period: frames 105 ..< 126, and 126 (the seventh's first, the frame after the sixth's last).
        r = try Tool.run(["ref.lua", "--backend", "cpu", "-q", "--frames", "105-126", "-o", "ref/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        for k in 0 ..< 21 {
            XCTAssertLessThanOrEqual(maxDifference(try frame("loop/", k), try frame("ref/", 105 + k)), 1, "frame \(k)")
        }
        let next = maxDifference(try frame("loop/", 0), try frame("ref/", 126))
        XCTAssertLessThanOrEqual(next, 1, "the first frame of the next period against the frame after the last")
        // The swing at the seam is still visible: the test would see a rest.
        XCTAssertGreaterThan(maxDifference(try frame("ref/", 126), try ImageIO.load(path: box.path("img.png"))), 1)
    }

    /// A looping scene's Telegram WebM (two passes at the limit's bitrate):
    /// decoded, the step from the last frame to the first is no larger
    /// than the steps between neighbouring frames, and on the pixels the
    /// scene never moves it changes next to nothing. (libvpx coded the
    /// still background again, finer, part way through; the key frame kept
    /// the coarser one: about a level on 64% of those pixels at every seam.)
    func testALoopingWebMHasNoStepAtTheSeam() throws {
        guard ChildProcess.findExecutable("ffmpeg") != nil, VideoSink.hasVP9() == true else { throw XCTSkip("ffmpeg with libvpx-vp9 is needed") }
        try FileManager.default.copyItem(atPath: PipelineTests.examples.appendingPathComponent("cat/chelsea.png").path,
                                         toPath: box.path("cat.png"))
        try box.write("s.lua", """
            image("cat.png")
            loop()
            local a = addSketch{x = 150, y = 80, w = 200, h = 180, motion = "spring", duration = 0.5}
            prepare()
            impulse(a, 1, 0)
            wait(0.6)
            impulse(a, 0, 1, 0.7)
            wait(0.6)
            """)
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--preset", "telegram", "-o", "s.webm"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        try FileManager.default.createDirectory(atPath: box.path("dec"), withIntermediateDirectories: true)
        r = try Tool.run(["-v", "error", "-c:v", "libvpx-vp9", "-i", "s.webm", "-pix_fmt", "rgba", "-start_number", "0", "dec/frame_%05d.png"],
                         cwd: box.url, executable: "ffmpeg")
        XCTAssertEqual(r.status, 0, r.stderr)
        let decoded = try (0 ..< 36).map { try frame("dec/", $0) }
        // The frames at the WebM's size, to find the pixels that never move.
        r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--width", String(decoded[0].width), "--height", String(decoded[0].height),
                          "-o", "src/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let source = try (0 ..< 36).map { try frame("src/", $0) }
        let n = decoded[0].width * decoded[0].height
        let still = (0 ..< n).filter { i in source.allSatisfy { $0.pixels[i * 4 ..< i * 4 + 3] == source[0].pixels[i * 4 ..< i * 4 + 3] } }
        XCTAssertGreaterThan(still.count, n / 2, "most of the picture never moves")
        /// Mean difference (levels, RGB) and the share of the still pixels that differ.
        func step(_ a: RGBAImage, _ b: RGBAImage) -> (mean: Double, still: Double) {
            var sum = 0
            for i in 0 ..< n { for c in 0 ..< 3 { sum += abs(Int(a.pixels[i * 4 + c]) - Int(b.pixels[i * 4 + c])) } }
            let changed = still.filter { i in a.pixels[i * 4 ..< i * 4 + 3] != b.pixels[i * 4 ..< i * 4 + 3] }.count
            return (Double(sum) / Double(3 * n), Double(changed) / Double(still.count))
        }
        let steps = (0 ..< 35).map { step(decoded[$0], decoded[$0 + 1]) }
        let seam = step(decoded[35], decoded[0])
        let largest = steps.map(\.mean).max() ?? 0
        XCTAssertLessThanOrEqual(seam.mean, largest, "last to first against the largest step between neighbours")
        XCTAssertLessThanOrEqual(seam.still, 0.05, "the share of the still pixels that change at the seam (neighbours: \(steps.map(\.still).max() ?? 0))")
    }

    func testLoopErrorsWithTheirLines() throws {
        let cases: [(String, String)] = [
            ("image(\"img.png\")\nwait(0.1)\nloop()\n",
             "e.lua:3: loop: a loop applies to the whole clip: call loop() before the first frame"),
            ("image(\"img.png\")\nloop()\naddSketch()\nwait(0.5)\nprepare()\n",
             "e.lua:5: loop: prepare() at 0.5 s: a looping scene prepares its models at time 0, so that they play for the whole loop"),
            ("image(\"img.png\")\nloop()\naddSketch()\nprepare()\nwait(1)\nreset()\n",
             "e.lua:6: loop: reset() would end the models a loop plays: a looping scene cannot reset"),
            ("image(\"img.png\")\nloop()\naddSketch()\nprepare()\nimpulse(1, 1, 0)\nuntilStill()\n",
             "e.lua:6: loop: untilStill() never returns in a looping scene (its models keep moving): use wait(seconds)"),
            ("image(\"img.png\")\nloop()\naddSketch{x = 4, y = 4, w = 30, h = 30, motion = \"spring\", damping = 0}\nprepare()\nimpulse(1, 1, 0)\nwait(1)\n",
             "wobble-run: loop: model #1 (addSketch at line 3): a spring with damping = 0 never settles into a loop (give it damping > 0)"),
        ]
        for (text, expected) in cases {
            try box.write("e.lua", text)
            for args in [["e.lua", "--check"], ["e.lua", "--backend", "cpu", "-q", "-o", "e.gif"]] {
                let r = try Tool.run(args, cwd: box.url)
                XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
                XCTAssertEqual(r.stderr.split(separator: "\n").first.map(String.init), expected)
            }
        }
    }
}
