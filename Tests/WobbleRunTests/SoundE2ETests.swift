import Foundation
import XCTest
import WobbleAudio
import WobbleSystem
import WobbleTestSupport

/// `sound()` and `soundtrack()` end to end: the soundtrack in MP4, WebM
/// and MOV, in sync with the picture (measured by decoding the output: a
/// click in the audio, the first moving frame), the same bytes every run,
/// `--frames` slices joined by `--assemble`, formats without sound, and
/// every bad input's one line.
final class SoundE2ETests: XCTestCase {
    var box: Sandbox!
    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil && ChildProcess.findExecutable("ffprobe") != nil }

    override func setUpWithError() throws {
        try XCTSkipUnless(hasFFmpeg, "needs ffmpeg and ffprobe")
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 96, height: 64, checker: 4))
        try writeSound("click.wav", DrumSynth.clicks(at: [0.5], duration: 2))
        try writeSound("drums.wav", DrumSynth.drums(bpm: 120, bars: 2))
        // An impulse at every onset of the sound: the click at 0.5 s.
        try box.write("sync.lua", """
            image("img.png")
            local s = sound("click.wav")
            soundtrack(s)
            local r = addSketch{x = 8, y = 8, w = 80, h = 48}
            prepare()
            for _, t in ipairs(s:onsets()) do
              wait(t - time())
              impulse(r, 1, 1)
            end
            wait(0.5)
            """)
    }

    override func tearDown() { box = nil }

    func writeSound(_ name: String, _ t: SyntheticTrack) throws {
        try Data(WAVFile.encode(t.samples, sampleRate: t.sampleRate)).write(to: box.url.appendingPathComponent(name))
    }

    /// The time of the loudest sample of `file`'s audio, on the file's own
    /// timeline (`first_pts=0`: what plays at time 0 is sample 0).
    func clickTime(_ file: String) throws -> Double {
        let r = try Tool.exec("ffmpeg", ["-v", "error", "-i", box.path(file), "-map", "0:a", "-af", "aresample=async=1:first_pts=0",
                                         "-ac", "1", "-ar", "48000", "-f", "f32le", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let samples = r.stdout.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let i = samples.indices.max { abs(samples[$0]) < abs(samples[$1]) } ?? 0
        return Double(i) / 48000
    }

    /// The presentation time of the first frame that differs from frame 0.
    func firstMovingFrameTime(_ file: String) throws -> Double {
        let probe = try Tool.exec("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time:stream=width,height",
                                              "-of", "csv=p=0", box.path(file)])
        let lines = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        let times = lines.compactMap { $0.count >= 1 && $0[0].contains(".") ? Double($0[0]) : nil }
        let size = lines.first { $0.count == 2 && !$0[0].contains(".") }.map { (Int($0[0])!, Int($0[1])!) }
        let (w, h) = try XCTUnwrap(size)
        let raw = try Tool.exec("ffmpeg", ["-v", "error", "-i", box.path(file), "-map", "0:v", "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        let frame = w * h
        let bytes = [UInt8](raw.stdout)
        XCTAssertEqual(bytes.count / frame, times.count)
        // Moving: any pixel changed from frame 0 by more than rounding
        // (the videos are lossless, --quality 100: a lossy encoder's
        // look-ahead smears a change into the frames before it).
        for k in 1..<min(times.count, bytes.count / frame) {
            var d = 0
            for i in 0..<frame { d = max(d, abs(Int(bytes[k * frame + i]) - Int(bytes[i]))) }
            if d > 2 { return times[k] }
        }
        XCTFail("nothing moves in \(file)")
        return 0
    }

    func testTheSoundOfAnImpulsePlaysWithinAFrameOfItsFrame() throws {
        for ext in ["mp4", "webm", "mov"] {
            let r = try Tool.run(["sync.lua", "-o", "sync.\(ext)", "-q", "--quality", "100"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let click = try clickTime("sync.\(ext)"), moving = try firstMovingFrameTime("sync.\(ext)")
            let offset = moving - click
            print(String(format: "A/V offset, %@: the click at %.4f s, the first moving frame at %.4f s: %+.1f ms", ext, click, moving, offset * 1000))
            XCTAssertLessThanOrEqual(abs(offset), 1.0 / 30 + 1e-6, ext)
            XCTAssertGreaterThanOrEqual(offset, -1e-6, "\(ext): the picture moves before the sound")
        }
    }

    func testTheCodecsAndLengthFollowTheClip() throws {
        for (ext, codec) in [("mp4", "aac"), ("webm", "opus"), ("mov", "pcm_s16le")] {
            let r = try Tool.run(["sync.lua", "-o", "sync.\(ext)", "-q"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let p = try Tool.exec("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name,sample_rate,channels",
                                              "-of", "csv=p=0", box.path("sync.\(ext)")])
            XCTAssertEqual(String(decoding: p.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "\(codec),48000,2", ext)
        }
        // The clip is 1 s (the click at 0.5, then 0.5 s): the 2 s sound is cut to it.
        let pcm = try Tool.exec("ffmpeg", ["-v", "error", "-i", box.path("sync.mov"), "-map", "0:a", "-f", "s16le", "-"])
        XCTAssertEqual(pcm.stdout.count, 48000 * 2 * 2)
    }

    func testTheSameTimesAndTheSameBytesTwice() throws {
        try box.write("drums.lua", """
            image("img.png")
            local s = sound("drums.wav")
            soundtrack(s)
            local r = addSketch{x = 8, y = 8, w = 80, h = 48}
            prepare()
            print(table.concat(s:beats(), " "))
            print(table.concat(s:onsets(), " "))
            print(s:tempo())
            for _, t in ipairs(s:beats()) do
              wait(t - time())
              impulse(r, 0, 1, s:level(t, t + 0.1) * 4)
            end
            wait(0.5)
            """)
        let a = try Tool.run(["drums.lua", "-o", "a.mp4", "-q"], cwd: box.url)
        let b = try Tool.run(["drums.lua", "-o", "b.mp4", "-q"], cwd: box.url)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(a.stdout, b.stdout)
        // Pinned to the millisecond (the hits are at 0.1 + k/2 s; the beats on
        // the same frames as the onsets, where the kick and snare rise).
        XCTAssertTrue(a.stdout.hasPrefix("0.09 0.59 1.09 1.59 2.09 2.59 3.09 3.59\n0.09 0.34 0.59 0.84 1.09 1.34 1.59 1.84 2.09 2.34 2.59 2.84 3.09 3.34 3.59 3.84\n120.0\n"), a.stdout)
        XCTAssertEqual(try Data(contentsOf: box.url.appendingPathComponent("a.mp4")), try Data(contentsOf: box.url.appendingPathComponent("b.mp4")))
        for ext in ["webm", "mov"] {
            _ = try Tool.run(["drums.lua", "-o", "a.\(ext)", "-q"], cwd: box.url)
            _ = try Tool.run(["drums.lua", "-o", "b.\(ext)", "-q"], cwd: box.url)
            XCTAssertEqual(try Data(contentsOf: box.url.appendingPathComponent("a.\(ext)")),
                           try Data(contentsOf: box.url.appendingPathComponent("b.\(ext)")), ext)
        }
    }

    func testFormatsWithoutSoundWarnOnce() throws {
        for (out, what) in [("x.gif", "a GIF"), ("x.webp", "an animated WebP"), ("x.apng", "an APNG")] {
            let r = try Tool.run(["sync.lua", "-o", out], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let line = "wobble-run: warning: '\(out)' is \(what), which has no sound: the soundtrack is left out (write .mp4, .webm or .mov to keep it)"
            XCTAssertEqual(r.stderr.components(separatedBy: line).count - 1, 1, r.stderr)
        }
        let t = try Tool.run(["sync.lua", "--preset", "telegram", "-o", "t.webm"], cwd: box.url)
        XCTAssertEqual(t.status, 0, t.stderr)
        let line = "wobble-run: warning: Telegram video stickers (--preset telegram) have no sound: the soundtrack is left out"
        XCTAssertEqual(t.stderr.components(separatedBy: line).count - 1, 1, t.stderr)
        let p = try Tool.exec("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name", "-of", "csv=p=0", box.path("t.webm")])
        XCTAssertEqual(String(decoding: p.stdout, as: UTF8.self), "")
    }

    /// Each bad input: its one line (the first of stderr), exit 1.
    /// Ctrl+C or SIGTERM while `sound()` waits on ffmpeg is the stop, not
    /// an error of the scene's: 130/143, no line, no traceback, no output
    /// (it was exit 1 with "sound: 'long.flac': interrupted while decoding"
    /// and a Lua traceback).
    func testASignalWhileASoundDecodesIsTheStop() throws {
        let made = try Tool.exec("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=220:d=400", "-ac", "2", box.path("long.flac")])
        XCTAssertEqual(made.status, 0, made.stderr)
        try box.write("long.lua", "image('img.png')\nlocal s = sound('long.flac')\naddSketch{x = 8, y = 8, w = 40, h = 30}\nprepare()\nwait(0.5)\n")
        for (sig, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let (p, out, err) = try Tool.start(["long.lua", "--backend", "cpu", "-o", "long.gif"], cwd: box.url)
            // Signalled once its ffmpeg decodes the sound.
            let deadline = Date().addingTimeInterval(20)
            func decoding() -> Bool {
                let children = (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/task/\(p.processIdentifier)/children", encoding: .utf8)) ?? ""
                return children.split(separator: " ").contains { c in
                    let cmd = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(c)/cmdline"))) ?? Data()
                    return String(decoding: cmd, as: UTF8.self).contains("long.flac")
                }
            }
            while !decoding() && Date() < deadline && p.isRunning { usleep(5_000) }
            XCTAssertTrue(p.isRunning, "the run ended before its ffmpeg was seen")
            kill(p.processIdentifier, sig)
            let (_, errData) = Tool.drain(out, err)
            p.waitUntilExit()
            let stderr = String(decoding: errData, as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, code, stderr)
            XCTAssertFalse(stderr.contains("traceback") || stderr.contains("sound:"), stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("long.gif")))
        }
    }

    func testEveryBadInputHasItsLine() throws {
        try Data().write(to: box.url.appendingPathComponent("empty.wav"))
        try Data(WAVFile.encode([], sampleRate: 44_100)).write(to: box.url.appendingPathComponent("silent0.wav"))
        try box.write("text.mp3", "not a sound\n")
        func check(_ scene: String, _ expected: String, args: [String] = [], env: [String: String]? = nil,
                   file: StaticString = #filePath, line: UInt = #line) throws {
            try box.write("bad.lua", scene)
            let r: (status: Int32, stderr: String)
            if let env {
                let e = try Tool.exec(Tool.executable.path, ["bad.lua", "--check"] + args, cwd: box.url, env: env)
                r = (e.status, e.stderr)
            } else {
                let e = try Tool.run(["bad.lua", "--check"] + args, cwd: box.url)
                r = (e.status, e.stderr)
            }
            XCTAssertEqual(r.status, 1, r.stderr, file: file, line: line)
            XCTAssertEqual(String(r.stderr.split(separator: "\n").first ?? ""), expected, file: file, line: line)
        }
        try check("image('img.png')\nlocal s = sound('missing.wav')\n", "bad.lua:2: sound: 'missing.wav': no such file")
        try check("image('img.png')\nlocal s = sound('text.mp3')\n",
                  "bad.lua:2: sound: 'text.mp3' is not a sound ffmpeg can decode (no audio stream, or a damaged or unknown format)")
        try check("image('img.png')\nlocal s = sound('empty.wav')\n",
                  "bad.lua:2: sound: 'empty.wav' is not a sound ffmpeg can decode (no audio stream, or a damaged or unknown format)")
        try check("image('img.png')\nlocal s = sound('silent0.wav')\n", "bad.lua:2: sound: 'silent0.wav' has no samples (a sound of length 0)")
        try check("image('img.png')\nlocal s = sound('drums.wav')\n",
                  "bad.lua:2: sound: 'drums.wav' is longer than the longest clip (1 s: --max-frames 30 at 30 fps)", args: ["--max-frames", "30"])
        try check("image('img.png')\nlocal s = sound('click.wav')\nreset()\nprint(s:beats())\n",
                  "bad.lua:4: beats: sound 'click.wav' was loaded before reset(); load it again with sound()")
        try check("image('img.png')\nlocal s = sound('click.wav')\nreset()\nsoundtrack(s)\n",
                  "bad.lua:4: soundtrack: sound 'click.wav' was loaded before reset(); load it again with sound()")
        try check("image('img.png')\nlocal s = sound('click.wav')\n",
                  "bad.lua:2: sound: 'click.wav': decoding a sound needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg)",
                  env: ["PATH": "/nonexistent"])
        try check("image('img.png')\nsoundtrack('click.wav')\n", "bad.lua:2: bad argument #1 to 'soundtrack' (sound expected, got string)")
        try check("image('img.png')\nlocal s = sound('click.wav')\ns:onsets{method = 'complex'}\n",
                  "bad.lua:3: onsets: method must be \"flux\", \"energy\" or \"hfc\" (got \"complex\")")
        try check("image('img.png')\nlocal s = sound('click.wav')\ns:onsets{gap = 1}\n",
                  "bad.lua:3: onsets: unknown key 'gap' (valid: method, threshold, minGap)")
        try check("image('img.png')\nlocal s = sound('click.wav')\ns:level(1, 0)\n", "bad.lua:3: level: t1 (0) is before t0 (1)")
    }
}

extension SoundE2ETests {
    /// The samples of `file`'s audio stream, as 16-bit stereo bytes.
    func pcm(_ file: String) throws -> Data {
        let r = try Tool.exec("ffmpeg", ["-v", "error", "-i", box.path(file), "-map", "0:a", "-f", "s16le", "-ac", "2", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout
    }

    /// `--frames` slices rendered as PNG frames carry their sound
    /// (`sound_NNNNN.wav`); `--assemble` joins them: the MOV's PCM is the
    /// same samples as a direct render's (no gap, no overlap, no click),
    /// and an MP4 of the slices plays the click in sync.
    func testSlicesCarryTheirSoundAndAssembleJoinsIt() throws {
        try box.write("drums.lua", """
            image("img.png")
            local s = sound("drums.wav")
            soundtrack(s, 0.25)
            local r = addSketch{x = 8, y = 8, w = 80, h = 48}
            prepare()
            for _, t in ipairs(s:beats()) do
              wait(t + 0.25 - time())
              impulse(r, 0, 1)
            end
            wait(0.3)
            """)
        let direct = try Tool.run(["drums.lua", "-o", "direct.mov", "-q"], cwd: box.url)
        XCTAssertEqual(direct.status, 0, direct.stderr)
        for range in ["0-40", "41-77", "78-"] {
            let r = try Tool.run(["drums.lua", "-o", "slices/", "--frames", range, "-q"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        XCTAssertEqual(try box.list("slices").filter { $0.hasSuffix(".wav") }.sorted(),
                       ["sound_00000.wav", "sound_00041.wav", "sound_00078.wav"])
        let joined = try Tool.run(["--assemble", "slices", "-o", "joined.mov", "-q"], cwd: box.url)
        XCTAssertEqual(joined.status, 0, joined.stderr)
        let a = try pcm("direct.mov"), b = try pcm("joined.mov")
        XCTAssertGreaterThan(a.count, 48000 * 4 * 3)
        XCTAssertEqual(a.count, b.count)
        XCTAssertTrue(a == b, "the joined sound differs from the direct render's")
        // Part of the slices: the sound of those frames only.
        let part = try Tool.run(["--assemble", "slices", "--frames", "30-60", "-o", "part.mov", "-q"], cwd: box.url)
        XCTAssertEqual(part.status, 0, part.stderr)
        let p = try pcm("part.mov")
        let from = Int((30.0 / 30 * 48000).rounded()) * 4, to = Int((61.0 / 30 * 48000).rounded()) * 4
        XCTAssertTrue(p == a.subdata(in: from..<to))
        // A slice of another frame rate does not fit: one clear line.
        let other = try Tool.run(["drums.lua", "-o", "slices/", "--frames", "41-77", "--fps", "25", "-q"], cwd: box.url)
        XCTAssertEqual(other.status, 0, other.stderr)
        let bad = try Tool.run(["--assemble", "slices", "-o", "bad.mov", "-q"], cwd: box.url)
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.firstError, "wobble-run: --assemble 'slices': 'sound_00041.wav' holds 71040 samples, not the 59200 of frames 41-77 at 30 fps (render that slice again, at this frame rate)")
    }
}
