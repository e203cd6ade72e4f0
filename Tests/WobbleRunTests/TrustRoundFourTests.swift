import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// Presets that never break a platform's limit (issue 30): one play counted
/// as a player plays it, `--loop` honoured or refused, Discord's choice
/// between APNG and GIF, one `wrote` line, a TMPDIR that is not there.
final class PresetLimitTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 64, height: 48))
        try FileManager.default.copyItem(atPath: PipelineTests.examples.appendingPathComponent("cat/chelsea.png").path,
                                         toPath: box.path("cat.png"))
    }

    override func tearDown() { box = nil }

    /// A scene on img.png poked at 0 that lasts `seconds` (`extra` before the wait).
    func scene(_ name: String, seconds: Double, image: String = "img.png", extra: String = "") throws {
        try box.write(name, """
            image("\(image)")
            local a = addSketch{x = 8, y = 6, w = 40, h = 30}
            prepare()
            impulse(a, 1, 0)
            \(extra)
            wait(\(seconds))
            """)
    }

    func preset(_ args: [String], status: Int32 = 0) throws -> (Tool.Result, [String: Any]) {
        let r = try Tool.run(["--backend", "cpu", "-q", "--json"] + args, cwd: box.url)
        XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
        let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let j = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], r.stdout + r.stderr)
        return (r, j)
    }

    /// Pillow's view of an animation: format, frames, durations (ms), loop.
    func inspect(_ file: String) throws -> [String: Any] {
        guard let py = FormatsTests.python else { throw XCTSkip("Pillow (python3-pil) is not installed") }
        let script = """
            import json, sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            d = []
            for n in range(getattr(im, "n_frames", 1)):
                im.seek(n)
                im.load()
                d.append(im.info.get("duration") or 0)
            print(json.dumps({"format": im.format, "width": im.size[0], "height": im.size[1], "frames": len(d),
                              "durations": d, "loop": im.info.get("loop"), "animated": getattr(im, "is_animated", False)}))
            """
        let r = try Tool.run(["-c", script, file], cwd: box.url, executable: py)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    /// `telegram --fps 0.4` on a 3 s clip: 2 frames played 5 s; `fps(1.3)`
    /// 4 frames 3.08 s; LINE `--fps 8` on 1.3 s: 11 frames of 1/8 s, three
    /// plays 4.125 s. Now the rate rises (with the reason) or the plays drop.
    func testOnePlayIsCountedAsAPlayerPlaysIt() throws {
        guard ChildProcess.findExecutable("ffprobe") != nil else { throw XCTSkip("ffmpeg is not installed") }
        try scene("three.lua", seconds: 3)
        let (r, j) = try preset(["three.lua", "--preset", "telegram", "--fps", "0.4", "-o", "t.webm"])
        let line = "telegram: at 0.4 fps the clip's 2 frames would play 5 s (every frame shows 1/fps, the last one too), more than the 3 s Telegram video stickers may last: written at 0.667 fps (2 frames, 3 s)"
        XCTAssertEqual(j["warnings"] as? [String], [line])
        XCTAssertTrue(r.stderr.contains("wobble-run: warning: " + line), r.stderr)
        let probe = try Tool.run(["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", "t.webm"], cwd: box.url, executable: "ffprobe")
        XCTAssertLessThanOrEqual(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99, 3)
        XCTAssertEqual(j["duration"] as? Double, 3, "the JSON says what the file plays")
        // One frame at 1/3 fps: exactly 3 s in the WebM (a rate over 1000 made it 3.003 s).
        _ = try preset(["three.lua", "--preset", "telegram", "--fps", "0.15", "-o", "third.webm"])
        let third = try Tool.run(["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", "third.webm"], cwd: box.url, executable: "ffprobe")
        XCTAssertEqual(third.stdout, "3.000000\n")
        XCTAssertEqual((j["preset"] as? [String: Any])?["frames"] as? Int, 2)

        try scene("own.lua", seconds: 3, extra: "fps(1.3)")
        let (_, own) = try preset(["own.lua", "--preset", "telegram", "-o", "o.webm"])
        XCTAssertEqual((own["preset"] as? [String: Any])?["fps"] as? Double, 1.333333)
        XCTAssertEqual((own["preset"] as? [String: Any])?["seconds"] as? Double, 3)

        try scene("short.lua", seconds: 1.3)
        let (_, l) = try preset(["short.lua", "--preset", "line", "--fps", "8", "-o", "l.png"])
        let i = try inspect("l.png")
        let total = (i["durations"] as? [Double] ?? []).reduce(0, +)
        XCTAssertEqual(i["frames"] as? Int, 11)
        XCTAssertEqual(total, 1375, accuracy: 1e-6)
        let plays = i["loop"] as? Int ?? 0
        XCTAssertEqual(plays, 2)
        XCTAssertLessThanOrEqual(total * Double(plays), 4000 + 1e-6, "every play within LINE's 4 s")
        XCTAssertEqual(l["duration"] as? Double, 1.375)
    }

    /// A scene where nothing moves: an animated WebP sticker (two frames
    /// or more, its second), not a still image, and the JSON says so.
    func testWhatsAppOfAStillSceneIsAnAnimatedSticker() throws {
        try box.write("still.lua", "image('img.png')\nwait(1)\n")
        let (_, j) = try preset(["still.lua", "--preset", "whatsapp", "-o", "w.webp"])
        let i = try inspect("w.webp")
        XCTAssertEqual(i["animated"] as? Bool, true)
        XCTAssertGreaterThanOrEqual(i["frames"] as? Int ?? 0, 2, "WhatsApp's animated stickers have two frames or more")
        XCTAssertEqual((i["durations"] as? [Int] ?? []).reduce(0, +), 1000)
        XCTAssertGreaterThanOrEqual((i["durations"] as? [Int] ?? []).min() ?? 0, 8)
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        XCTAssertEqual(p["frames"] as? Int, 30)
        XCTAssertEqual(p["seconds"] as? Double, 1)
        XCTAssertEqual(j["bytes"] as? Int, try Data(contentsOf: URL(fileURLWithPath: box.path("w.webp"))).count)
    }

    /// A one-frame WebP above 500 fps (its frame under 2 ms) is still an
    /// animation of two frames, its loop count kept (libwebpmux made a
    /// still image of it, without timing or loop count).
    func testAOneFrameWebPOver500FPSIsStillAnAnimation() throws {
        try box.write("one.lua", "image('img.png')\n")
        for fps in ["1000", "501"] {
            let r = try Tool.run(["one.lua", "--backend", "cpu", "-q", "--fps", fps, "--loop", "3", "-o", "o\(fps).webp"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let i = try inspect("o\(fps).webp")
            XCTAssertEqual(i["animated"] as? Bool, true, fps)
            XCTAssertEqual(i["frames"] as? Int, 2, fps)
            XCTAssertEqual(i["durations"] as? [Int], [1, 1], fps)
            XCTAssertEqual(i["loop"] as? Int, 4, "--loop 3: four plays (\(fps) fps)")
        }
    }

    /// `--preset X --loop N`: honoured where the platform allows it, else
    /// one line naming the rule (exit 2 when the options alone break it,
    /// 1 when the clip's length does).
    func testPresetLoopIsHonouredOrRefused() throws {
        try scene("s.lua", seconds: 0.5)
        _ = try preset(["s.lua", "--preset", "slack", "--loop", "2", "-o", "e.gif"])
        XCTAssertEqual(try inspect("e.gif")["loop"] as? Int, 2, "GIF: NETSCAPE2.0 loop count 2")
        let (_, w) = try preset(["s.lua", "--preset", "whatsapp", "--loop", "1", "-o", "w.webp"])
        XCTAssertEqual(try inspect("w.webp")["loop"] as? Int, 2, "WebP: two plays")
        XCTAssertEqual((w["preset"] as? [String: Any])?["plays"] as? Int, 2)
        let (_, l) = try preset(["s.lua", "--preset", "line", "--loop", "1", "-o", "l.png"])
        XCTAssertEqual(try inspect("l.png")["loop"] as? Int, 2, "LINE: two plays as asked, not as many as fit")
        XCTAssertEqual((l["preset"] as? [String: Any])?["plays"] as? Int, 2)

        let refusals: [([String], Int32, String)] = [
            (["s.lua", "--preset", "telegram", "--loop", "1"], 2,
             "wobble-run: --preset telegram: Telegram video stickers always loop (the player repeats them; the file has no loop count); drop --loop 1"),
            (["s.lua", "--preset", "line", "--loop", "0"], 2,
             "wobble-run: --preset line: LINE animated stickers play 1 to 4 times; --loop 0 plays forever: use --loop -1 (once) to --loop 3"),
            (["long.lua", "--preset", "line", "--loop", "3"], 1,
             "wobble-run: line: LINE animated stickers play at most 4 s in all; --loop 3 plays this 1.5 s clip 4 times, 6 s: use --loop 1 or less (nothing written)"),
        ]
        try scene("long.lua", seconds: 1.5)
        for (args, status, line) in refusals {
            for check in [false, true] {
                let r = try Tool.run(["--backend", "cpu", "-q"] + args + (check ? ["--check"] : []), cwd: box.url)
                XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
                XCTAssertEqual(r.firstError, line)
            }
        }
        XCTAssertEqual(box.files().filter { $0.hasPrefix("s-") || $0.hasPrefix("long-") }, [], "nothing written")
        XCTAssertEqual(box.leftovers(), [])
    }

    /// Discord takes APNG and GIF: both are tried and the closer one (PSNR)
    /// within 512 KB is written; `-o x.gif` asks for GIF (no `--format`
    /// contradiction that nobody typed).
    func testDiscordWritesTheCloserFormatAndTakesAGIFName() throws {
        try box.write("cat.lua", """
            image("cat.png")
            local a = addSketch{lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286}}
            local b = addSketch{x = 190, y = 10, w = 150, h = 100}
            prepare()
            impulse(a, 1, 0)
            impulse(b, 0, 1)
            wait(1)
            """)
        let (_, g) = try preset(["cat.lua", "--preset", "discord", "-o", "d.gif"])
        let gi = try inspect("d.gif")
        XCTAssertEqual(gi["format"] as? String, "GIF")
        XCTAssertEqual(gi["width"] as? Int, 320)
        XCTAssertEqual(gi["height"] as? Int, 320)
        XCTAssertEqual(gi["frames"] as? Int, 30)
        XCTAssertEqual((g["preset"] as? [String: Any])?["format"] as? String, "gif")
        XCTAssertLessThanOrEqual(g["bytes"] as? Int ?? .max, 512 * 1024)

        let (_, j) = try preset(["cat.lua", "--preset", "discord"])
        let p = try XCTUnwrap(j["preset"] as? [String: Any])
        let compared = try XCTUnwrap(p["compared"] as? [[String: Any]], "\(p)")
        XCTAssertEqual(Set(compared.compactMap { $0["format"] as? String }), ["apng", "gif"])
        let best = try XCTUnwrap(compared.max { ($0["psnr"] as? Double ?? 0) < ($1["psnr"] as? Double ?? 0) })
        XCTAssertEqual(p["format"] as? String, best["format"] as? String, "the closer one wins")
        XCTAssertEqual(p["psnr"] as? Double, best["psnr"] as? Double)
        let name = p["format"] as? String == "gif" ? "cat-discord.gif" : "cat-discord.png"
        XCTAssertEqual(j["output"] as? String, name, "the file is named for its format")
        XCTAssertTrue(compared.allSatisfy { ($0["bytes"] as? Int ?? .max) <= 512 * 1024 })

        let wrong = try Tool.run(["cat.lua", "--preset", "discord", "-o", "d.webp"], cwd: box.url)
        XCTAssertEqual(wrong.status, 2)
        XCTAssertEqual(wrong.firstError, "wobble-run: --preset discord writes APNG or GIF; the output 'd.webp' is not one: name it x.png or x.gif")
        // A name that says no format is not taken as the platform's either
        // (a WebM named x.jpg), unless --format says which.
        for name in ["d.jpg", "d"] {
            let unknown = try Tool.run(["cat.lua", "--preset", "telegram", "-o", name], cwd: box.url)
            XCTAssertEqual(unknown.status, 2, name)
            XCTAssertEqual(unknown.firstError,
                           "wobble-run: --preset telegram writes WEBM; the output '\(name)' is not a file of that kind: name it x.webm")
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path(name)), name)
        }
    }

    /// `-v` with a preset: one `wrote` line, the preset's (the inner runs
    /// said `wrote` too, with the picture's size before padding).
    func testVerbosePresetSaysWroteOnce() throws {
        try scene("s.lua", seconds: 0.3)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-v", "--preset", "slack", "-o", "e.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let wrote = r.stderr.split(separator: "\n").filter { $0.hasPrefix("wrote ") || $0.hasPrefix("wobble-run: wrote ") }
        XCTAssertEqual(wrote.count, 1, r.stderr)
        XCTAssertTrue(wrote.first?.hasPrefix("wrote e.gif: Slack custom emoji, GIF, 9 frames at 30 fps, 128×128, ") == true, r.stderr)
        // Without -v, in a pipeline (stderr not a terminal): no summary
        // (the scene's warning stays).
        let plain = try Tool.run(["s.lua", "--backend", "cpu", "--preset", "slack", "-o", "f.gif"], cwd: box.url)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertFalse(plain.stderr.contains("wrote"), plain.stderr)
        XCTAssertEqual(plain.stderr.split(separator: "\n").filter { !$0.hasPrefix("wobble-run: warning: ") }, [], plain.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("f.gif")))
    }

    /// A TMPDIR that is not there fails nothing: a preset's tries are
    /// encoded in memory (a video's container too), and the file written
    /// is the one a working TMPDIR gives; for Telegram (whose two-pass
    /// statistics need a folder) the quality is searched instead, quietly
    /// (`-v` says so), the same file on every run.
    func testATMPDIRThatIsNotThereIsNotNeeded() throws {
        try scene("s.lua", seconds: 0.3)
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = "/nonexistent"
        for (preset, file) in [("slack", "s-slack.gif")] + (ChildProcess.findExecutable("ffmpeg") != nil ? [("telegram", "s-telegram.webm")] : []) {
            let r = try Tool.exec(Tool.executable.path, ["s.lua", "--backend", "cpu", "-q", "--preset", preset], cwd: box.url, env: env)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertFalse(r.stderr.contains("TMPDIR") || r.stderr.contains("temporary"), r.stderr)
            let without = try Data(contentsOf: box.url.appendingPathComponent(file))
            let args = ["s.lua", "--backend", "cpu", "-q", "--preset", preset, "-o", "again-" + file]
            let again = preset == "telegram" ? try Tool.exec(Tool.executable.path, args, cwd: box.url, env: env) : try {
                let r = try Tool.run(args, cwd: box.url)
                return (r.status, Data(r.stdout.utf8), r.stderr)
            }()
            XCTAssertEqual(again.status, 0, again.stderr)
            XCTAssertEqual(without, try Data(contentsOf: box.url.appendingPathComponent("again-" + file)), preset)
        }
    }

    /// A hostile round's presets at odd rates: `--check` says the size of
    /// the file (the padded canvas); a part too long at a rate where one
    /// frame alone is longer than the limit suggests a higher --fps, never
    /// `--frames 0--1` (the clip lasts its 2 frames at 0.15 fps, 13.333 s,
    /// as `--json` says); LINE raises the rate of a clip that lasts but has
    /// one frame at the asked rate; a one-frame GIF does not warn of a jump.
    func testPresetsAtOddRatesSayTheTruth() throws {
        try scene("sc.lua", seconds: 1)
        for (name, side) in [("slack", 128), ("whatsapp", 512), ("discord", 320)] {
            let (_, j) = try preset(["sc.lua", "--preset", name, "--check"])
            XCTAssertEqual(j["width"] as? Int, side, name)
            XCTAssertEqual(j["height"] as? Int, side, name)
        }
        try scene("long.lua", seconds: 10, extra: "fps(0.15)")
        let r = try Tool.run(["--backend", "cpu", "-q", "long.lua", "--preset", "telegram", "-o", "t.webm"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: telegram: Telegram video stickers last at most 3 s; this clip lasts 13.333 s: end the scene sooner, or pass a higher --fps (at 0.15 fps one frame alone shows 6.667 s) (nothing written)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("t.webm")))
        let (_, l) = try preset(["sc.lua", "--preset", "line", "--fps", "0.4", "-o", "l.png"])
        let lp = try XCTUnwrap(l["preset"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(lp["frames"] as? Int ?? 0, 5, "\(lp)")
        let (g, gj) = try preset(["sc.lua", "--preset", "slack", "--fps", "0.4", "-o", "s.gif"])
        XCTAssertFalse(g.stderr.contains("the GIF loops but ends while regions still move"), g.stderr)
        XCTAssertEqual((gj["warnings"] as? [String])?.contains { $0.contains("the GIF loops but ends") }, false)
    }

    /// A part too long for the platform (`--frames`): the message and
    /// `--json`'s `duration` give the part's play time (its frames at the
    /// rate, not the whole scene's), a render and `--check` alike, and the
    /// shorter part offered starts where the one asked for does (and fits).
    func testAPartTooLongSaysThePartsLengthAndKeepsItsStart() throws {
        try scene("nine.lua", seconds: 9.3)
        let limit = "telegram: Telegram video stickers last at most 3 s; "
        let cases: [([String], Int, Double, String, [String]?)] = [
            (["--frames", "0-90"], 91, 3.033, "the part --frames 0-90 selects lasts 3.033 s: take a shorter part, such as --frames 0-89", ["--frames", "0-89"]),
            (["--fps", "29.97", "--frames", "10-99"], 90, 3.003, "the part --frames 10-99 selects lasts 3.003 s: take a shorter part, such as --frames 10-98", ["--fps", "29.97", "--frames", "10-98"]),
            (["--fps", "0.4", "--frames", "1-2"], 2, 5, "the part --frames 1-2 selects lasts 5 s: take a shorter part, such as --frames 1-1", ["--fps", "0.4", "--frames", "1-1"]),
            (["--fps", "0.01", "--frames", "0-0"], 1, 100, "the part --frames 0-0 selects lasts 100 s: pass a higher --fps (at 0.01 fps one frame alone shows 100 s)", nil),
        ]
        for (args, frames, duration, message, fix) in cases {
            for check in [false, true] {
                let (r, j) = try preset(["nine.lua", "--preset", "telegram", "-o", "p.webm"] + args + (check ? ["--check"] : []), status: 1)
                XCTAssertEqual(r.stderr, "wobble-run: " + limit + message + " (nothing written)\n", "\(args)")
                XCTAssertEqual(j["error"] as? String, limit + message + " (nothing written)", "\(args)")
                XCTAssertEqual(j["frames"] as? Int, frames, "\(args)")
                XCTAssertEqual(j["duration"] as? Double ?? 0, duration, accuracy: 0.0005, "\(args)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("p.webm")))
            if let fix {
                let (_, ok) = try preset(["nine.lua", "--preset", "telegram", "-o", "p.webm", "--check"] + fix)
                XCTAssertLessThanOrEqual(ok["duration"] as? Double ?? 99, 3, "\(fix)")
            }
        }
    }

    /// The `ok:` and `wrote` lines give a frame rate in its short form
    /// (a preset's raised 2/3 fps, a scene's 1/3), as every message does;
    /// the `wrote` line says "1 frame" and a `--frames` part's own length.
    func testTheOkAndWroteLinesRoundTheFrameRate() throws {
        try scene("three.lua", seconds: 3)
        let r = try Tool.run(["three.lua", "--backend", "cpu", "--fps", "0.4", "--preset", "telegram", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").first { $0.hasPrefix("ok: ") }.map(String.init), "ok: 2 frames, 3 s at 0.667 fps, 512×384")
        try scene("third.lua", seconds: 3, extra: "fps(1/3)")
        let c = try Tool.run(["third.lua", "--check"], cwd: box.url)
        XCTAssertEqual(c.stderr.split(separator: "\n").first { $0.hasPrefix("ok: ") }.map(String.init), "ok: 1 frame, 3 s at 0.333 fps, 64×48")
        let v = try Tool.run(["third.lua", "--backend", "cpu", "-v", "-o", "t.gif"], cwd: box.url)
        XCTAssertEqual(v.status, 0, v.stderr)
        let wrote = v.stderr.split(separator: "\n").first { $0.hasPrefix("wrote t.gif: ") }.map(String.init) ?? v.stderr
        XCTAssertTrue(wrote.hasPrefix("wrote t.gif: 1 frame, 64×48, 3 s at 0.333 fps, in "), wrote)
        // The wrote line of a --frames part: its frames' play time, as the ok: line.
        let part = try Tool.run(["three.lua", "--backend", "cpu", "-v", "--frames", "0-4", "-o", "f.gif"], cwd: box.url)
        XCTAssertEqual(part.status, 0, part.stderr)
        let line = part.stderr.split(separator: "\n").first { $0.hasPrefix("wrote f.gif: ") }.map(String.init) ?? part.stderr
        XCTAssertTrue(line.hasPrefix("wrote f.gif: 5 frames, 64×48, 0.167 s at 30 fps, in "), line)
    }
}

/// The formats (issue 30): APNG frames the same in every decoder, WebP's
/// plays and still clips, ProRes over the file size limit.
final class FormatLimitTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    override func tearDown() { box = nil }

    /// 96×72: random colours, each 8×8 cell's alpha 0, 255, random, or a ramp.
    static func mixedAlpha() -> RGBAImage {
        var rng = SplitMix64(state: 30)
        var img = RGBAImage(width: 96, height: 72, pixels: [UInt8](repeating: 0, count: 96 * 72 * 4))
        for y in 0..<72 {
            for x in 0..<96 {
                let i = (y * 96 + x) * 4
                for c in 0..<3 { img.pixels[i + c] = UInt8(truncatingIfNeeded: rng.next()) }
                switch (x / 8 + y / 8) % 4 {
                case 0: img.pixels[i + 3] = 0
                case 1: img.pixels[i + 3] = 255
                case 2: img.pixels[i + 3] = UInt8(truncatingIfNeeded: rng.next())
                default: img.pixels[i + 3] = UInt8(x * 255 / 95)
                }
            }
        }
        return img
    }

    /// Every frame of APNGs made of partly transparent pixels (a pin, a
    /// spring, the overlay, a preset's fewer colour levels) decodes to the
    /// PNG frames in Pillow and in ffmpeg. (Chromium's decoder is not
    /// installed here; the same rule — OVER only with alpha 0 or 255 —
    /// leaves it no rounding to differ in.)
    func testAPNGDecodesTheSameInPillowAndFFmpeg() throws {
        guard let py = FormatsTests.python else { throw XCTSkip("Pillow (python3-pil) is not installed") }
        guard ChildProcess.findExecutable("ffmpeg") != nil else { throw XCTSkip("ffmpeg is not installed") }
        try box.writeImage("mix.png", Self.mixedAlpha())
        try box.write("s.lua", """
            image("mix.png")
            local a = addSketch{x = 5, y = 5, w = 50, h = 40, pin = "bottom"}
            local b = addSketch{x = 40, y = 30, w = 50, h = 40, motion = "spring"}
            prepare()
            impulse(a, 1, 0)
            wait(0.2)
            impulse(b, 0, 1)
            wait(0.5)
            """)
        let decode = """
            import glob, subprocess, sys, tempfile
            from PIL import Image, ImageChops
            anim, frames = sys.argv[1], sys.argv[2]
            im = Image.open(anim)
            pil = []
            for n in range(im.n_frames):
                im.seek(n)
                pil.append(im.convert("RGBA").copy())
            d = tempfile.mkdtemp()
            subprocess.run(["ffmpeg", "-v", "error", "-i", anim, "-f", "image2", "-pix_fmt", "rgba", d + "/%05d.png"], check=True)
            ff = [Image.open(p).convert("RGBA") for p in sorted(glob.glob(d + "/*.png"))]
            ref = [Image.open(p).convert("RGBA") for p in sorted(glob.glob(frames + "/*.png"))] if frames != "-" else pil
            def same(a, b):
                # RGB does not count under alpha 0.
                z = Image.new("RGBA", a.size)
                ma = a.getchannel("A").point(lambda v: 255 if v else 0)
                mb = b.getchannel("A").point(lambda v: 255 if v else 0)
                return ImageChops.difference(Image.composite(a, z, ma), Image.composite(b, z, mb)).getbbox() is None
            print(len(pil), len(ff), len(ref), sum(not same(a, r) for a, r in zip(pil, ref)), sum(not same(b, r) for b, r in zip(ff, ref)))
            """
        for extra in [[], ["--overlay"]] {
            try? FileManager.default.removeItem(atPath: box.path("frames"))
            let f = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "frames/"] + extra, cwd: box.url)
            XCTAssertEqual(f.status, 0, f.stderr)
            let a = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "s.apng"] + extra, cwd: box.url)
            XCTAssertEqual(a.status, 0, a.stderr)
            let r = try Tool.run(["-c", decode, "s.apng", "frames"], cwd: box.url, executable: py)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, "21 21 21 0 0\n", "frames, then frames that differ from the PNG frames in Pillow and in ffmpeg \(extra)")
        }
        // A preset's APNG (fewer colour levels, on a transparent canvas):
        // Pillow and ffmpeg agree frame for frame.
        try box.writeImage("ramp.png", FormatsTests.alphaRamp(width: 64, height: 48))
        try box.write("r.lua", """
            image("ramp.png")
            local a = addSketch{x = 5, y = 5, w = 40, h = 30, pin = "left"}
            prepare()
            impulse(a, 0, 1)
            wait(0.7)
            """)
        let p = try Tool.run(["r.lua", "--backend", "cpu", "-q", "--preset", "line", "-o", "l.png"], cwd: box.url)
        XCTAssertEqual(p.status, 0, p.stderr)
        let r = try Tool.run(["-c", decode, "l.png", "-"], cwd: box.url, executable: py)
        XCTAssertEqual(r.status, 0, r.stderr)
        let n = r.stdout.split(separator: " ")
        XCTAssertEqual(n.count, 5)
        XCTAssertEqual(n.first, n.dropFirst().first, "as many frames in both")
        XCTAssertEqual(n.last, "0\n", "ffmpeg's frames equal Pillow's")
    }

    /// `--loop 65534` stores 65535 plays; 65535 cannot be stored in a WebP
    /// (it was the same file as 65534): a usage error.
    func testWebPLoop65535IsRefusedAnd65534Kept() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        let ok = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--loop", "65534", "-o", "a.webp"], cwd: box.url)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(try Self.webpLoopCount(box.path("a.webp")), 65535)
        for check in [false, true] {
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--loop", "65535", "-o", "b.webp"] + (check ? ["--check"] : []), cwd: box.url)
            XCTAssertEqual(r.status, 2)
            XCTAssertEqual(r.stderr, "wobble-run: --loop 65535: a WebP plays at most 65535 times (--loop 65534); use --loop 0 to loop forever\n")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("b.webp")))
        // APNG stores 65536 plays.
        let apng = try Tool.run(["s.lua", "--backend", "cpu", "-q", "--loop", "65535", "-o", "c.apng"], cwd: box.url)
        XCTAssertEqual(apng.status, 0, apng.stderr)
    }

    /// The `ANIM` chunk's loop count of a WebP file.
    static func webpLoopCount(_ path: String) throws -> Int? {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var i = 12
        while i + 8 <= b.count {
            let tag = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let n = Int(b[i + 4]) | Int(b[i + 5]) << 8 | Int(b[i + 6]) << 16 | Int(b[i + 7]) << 24
            if tag == "ANIM" { return Int(b[i + 12]) | Int(b[i + 13]) << 8 }
            i += 8 + n + (n & 1)
        }
        return nil
    }

    /// A clip where nothing moves (and a one-frame clip) stays an animated
    /// WebP: the timing and --loop kept, and no alpha flag for an opaque source.
    func testAWebPOfAStillClipIsAnAnimationWithoutAlpha() throws {
        var img = Sandbox.pattern(width: 40, height: 30)
        for i in stride(from: 3, to: img.pixels.count, by: 4) { img.pixels[i] = 255 }
        try box.writeImage("img.png", img)
        try box.write("still.lua", "image('img.png')\naddSketch{x = 5, y = 5, w = 20, h = 20}\nprepare()\nwait(1)\n")
        try box.write("one.lua", "image('img.png')\n")
        for (scene, total) in [("still.lua", 1000), ("one.lua", 33)] {
            let out = scene.replacingOccurrences(of: ".lua", with: ".webp")
            let r = try Tool.run([scene, "--backend", "cpu", "-q", "--loop", "2", "-o", out], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: box.path(out))))
            XCTAssertEqual(String(decoding: b[12..<16], as: UTF8.self), "VP8X", "\(scene): an extended file")
            XCTAssertEqual(b[20] & 0x02, 0x02, "\(scene): the animation flag")
            XCTAssertEqual(b[20] & 0x10, 0, "\(scene): no alpha flag for an opaque source")
            XCTAssertEqual(try Self.webpLoopCount(box.path(out)), 3, "\(scene): --loop 2 plays three times")
            guard let py = FormatsTests.python else { continue }
            let script = """
                import sys
                from PIL import Image, ImageChops
                im = Image.open(sys.argv[1]); still = Image.open("img.png").convert("RGB")
                d = []
                for n in range(im.n_frames):
                    im.seek(n); im.load(); d.append(im.info["duration"])
                    f = im.convert("RGB")
                    # the first frame is lossy; every later one repeats it exactly
                    if n == 0: first = f
                    elif ImageChops.difference(f, first).getbbox(): print("frame", n, "differs")
                print(im.n_frames, sum(d))
                """
            let p = try Tool.run(["-c", script, out], cwd: box.url, executable: py)
            XCTAssertEqual(p.stdout, "2 \(total)\n", "\(scene): \(p.stderr)")
        }
    }

    /// ProRes over `ulimit -f`: ffmpeg dies of SIGXFSZ; the line says why.
    func testProResOverTheFileSizeLimitSaysFileTooLarge() throws {
        guard ChildProcess.findExecutable("ffmpeg") != nil else { throw XCTSkip("ffmpeg is not installed") }
        try box.writeImage("mix.png", Self.mixedAlpha())
        try box.write("s.lua", "image('mix.png')\nlocal a = addSketch{x = 5, y = 5, w = 80, h = 60}\nprepare()\nimpulse(a, 1, 0)\nwait(1)\n")
        try box.write("old.mov", "old")
        let r = try Tool.run(["-c", "ulimit -f 40; exec \"$0\" \"$@\"", Tool.executable.path, "s.lua", "--backend", "cpu", "-q", "-o", "old.mov"],
                             cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: video 'old.mov': ffmpeg could not write: File too large (the file size limit, ulimit -f); the old output is kept")
        XCTAssertEqual(try String(contentsOfFile: box.path("old.mov"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }
}

/// `new`, Lua and names (issue 30).
final class NamesAndLuaTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
    }

    override func tearDown() { box = nil }

    private func new(_ args: [String], display: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        env.removeValue(forKey: "SDL_VIDEODRIVER")
        if let display { env["DISPLAY"] = display }
        // (a run that blocks ends after 20 s: status 124)
        let r = try Tool.exec("/usr/bin/timeout", ["20", Tool.executable.path, "new"] + args, cwd: box.url, env: env)
        return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
    }

    /// `new fifo.jpg` blocked forever: the same rule as `image()` now.
    func testNewRefusesAFIFOLikeImage() throws {
        XCTAssertEqual(mkfifo(box.path("fifo.jpg"), 0o644), 0)
        let r = try new(["fifo.jpg"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: new: photo 'fifo.jpg' is not a regular file (it is a FIFO); a scene reads files only (use --image for a pipe)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("fifo.lua")))
    }

    /// The commands `new` suggests are valid: `./-o.lua`, not the option
    /// `-o.lua`; names a shell must quote are quoted so that bash finds
    /// the very file; `--` ends the options.
    func testNewSuggestsCommandsThatWork() throws {
        try FileManager.default.copyItem(atPath: box.path("img.png"), toPath: box.path("-o.png"))
        let r = try new(["./-o.png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, """
            next:
              wobble-run edit ./-o.lua    # a window: place the region, poke it, Ctrl+S saves
              wobble-run ./-o.lua         # renders ./-o.gif

            """)
        let render = try Tool.run(["./-o.lua", "--backend", "cpu", "-q", "--check"], cwd: box.url)
        XCTAssertEqual(render.status, 0, render.stderr)
        try FileManager.default.removeItem(atPath: box.path("-o.lua"))
        let dashes = try new(["--", "-o.png"])
        XCTAssertEqual(dashes.status, 0, dashes.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("-o.lua")))

        for name in ["it's here.png", "a\nb.png", "tab\there.png"] {
            try FileManager.default.copyItem(atPath: box.path("img.png"), toPath: box.path(name))
            let n = try new([name])
            XCTAssertEqual(n.status, 0, n.stderr)
            let edit = try XCTUnwrap(n.stdout.split(separator: "\n").dropFirst().first.map(String.init))
            let prefix = "  wobble-run edit "
            XCTAssertTrue(edit.hasPrefix(prefix), edit)
            let word = String(edit.dropFirst(prefix.count).split(separator: "#")[0]).trimmingCharacters(in: .whitespaces)
            let scene = (name as NSString).deletingPathExtension + ".lua"
            let check = try Tool.exec("/bin/bash", ["-c", "test -f \(word) && printf %s \(word)"], cwd: box.url)
            XCTAssertEqual(check.status, 0, "\(word) names \(scene)")
            XCTAssertEqual(String(decoding: check.stdout, as: UTF8.self), scene)
        }
    }

    /// A DISPLAY that does not answer: the studio says so and exits 1, and
    /// the next steps are there.
    func testADisplayThatDoesNotAnswerStillGetsTheNextSteps() throws {
        let studio = Tool.executable.deletingLastPathComponent().appendingPathComponent("wobble-studio").path
        guard FileManager.default.isExecutableFile(atPath: studio) else { throw XCTSkip("the studio is not built") }
        var n = 250 + Int(getpid() % 50)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { n += 1 }
        let r = try new(["img.png"], display: ":\(n)")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout, """
            next:
              wobble-run edit img.lua    # a window: place the region, poke it, Ctrl+S saves
              wobble-run img.lua         # renders img.gif

            """)
        XCTAssertTrue(r.stderr.hasPrefix("wobble-run: wrote img.lua (40x30: one region in the middle)\nwobble-run: edit: cannot open the display"), r.stderr)
    }

    func check(_ scene: String, _ text: String) throws -> Tool.Result {
        try box.write(scene, text)
        return try Tool.run([scene, "--check", "-q"], cwd: box.url)
    }

    /// `loop(5)`, `loop("x")`: argument errors, as for every global given
    /// more than it takes (nil is no argument).
    func testLoopTakesNoArgument() throws {
        for (arg, type) in [("5", "number"), ("'x'", "string"), ("{}", "table")] {
            let r = try check("l.lua", "image('img.png')\nloop(\(arg))\n")
            XCTAssertEqual(r.status, 1)
            XCTAssertEqual(r.firstError, "l.lua:2: bad argument #1 to 'loop' (no value expected, got \(type))")
        }
        let extra = try check("w.lua", "image('img.png')\nwait(0.1, 2)\n")
        XCTAssertEqual(extra.firstError, "w.lua:2: bad argument #2 to 'wait' (no value expected, got number)")
        XCTAssertEqual(try check("n.lua", "image('img.png')\nloop(nil)\nwait(0.1)\n").status, 0)
    }

    /// A pin is checked on every corner change: `r.lb = r.rb` after
    /// `pin = "bottom"` is the error the other order gives, and the corner stays.
    func testPinsAreCheckedOnEveryCornerChange() throws {
        let line = "sketch: pin = \"bottom\" needs a bottom side, but lb and rb are the same point"
        let after = try check("a.lua", "image('img.png')\nlocal r = addSketch{x = 2, y = 2, w = 20, h = 20, pin = 'bottom'}\nr.lb = r.rb\n")
        XCTAssertEqual(after.status, 1)
        XCTAssertEqual(after.firstError, "a.lua:3: " + line)
        let before = try check("b.lua", "image('img.png')\nlocal r = addSketch{x = 2, y = 2, w = 20, h = 20}\nr.lb = r.rb\nr.pin = 'bottom'\n")
        XCTAssertEqual(before.firstError, "b.lua:4: " + line)
        let kept = try check("c.lua", """
            image('img.png')
            local r = addSketch{x = 2, y = 2, w = 20, h = 20, pin = 'bottom'}
            print(pcall(function() r.lb = r.rb end) == false, r.lb.x, r.lb.y)
            """)
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(kept.stdout, "true\t2.0\t22.0\n")
    }

    /// A scene that starts with ESC (a compiled chunk): the error names it.
    func testACompiledChunkNamesTheScene() throws {
        try Data([0x1B, 0x4C, 0x75, 0x61, 0x54, 0x00]).write(to: URL(fileURLWithPath: box.path("esc.lua")))
        let r = try Tool.run(["esc.lua", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: scene 'esc.lua' is a compiled Lua chunk (its first byte is ESC, as luac writes them); wobble-run runs Lua source text only\n")
    }
}

/// A licence (issue 30): GPL-3.0-or-later, as libimagequant requires, in
/// `LICENSE`, the README and each .deb's `copyright` file.
final class LicenceTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    func testTheLicenceIsStatedAndShipped() throws {
        let license = try String(contentsOf: Self.repo.appendingPathComponent("LICENSE"), encoding: .utf8)
        XCTAssertTrue(license.hasPrefix("                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007"), "the full GPL-3 text")
        XCTAssertGreaterThan(license.count, 30_000)
        let readme = try String(contentsOf: Self.repo.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("## Licence\n") && readme.contains("(GPL-3.0-or-later"), "the README says it")
        let decisions = try String(contentsOf: Self.repo.appendingPathComponent("docs/DECISIONS.md"), encoding: .utf8)
        for library in ["libimagequant", "Lua 5.4", "libpng", "libjpeg-turbo", "giflib", "libwebp", "libglvnd", "SDL2"] {
            XCTAssertTrue(decisions.contains("| \(library)"), "DECISIONS lists \(library)")
        }

        // The packages, from the binaries under test (uncompressed: quick).
        let studio = Tool.executable.deletingLastPathComponent().appendingPathComponent("wobble-studio")
        guard FileManager.default.isExecutableFile(atPath: studio.path) else { throw XCTSkip("the studio is not built") }
        guard ChildProcess.findExecutable("dpkg-deb") != nil, ChildProcess.findExecutable("objdump") != nil else {
            throw XCTSkip("dpkg-deb and objdump are needed")
        }
        let box = try Sandbox()
        let script = Self.repo.appendingPathComponent("Scripts/package-deb.sh").path
        let r = try Tool.run(["-c", "\"$0\" --binary \"$1\" --studio \"$2\" --out debs --compression none", script,
                              Tool.executable.path, studio.path], cwd: box.url, executable: "/bin/bash")
        XCTAssertEqual(r.status, 0, r.stderr)
        for (deb, package) in zip(r.stdout.split(separator: "\n").map(String.init), ["wobble-run", "wobble-studio"]) {
            let c = try Tool.run(["-c", "dpkg-deb --fsys-tarfile \"$0\" | tar -xO ./usr/share/doc/\(package)/copyright", deb],
                                 cwd: box.url, executable: "/bin/bash")
            XCTAssertEqual(c.status, 0, c.stderr)
            XCTAssertTrue(c.stdout.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"), c.stdout)
            XCTAssertTrue(c.stdout.contains("\nFiles: *\n") && c.stdout.contains("\nLicense: GPL-3+\n"), c.stdout)
            XCTAssertTrue(c.stdout.contains("libimagequant (libimagequant0): GPL-3.0-or-later"), c.stdout)
            XCTAssertTrue(c.stdout.contains("/usr/share/common-licenses/GPL-3"), c.stdout)
            // Every package the binary depends on is named with its licence:
            // a library linked tomorrow without a line here fails.
            let f = try Tool.run(["-c", "dpkg-deb -f \"$0\" Depends", deb], cwd: box.url, executable: "/bin/bash")
            XCTAssertEqual(f.status, 0, f.stderr)
            let depends = f.stdout.split(whereSeparator: { $0 == "," || $0 == "\n" })
                .map { String($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") }
                .filter { !$0.isEmpty && $0 != "wobble-run" }
            XCTAssertGreaterThanOrEqual(depends.count, 2, f.stdout)
            for name in depends {
                let named = c.stdout.range(of: "[ (,]\(NSRegularExpression.escapedPattern(for: name))[),]", options: .regularExpression) != nil
                XCTAssertTrue(named, "\(package)'s copyright names the licence of \(name)")
            }
        }
    }
}
