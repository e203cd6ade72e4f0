import Foundation
import XCTest
import WobbleAudio
import WobbleCore
import WobbleMedia
import WobbleSystem
import WobbleTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 40 ("Trust, round 5"): a commit journal planted in a stale
/// temporary folder, the sound slice beside PNG frames committed with the
/// frames, `--assemble`'s inputs and outputs, a folder at a default name.
final class TrustRoundSixTests: XCTestCase {
    var box: Sandbox!
    let fm = FileManager.default
    let victimBytes = Data("ORIGINAL SECRET\n".utf8)

    override func setUpWithError() throws {
        box = try Sandbox()
        try fm.createDirectory(atPath: box.path("scene"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: true)
        try box.writeImage("scene/img.png", Sandbox.pattern(width: 64, height: 48))
        try box.write("scene/s.lua", Sandbox.poke)
        try victimBytes.write(to: URL(fileURLWithPath: box.path("elsewhere/victim")))
    }

    override func tearDown() { box = nil }

    var scene: URL { box.url.appendingPathComponent("scene") }
    func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: box.path(name))) }
    func hex(_ s: String) -> String { s.utf8.map { String(format: "%02x", $0) }.joined() }

    /// A temporary folder's name of a process of this machine that no
    /// longer runs: the next render takes it for a killed run's leftover.
    func deadRunsTemporaryName(_ n: Int) -> String {
        let mine = TemporaryName.make()   // .wobble-tmp-<machine>-<pid>-<start>-<n>
        let machine = mine.split(separator: "-")[2]
        var pid: Int32 = 99_990
        while kill(pid, 0) == 0 || errno != ESRCH { pid += 1 }
        return ".wobble-tmp-\(machine)-\(pid)-5f22b-\(n)"
    }

    /// C1: a `.journal` planted in a stale temporary folder whose lines
    /// name `d/victim` (through a planted link `fr/d -> elsewhere`) or
    /// `../../elsewhere/victim` was "recovered": the file outside was
    /// replaced by the attacker's (exit 0). Now the journal is refused,
    /// never acted on, with one warning line each, and the render goes on.
    func testAPlantedJournalNeverRenamesAFileOutsideTheFolder() throws {
        try fm.createDirectory(atPath: box.path("scene/fr"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: box.path("scene/fr/d"), withDestinationPath: box.path("elsewhere"))
        let inode = try XCTUnwrap(Posix.linkStatus(box.path("elsewhere/victim"))).st_ino
        let names = ["d/victim", "../../elsewhere/victim"]
        var temps: [String] = []
        for (i, name) in names.enumerated() {
            let t = "scene/fr/" + deadRunsTemporaryName(i + 1)
            temps.append(t)
            try fm.createDirectory(atPath: box.path(t), withIntermediateDirectories: true)
            // (Folders the old file could be moved aside into, as the report's repro made.)
            try fm.createDirectory(atPath: box.path(t + "/d"), withIntermediateDirectories: true)
            try fm.createDirectory(atPath: box.path("scene/elsewhere"), withIntermediateDirectories: true)
            try "ATTACKER DATA\n".write(toFile: box.path(t + "/.old-1"), atomically: false, encoding: .utf8)
            try "wobble-commit 1\nT \nR \(inode) \(hex(name)) \(hex(".old-1"))\n"
                .write(toFile: box.path(t + "/.journal"), atomically: false, encoding: .utf8)
        }
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "fr/"], cwd: scene)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try bytes("elsewhere/victim"), victimBytes, "the file outside was replaced")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("elsewhere")), ["victim"])
        let lines = r.stderr.split(separator: "\n").map(String.init).sorted()
        XCTAssertEqual(lines, temps.sorted().map {
            "wobble-run: warning: 'fr/\($0.dropFirst("scene/fr/".count))/.journal' was left alone: it is not a commit journal wobble-run wrote (a line names something other than a plain name in its folder); remove the folder if nothing of yours is in it"
        })
        // Left as they were; the frames were written.
        for t in temps { XCTAssertEqual(try String(contentsOfFile: box.path(t + "/.old-1"), encoding: .utf8), "ATTACKER DATA\n") }
        XCTAssertTrue(fm.fileExists(atPath: box.path("scene/fr/frame_00008.png")))
    }

    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil }

    /// A scene writing PNG frames into `fr/` with a soundtrack: 6 frames at 10 fps.
    func writeSoundScene() throws {
        let t = DrumSynth.clicks(at: [0.1], duration: 1)
        try Data(WAVFile.encode(t.samples, sampleRate: t.sampleRate)).write(to: URL(fileURLWithPath: box.path("scene/x.wav")))
        try box.write("scene/snd.lua", """
            image("img.png")
            fps(10)
            output("fr/")
            soundtrack(sound("x.wav"))
            addSketch{x = 16, y = 12, w = 32, h = 24}
            prepare() impulse(1, 1, 0.3) wait(0.6)
            """)
    }

    func folderBytes(_ dir: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for n in try fm.contentsOfDirectory(atPath: box.path(dir)) where Posix.kind(box.path(dir + "/" + n), follow: false) == .regular {
            out[n] = try bytes(dir + "/" + n)
        }
        return out
    }

    /// M1: the sound slice was written after the frames were committed, so
    /// a FIFO or a folder at its name failed the run (exit 1) with the old
    /// frames already replaced. The slice is now committed with the frames:
    /// refused before anything changes, the folder as it was.
    func testARefusedSoundSliceLeavesTheOldFramesAsTheyWere() throws {
        try XCTSkipUnless(hasFFmpeg, "needs ffmpeg")
        try writeSoundScene()
        // The old frames: another picture.
        try box.writeImage("scene/img.png", Sandbox.pattern(width: 64, height: 48, checker: 7))
        let first = try Tool.run(["snd.lua", "-q", "--backend", "cpu"], cwd: scene)
        XCTAssertEqual(first.status, 0, first.stderr)
        try fm.removeItem(atPath: box.path("scene/fr/sound_00000.wav"))
        let before = try folderBytes("scene/fr")
        XCTAssertEqual(before.count, 6)
        try box.writeImage("scene/img.png", Sandbox.pattern(width: 64, height: 48))
        for kind in ["FIFO", "folder"] {
            if kind == "FIFO" {
                XCTAssertEqual(mkfifo(box.path("scene/fr/sound_00000.wav"), 0o644), 0)
            } else {
                try fm.createDirectory(atPath: box.path("scene/fr/sound_00000.wav"), withIntermediateDirectories: false)
            }
            let r = try Tool.run(["snd.lua", "-q", "--backend", "cpu"], cwd: scene)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertEqual(r.stderr, "wobble-run: sound slice 'fr/sound_00000.wav': is a \(kind), not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)\n")
            XCTAssertEqual(try folderBytes("scene/fr"), before, "\(kind): the old frames were replaced")
            XCTAssertEqual(box.leftovers(), [])
            try fm.removeItem(atPath: box.path("scene/fr/sound_00000.wav"))
        }
        // Whole: new frames and their slice together; an older slice goes with the older frames.
        try Data("old".utf8).write(to: URL(fileURLWithPath: box.path("scene/fr/sound_00003.wav")))
        let ok = try Tool.run(["snd.lua", "-q", "--backend", "cpu"], cwd: scene)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertNotEqual(try bytes("scene/fr/frame_00000.png"), before["frame_00000.png"])
        XCTAssertEqual(try bytes("scene/fr/sound_00000.wav").prefix(4), Data("RIFF".utf8))
        // 0.6 s at 48 kHz, 16-bit stereo, after the 44-byte header.
        XCTAssertEqual(try bytes("scene/fr/sound_00000.wav").count, 44 + 28_800 * 4)
        XCTAssertFalse(fm.fileExists(atPath: box.path("scene/fr/sound_00003.wav")))
    }

    /// M1 (`--assemble`): the last slice was accepted when it held more
    /// samples than its frames (another run's sound); every slice must
    /// hold exactly its frames' samples, the last one up to the folder's
    /// last frame.
    func testAssembleChecksTheLastSlicesLength() throws {
        try XCTSkipUnless(hasFFmpeg, "needs ffmpeg")
        try writeSoundScene()
        XCTAssertEqual(try Tool.run(["snd.lua", "-q", "--backend", "cpu"], cwd: scene).status, 0)
        let good = try bytes("scene/fr/sound_00000.wav")
        // --frames keeps fewer frames: the whole slice is still right.
        let cut = try Tool.run(["--assemble", "fr", "--frames", "0-3", "-o", "a.mp4", "-q"], cwd: scene)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        // A slice of 1.2 s beside 6 frames at 10 fps.
        let pcm = [UInt8](good.dropFirst(44))
        try Data(AudioSlice.wav(pcm: pcm + pcm)).write(to: URL(fileURLWithPath: box.path("scene/fr/sound_00000.wav")))
        let r = try Tool.run(["--assemble", "fr", "-o", "b.mp4", "-q"], cwd: scene)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.firstError, "wobble-run: --assemble 'fr': 'sound_00000.wav' holds 57600 samples, not the 28800 of frames 0-5 at 10 fps (render that slice again, at this frame rate)")
        XCTAssertFalse(fm.fileExists(atPath: box.path("scene/b.mp4")))
    }

    /// M4: `--assemble` wrote its output over one of its inputs (a sound
    /// slice, a frame through a link), exit 0. Refused as a render is.
    func testAssembleNeverReplacesItsInputs() throws {
        let r0 = try Tool.run(["s.lua", "-q", "--backend", "cpu", "-o", "fr/"], cwd: scene)
        XCTAssertEqual(r0.status, 0, r0.stderr)
        // A slice as a render writes it: 9 frames at 30 fps, 0.3 s of silence.
        let slice = Data(AudioSlice.wav(pcm: [UInt8](repeating: 0, count: 14_400 * AudioSlice.frameBytes)))
        try slice.write(to: URL(fileURLWithPath: box.path("scene/fr/sound_00000.wav")))
        let frame = try bytes("scene/fr/frame_00000.png")
        let s = try Tool.run(["--assemble", "fr", "-o", "fr/sound_00000.wav", "--format", "mp4", "-q"], cwd: scene)
        XCTAssertEqual(s.status, 2, s.stderr)
        XCTAssertEqual(s.stderr, "wobble-run: output 'fr/sound_00000.wav' is the sound slice 'fr/sound_00000.wav' itself; choose another output\n")
        XCTAssertEqual(try bytes("scene/fr/sound_00000.wav"), slice)
        try fm.createSymbolicLink(atPath: box.path("scene/a.gif"), withDestinationPath: "fr/frame_00000.png")
        let g = try Tool.run(["--assemble", "fr", "-o", "a.gif", "-q"], cwd: scene)
        XCTAssertEqual(g.status, 2, g.stderr)
        XCTAssertEqual(g.stderr, "wobble-run: output 'a.gif' is the frame 'fr/frame_00000.png' itself; choose another output\n")
        XCTAssertEqual(try bytes("scene/fr/frame_00000.png"), frame)
    }

    /// M2, m1: a folder where a default name goes (`<scene>.gif`, a
    /// preset's `<scene>-slack.gif`) got PNG frames written into it (or a
    /// usage error about the format); refused as any made-up name that is
    /// not a file.
    func testAFolderAtADefaultNameIsRefused() throws {
        try fm.createDirectory(atPath: box.path("scene/s.gif"), withIntermediateDirectories: false)
        let r = try Tool.run(["s.lua", "-q", "--backend", "cpu"], cwd: scene)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "wobble-run: output 's.gif': is a folder, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)\n")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("scene/s.gif")), [])
        try fm.createDirectory(atPath: box.path("scene/s-slack.gif"), withIntermediateDirectories: false)
        let p = try Tool.run(["s.lua", "-q", "--backend", "cpu", "--preset", "slack"], cwd: scene)
        XCTAssertEqual(p.status, 1, p.stderr)
        XCTAssertEqual(p.stderr, "wobble-run: output 's-slack.gif': is a folder, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)\n")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("scene/s-slack.gif")), [])
    }

    /// M7, m5: a frame linked to /dev/zero hung `--assemble` (no
    /// --timeout); a dangling one was not called that.
    func testAssembleRefusesADeviceFrameUnread() throws {
        XCTAssertEqual(try Tool.run(["s.lua", "-q", "--backend", "cpu", "-o", "fr/"], cwd: scene).status, 0)
        try fm.removeItem(atPath: box.path("scene/fr/frame_00001.png"))
        try fm.createSymbolicLink(atPath: box.path("scene/fr/frame_00001.png"), withDestinationPath: "/dev/zero")
        let z = try Tool.run(["--assemble", "fr", "-o", "a.gif", "-q"], cwd: scene)
        XCTAssertEqual(z.status, 1, z.stderr)
        XCTAssertEqual(z.stderr, "wobble-run: frame 'fr/frame_00001.png': a character device, not a PNG file\n")
        try fm.removeItem(atPath: box.path("scene/fr/frame_00001.png"))
        try fm.createSymbolicLink(atPath: box.path("scene/fr/frame_00001.png"), withDestinationPath: "gone.png")
        let d = try Tool.run(["--assemble", "fr", "-o", "a.gif", "-q"], cwd: scene)
        XCTAssertEqual(d.status, 1, d.stderr)
        XCTAssertEqual(d.stderr, "wobble-run: frame 'fr/frame_00001.png': a dangling link, not a PNG file\n")
        XCTAssertFalse(fm.fileExists(atPath: box.path("scene/a.gif")))
    }
}
