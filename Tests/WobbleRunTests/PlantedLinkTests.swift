import Foundation
import XCTest
import WobbleAudio
import WobbleCore
import WobbleMedia
import WobbleSystem
import WobbleTestSupport

/// Every file the command line writes under a name it chose itself (a
/// sound slice beside PNG frames, the default `<scene>.gif`, a preset's
/// `<scene>-telegram.webm`, `cutout`'s `<photo>-mask.png`, `--assemble`'s
/// joined sound, `new`'s scene) goes through one guarded path
/// (`OutputName.madeUp`/`.fresh`): a symbolic link planted under that name
/// is replaced, never written through; a FIFO, device or folder there is
/// refused with one line, never opened. The file outside stays byte for
/// byte what it was.
final class PlantedLinkTests: XCTestCase {
    var box: Sandbox!
    let fm = FileManager.default
    let victimBytes = Data("precious, not to be overwritten\n".utf8)
    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil }

    override func setUpWithError() throws {
        box = try Sandbox()
        try fm.createDirectory(atPath: box.path("scene"), withIntermediateDirectories: true)
        try box.writeImage("scene/img.png", Sandbox.pattern(width: 40, height: 30))
        // A bright disc on the pattern: an object for `cutout` to find.
        var disc = Sandbox.pattern(width: 40, height: 30, checker: 5)
        for y in 0..<30 {
            for x in 0..<40 where (x - 20) * (x - 20) + (y - 15) * (y - 15) <= 64 {
                disc.pixels.replaceSubrange((y * 40 + x) * 4 ..< (y * 40 + x) * 4 + 3, with: [250, 240, 40])
            }
        }
        try box.writeImage("scene/disc.png", disc)
        try victimBytes.write(to: URL(fileURLWithPath: box.path("victim.txt")))
    }

    override func tearDown() { box = nil }

    func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: box.path(name))) }

    func link(_ name: String, to target: String) throws {
        try fm.createSymbolicLink(atPath: box.path(name), withDestinationPath: target)
    }

    func assertVictimIntact(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try bytes("victim.txt"), victimBytes, "\(what): the file outside changed", file: file, line: line)
        XCTAssertEqual(box.leftovers(), [], "\(what)", file: file, line: line)
    }

    func kind(_ name: String) -> FileKind? { Posix.kind(box.path(name), follow: false) }

    /// The critical case: a sandboxed scene with `output("fr/")` and a
    /// soundtrack; `fr/sound_00000.wav` shipped as a link to a file
    /// outside. The outside file became WAV data (exit 0).
    func testASoundSliceReplacesAPlantedLinkAndNeverWritesThroughIt() throws {
        try XCTSkipUnless(hasFFmpeg, "needs ffmpeg")
        let t = DrumSynth.clicks(at: [0.1], duration: 1)
        try Data(WAVFile.encode(t.samples, sampleRate: t.sampleRate)).write(to: URL(fileURLWithPath: box.path("scene/click.wav")))
        try box.write("scene/s.lua", """
            image("img.png")
            output("fr/")
            soundtrack(sound("click.wav"))
            addSketch{x = 8, y = 6, w = 24, h = 18}
            prepare() impulse(1, 1, 0) wait(0.2)
            """)
        try fm.createDirectory(atPath: box.path("scene/fr"), withIntermediateDirectories: true)
        // A link to a file outside, to /dev/zero, to a folder, a dangling
        // one, a loop: each replaced by the WAV.
        for target in ["../../victim.txt", "/dev/zero", "../..", "../../nowhere.wav", "sound_00000.wav"] {
            try? fm.removeItem(atPath: box.path("scene/fr/sound_00000.wav"))
            try link("scene/fr/sound_00000.wav", to: target)
            let r = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 0, "\(target): \(r.stderr)")
            XCTAssertEqual(kind("scene/fr/sound_00000.wav"), .regular, target)
            XCTAssertEqual(try bytes("scene/fr/sound_00000.wav").prefix(4), Data("RIFF".utf8), target)
            XCTAssertTrue(fm.fileExists(atPath: box.path("scene/fr/frame_00000.png")), target)
            try assertVictimIntact(target)
        }
        XCTAssertFalse(fm.fileExists(atPath: box.path("nowhere.wav")), "a dangling link was followed")
        // A FIFO under the slice's name: one line, never opened (no wait), left as it is.
        try fm.removeItem(atPath: box.path("scene/fr/sound_00000.wav"))
        XCTAssertEqual(mkfifo(box.path("scene/fr/sound_00000.wav"), 0o644), 0)
        let f = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(f.status, 1, f.stderr)
        XCTAssertEqual(f.firstError, "wobble-run: sound slice 'fr/sound_00000.wav': is a FIFO, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)")
        XCTAssertEqual(kind("scene/fr/sound_00000.wav"), .fifo)
        // A folder under the slice's name.
        try fm.removeItem(atPath: box.path("scene/fr/sound_00000.wav"))
        try fm.createDirectory(atPath: box.path("scene/fr/sound_00000.wav"), withIntermediateDirectories: false)
        let d = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(d.status, 1, d.stderr)
        XCTAssertEqual(d.firstError, "wobble-run: sound slice 'fr/sound_00000.wav': is a folder, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)")
        try assertVictimIntact("fifo and folder")
    }

    /// The default output (no `-o`, no `output()`): `<scene>.gif` is a name
    /// the engine makes up, so a link planted there is replaced.
    func testTheDefaultOutputNameReplacesAPlantedLink() throws {
        try box.write("scene/s.lua", Sandbox.poke)
        for target in ["../victim.txt", "../nowhere.gif", "/dev/null", ".."] {
            try? fm.removeItem(atPath: box.path("scene/s.gif"))
            try link("scene/s.gif", to: target)
            let r = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 0, "\(target): \(r.stderr)")
            XCTAssertEqual(kind("scene/s.gif"), .regular, target)
            XCTAssertEqual(try bytes("scene/s.gif").prefix(6), Data("GIF89a".utf8), target)
            try assertVictimIntact(target)
        }
        XCTAssertFalse(fm.fileExists(atPath: box.path("nowhere.gif")))
        // A FIFO there: refused at once (the render used to wait for a reader).
        try fm.removeItem(atPath: box.path("scene/s.gif"))
        XCTAssertEqual(mkfifo(box.path("scene/s.gif"), 0o644), 0)
        let f = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(f.status, 1)
        XCTAssertEqual(f.firstError, "wobble-run: output 's.gif': is a FIFO, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)")
        XCTAssertEqual(kind("scene/s.gif"), .fifo)
        let fc = try Tool.run(["s.lua", "--check"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(fc.status, 1, "--check says what the render would")
        XCTAssertEqual(fc.firstError, f.firstError)
        // `-o` names the same link: the user's own choice, followed as documented.
        try fm.removeItem(atPath: box.path("scene/s.gif"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: box.path("scene/real.gif")))
        try link("scene/s.gif", to: "real.gif")
        let o = try Tool.run(["s.lua", "-q", "--backend", "cpu", "-o", "s.gif"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertEqual(kind("scene/s.gif"), .link)
        XCTAssertEqual(try bytes("scene/real.gif").prefix(6), Data("GIF89a".utf8))
        // The default folder of frames (`--format png`): a link there is not entered.
        try fm.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: true)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: box.path("elsewhere/frame_00099.png")))
        try link("scene/s_frames", to: "../elsewhere")
        let p = try Tool.run(["s.lua", "-q", "--backend", "cpu", "--format", "png"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(p.status, 1)
        XCTAssertEqual(p.firstError, "wobble-run: output 's_frames/': a symbolic link; a folder wobble-run names itself is never followed (remove the link, or give -o)")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("elsewhere")), ["frame_00099.png"])
        try assertVictimIntact("-o and frames")
    }

    /// The web page's names (`--format html`'s `<scene>.html`, `--format
    /// web`'s `<scene>_web/` and the four files wobble-run names inside any
    /// web folder): a link at the page is replaced, a link at the made-up
    /// folder is not entered, a link at `index.html` inside a folder the
    /// user named is replaced, never written through (it was: the file
    /// outside became the page, exit 0).
    func testTheWebPagesNamesReplaceOrRefuseAPlantedLink() throws {
        try box.write("scene/s.lua", Sandbox.poke)
        let cwd = box.url.appendingPathComponent("scene")
        try link("scene/s.html", to: "../victim.txt")
        let page = try Tool.run(["s.lua", "-q", "--format", "html"], cwd: cwd)
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertEqual(kind("scene/s.html"), .regular)
        XCTAssertEqual(try bytes("scene/s.html").prefix(15), Data("<!doctype html>".utf8))
        try assertVictimIntact("s.html")

        try fm.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: true)
        try link("scene/s_web", to: "../elsewhere")
        let folder = try Tool.run(["s.lua", "-q", "--format", "web"], cwd: cwd)
        XCTAssertEqual(folder.status, 1)
        XCTAssertEqual(folder.firstError, "wobble-run: output 's_web/': a symbolic link; a folder wobble-run names itself is never followed (remove the link, or give -o)")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("elsewhere")), [])

        try fm.createDirectory(atPath: box.path("scene/site"), withIntermediateDirectories: true)
        try link("scene/site/index.html", to: "../../victim.txt")
        try link("scene/site/scene.json", to: "../../nowhere.json")
        let given = try Tool.run(["s.lua", "-q", "--format", "web", "-o", "site/"], cwd: cwd)
        XCTAssertEqual(given.status, 0, given.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("scene/site")).sorted(),
                       ["index.html", "picture.webp", "scene.json", "wobble-view.js"])
        for name in ["index.html", "scene.json"] { XCTAssertEqual(kind("scene/site/" + name), .regular, name) }
        XCTAssertFalse(fm.fileExists(atPath: box.path("nowhere.json")))
        try assertVictimIntact("site/")
    }

    /// `--preset` without `-o` names its file `<scene>-<preset>.<ext>`: a
    /// link there is replaced.
    func testAPresetsOwnNameReplacesAPlantedLink() throws {
        try box.write("scene/s.lua", Sandbox.poke)
        try link("scene/s-slack.gif", to: "../victim.txt")
        let r = try Tool.run(["s.lua", "-q", "--backend", "cpu", "--preset", "slack"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(kind("scene/s-slack.gif"), .regular)
        XCTAssertEqual(try bytes("scene/s-slack.gif").prefix(6), Data("GIF89a".utf8))
        try assertVictimIntact("preset")
    }

    /// `cutout` without `-o` writes `<photo>-mask.png`, a name it chose.
    func testCutoutsDefaultMaskReplacesAPlantedLink() throws {
        for target in ["../victim.txt", "../nowhere.png"] {
            try? fm.removeItem(atPath: box.path("scene/disc-mask.png"))
            try link("scene/disc-mask.png", to: target)
            let r = try Tool.run(["cutout", "disc.png", "--box", "8,3,24,24"], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 0, "\(target): \(r.stderr)")
            XCTAssertEqual(kind("scene/disc-mask.png"), .regular)
            XCTAssertEqual(try ImageIO.load(path: box.path("scene/disc-mask.png")).width, 40)
            try assertVictimIntact(target)
        }
        XCTAssertFalse(fm.fileExists(atPath: box.path("nowhere.png")))
        // -o through a link is the user's choice (the file it points to is replaced).
        try Data("old".utf8).write(to: URL(fileURLWithPath: box.path("scene/real.png")))
        try link("scene/alias.png", to: "real.png")
        let o = try Tool.run(["cutout", "disc.png", "--box", "8,3,24,24", "-o", "alias.png"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertEqual(kind("scene/alias.png"), .link)
        XCTAssertEqual(try ImageIO.load(path: box.path("scene/real.png")).width, 40)
    }

    /// A photo that is a FIFO: refused at once (it waited forever), as
    /// `new` and `image()` refuse it; `--timeout` bounds the command.
    func testCutoutRefusesAFIFOPhotoAndHasATimeout() throws {
        XCTAssertEqual(mkfifo(box.path("scene/pipe.png"), 0o644), 0)
        let r = try Tool.run(["cutout", "pipe.png", "--box", "1,1,4,4"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: cutout: photo 'pipe.png' is not a regular file (it is a FIFO); cutout reads files only")
        try link("scene/zero.png", to: "/dev/zero")
        let z = try Tool.run(["cutout", "zero.png", "--box", "1,1,4,4"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(z.status, 1)
        XCTAssertEqual(z.firstError, "wobble-run: cutout: photo 'zero.png' is not a regular file (it is a character device); cutout reads files only")
        // --timeout: a photo whose object takes longer to find than allowed.
        try box.writeImage("scene/big.png", Sandbox.pattern(width: 1600, height: 1200, checker: 7))
        let t = try Tool.run(["cutout", "big.png", "--box", "100,100,1400,1000", "--timeout", "0.001"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(t.status, 1, t.stderr)
        XCTAssertEqual(t.firstError, "wobble-run: cutout: not done within 0.001 s (--timeout): nothing written")
        XCTAssertFalse(fm.fileExists(atPath: box.path("scene/big-mask.png")))
        XCTAssertEqual(box.leftovers(), [])
        for bad in ["0", "-1", "nan", "x"] {
            let b = try Tool.run(["cutout", "img.png", "--box", "1,1,4,4", "--timeout", bad], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(b.status, 2, bad)
            XCTAssertEqual(b.firstError, "wobble-run: cutout: --timeout must be a number of seconds above 0 (got '\(bad)')")
        }
        let ok = try Tool.run(["cutout", "disc.png", "--box", "8,3,24,24", "--timeout", "60"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(ok.status, 0, ok.stderr)
    }

    /// `new` over a planted link (dangling, or to a file outside): nothing written there.
    func testNewNeverWritesThroughALink() throws {
        for target in ["../nowhere.lua", "../victim.txt"] {
            try? fm.removeItem(atPath: box.path("scene/s.lua"))
            try link("scene/s.lua", to: target)
            let r = try Tool.run(["new", "img.png", "s.lua"], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 1, target)
            XCTAssertEqual(r.firstError, "wobble-run: new: 's.lua' already exists: nothing written (name another: wobble-run new img.png OTHER.lua)")
            XCTAssertEqual(kind("scene/s.lua"), .link)
            try assertVictimIntact(target)
        }
        XCTAssertFalse(fm.fileExists(atPath: box.path("nowhere.lua")))
    }

    // MARK: --assemble's sound slices

    func renderSlices() throws {
        let t = DrumSynth.clicks(at: [0.1], duration: 1)
        try Data(WAVFile.encode(t.samples, sampleRate: t.sampleRate)).write(to: URL(fileURLWithPath: box.path("scene/click.wav")))
        try box.write("scene/s.lua", """
            image("img.png")
            soundtrack(sound("click.wav"))
            addSketch{x = 8, y = 6, w = 24, h = 18}
            prepare() impulse(1, 1, 0) wait(0.6)
            """)
        // Two slices, as two machines render them: frames 0-14 and 15-.
        for frames in ["0-14", "15-"] {
            let r = try Tool.run(["s.lua", "-q", "--backend", "cpu", "--frames", frames, "-o", "slices/"], cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 0, r.stderr)
        }
    }

    /// A FIFO among the slices hung `--assemble --timeout 2`; a slice
    /// linked to `/dev/zero` was called an "image".
    func testAssembleBoundsEverySliceReadAndNamesASoundSlice() throws {
        try XCTSkipUnless(hasFFmpeg, "needs ffmpeg")
        try renderSlices()
        let dir = box.url.appendingPathComponent("scene")
        try fm.removeItem(atPath: box.path("scene/slices/sound_00015.wav"))
        XCTAssertEqual(mkfifo(box.path("scene/slices/sound_00015.wav"), 0o644), 0)
        let f = try Tool.run(["--assemble", "slices", "-o", "a.mp4", "--timeout", "2", "-q"], cwd: dir)
        XCTAssertEqual(f.status, 1, f.stderr)
        XCTAssertEqual(f.firstError, "wobble-run: sound slice 'slices/sound_00015.wav': not read within 2 s (--timeout)")
        XCTAssertFalse(fm.fileExists(atPath: box.path("scene/a.mp4")))
        try fm.removeItem(atPath: box.path("scene/slices/sound_00015.wav"))
        try link("scene/slices/sound_00015.wav", to: "/dev/zero")
        let z = try Tool.run(["--assemble", "slices", "-o", "a.mp4", "--timeout", "2", "-q"], cwd: dir)
        XCTAssertEqual(z.status, 1, z.stderr)
        XCTAssertEqual(z.firstError, "wobble-run: sound slice 'slices/sound_00015.wav': a character device, not a WAV file")
        try fm.removeItem(atPath: box.path("scene/slices/sound_00015.wav"))
        let again = try Tool.run(["s.lua", "-q", "--backend", "cpu", "--frames", "15-", "-o", "slices/"], cwd: dir)
        XCTAssertEqual(again.status, 0, again.stderr)
        // With both slices whole they join (the joined sound goes to a private
        // folder in TMPDIR, removed afterwards).
        let tmp = box.path("tmp")
        try fm.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let ok = try Tool.exec(Tool.executable.path, ["--assemble", "slices", "-o", "a.mp4", "-q"], cwd: dir,
                               env: ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp]) { $1 })
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(fm.fileExists(atPath: box.path("scene/a.mp4")))
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: tmp), [])
        try assertVictimIntact("assemble")
    }
}
