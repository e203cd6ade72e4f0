import Foundation
import WobbleCore
import WobbleMedia
import WobbleSystem
import XCTest

/// `wobble-run pack MANIFEST`: rows rendered in one process, the same bytes
/// as single renders; bad rows alone failing, each on one line; odd names;
/// outputs refused (twice, outside the folder); kills at each stage and
/// the resume; slices and shards byte-identical to one run; `--json`; two
/// packs into one folder at once.
final class PackTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.writeImage("a.png", Sandbox.pattern(width: 40, height: 30))
        try box.writeImage("b.png", Sandbox.pattern(width: 40, height: 30, checker: 5))
        try box.write("s.lua", Sandbox.poke)
    }

    /// The objects of a `--json` run's stdout, by type.
    func objects(_ r: Tool.Result) throws -> (rows: [[String: Any]], summary: [String: Any]?) {
        var rows: [[String: Any]] = [], summary: [String: Any]?
        for line in r.stdout.split(separator: "\n") {
            let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
            if o["type"] as? String == "summary" { summary = o } else { rows.append(o) }
        }
        return (rows.sorted { ($0["row"] as? Int ?? 0) < ($1["row"] as? Int ?? 0) }, summary)
    }

    func bytes(_ name: String, in dir: URL? = nil) throws -> Data {
        try Data(contentsOf: (dir ?? box.url).appendingPathComponent(name))
    }

    /// What a single render of `s.lua` on `image` writes (the reference bytes).
    func single(_ image: String, _ extra: [String] = [], cwd: URL? = nil) throws -> Data {
        let name = "ref-\(UUID().uuidString).gif"
        let r = try Tool.run(["s.lua", "--image", image, "--backend", "cpu", "-q", "-o", name] + extra, cwd: cwd ?? box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        defer { try? FileManager.default.removeItem(at: (cwd ?? box.url).appendingPathComponent(name)) }
        return try bytes(name, in: cwd)
    }

    func pack(_ args: [String], cwd: URL? = nil) throws -> Tool.Result {
        try Tool.run(["pack"] + args + ["--backend", "cpu"], cwd: cwd ?? box.url)
    }

    /// (inode, mtime in ns) of a file.
    func stamp(_ path: String) throws -> [Int] {
        let st = try XCTUnwrap(try Posix.fileStatus(path))
        return [Int(st.st_ino), Int(st.st_mtim.tv_sec) * 1_000_000_000 + Int(st.st_mtim.tv_nsec)]
    }

    // MARK: - Rows

    func testEveryRowIsTheSameBytesAsASingleRenderAndJSONSaysSo() throws {
        try box.write("pack.csv", """
        scene,image,output,fps,width,seed
        s.lua,a.png,out/a.gif,,,
        s.lua,b.png,out/b.gif,20,,
        s.lua,a.png,out/a-small.gif,,20,7

        """)
        let r = try pack(["pack.csv", "--json", "--jobs", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try bytes("out/a.gif"), try single("a.png"))
        XCTAssertEqual(try bytes("out/b.gif"), try single("b.png", ["--fps", "20"]))
        XCTAssertEqual(try bytes("out/a-small.gif"), try single("a.png", ["--width", "20", "--seed", "7"]))
        let (rows, summary) = try objects(r)
        XCTAssertEqual(rows.map { $0["output"] as? String }, ["out/a.gif", "out/b.gif", "out/a-small.gif"])
        XCTAssertEqual(rows.map { $0["status"] as? String }, ["written", "written", "written"])
        XCTAssertEqual(rows.map { $0["frames"] as? Int }, [9, 6, 9])
        XCTAssertEqual(rows.map { $0["line"] as? Int }, [2, 3, 4])
        XCTAssertEqual(rows[2]["width"] as? Int, 20)
        XCTAssertEqual(rows[0]["bytes"] as? Int, try bytes("out/a.gif").count)
        XCTAssertEqual((rows[0]["duration"] as? Double) ?? 0, 0.3, accuracy: 1e-9)
        XCTAssertTrue(rows.allSatisfy { $0["error"] is NSNull && $0["warnings"] is [Any] })
        XCTAssertEqual(summary?["written"] as? Int, 3)
        XCTAssertEqual(summary?["failed"] as? Int, 0)

        // Again: every row is finished, nothing is rendered.
        let again = try pack(["pack.csv", "--json"])
        XCTAssertEqual(again.status, 0, again.stderr)
        let (rows2, summary2) = try objects(again)
        XCTAssertEqual(rows2.map { $0["status"] as? String }, ["skipped", "skipped", "skipped"])
        XCTAssertEqual(rows2.map { $0["frames"] as? Int }, [9, 6, 9])
        XCTAssertEqual(summary2?["skipped"] as? Int, 3)

        // A changed input (the image) and a changed field: those rows only.
        try box.writeImage("b.png", Sandbox.pattern(width: 40, height: 30, checker: 7))
        try box.write("pack.csv", """
        scene,image,output,fps,width,seed
        s.lua,a.png,out/a.gif,,,
        s.lua,b.png,out/b.gif,20,,
        s.lua,a.png,out/a-small.gif,,20,8

        """)
        let third = try pack(["pack.csv", "--json"])
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertEqual(try objects(third).rows.map { $0["status"] as? String }, ["skipped", "written", "written"])
        XCTAssertEqual(try bytes("out/b.gif"), try single("b.png", ["--fps", "20"]))
    }

    func testBadRowsFailAloneEachOnOneLineNamingTheRow() throws {
        try box.write("broken.lua", "image('a.png')\naddSketch{x = 1\n")
        try box.write("pack.csv", """
        scene,image,output,fps
        s.lua,missing.png,m.gif,
        broken.lua,,broken.gif,
        s.lua,a.png,fps.gif,abc
        s.lua,a.png
        s.lua,a.png,good.gif,

        """)
        let r = try pack(["pack.csv", "--json"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("wobble-run: pack.csv:2: ") && $0.contains("missing.png") }, r.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("wobble-run: pack.csv:3: ") && $0.contains("broken.lua:") }, r.stderr)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:4: fps: 'abc' is not a number"), r.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("wobble-run: pack.csv:5: 2 fields, the header has 4") }, r.stderr)
        let last = lines.last ?? ""
        XCTAssertTrue(last.hasPrefix("wobble-run: pack: 5 rows: 1 written, 0 already done, 4 failed, in "), last)
        XCTAssertTrue(last.hasSuffix(" s (pack.csv:2, pack.csv:3, pack.csv:4, pack.csv:5)"), last)
        XCTAssertEqual(try bytes("good.gif"), try single("a.png"))
        let (rows, summary) = try objects(r)
        XCTAssertEqual(rows.map { $0["status"] as? String }, ["failed", "failed", "failed", "failed", "written"])
        XCTAssertEqual(rows[2]["error"] as? String, "fps: 'abc' is not a number")
        XCTAssertEqual(summary?["failed"] as? Int, 4)
        for name in ["m.gif", "broken.gif", "fps.gif"] { XCTAssertNil(Posix.kind(box.path(name)), name) }
        XCTAssertEqual(box.leftovers(), [])

        // A manifest that cannot be read at all: one line, exit 1.
        try box.write("bad.csv", "scene,picture,output\n")
        let bad = try pack(["bad.csv"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderr, "wobble-run: bad.csv:1: unknown column 'picture' (the columns are scene, image, output, preset, fps, width, frames, seed)\n")
        let none = try pack(["nothing.csv"])
        XCTAssertEqual(none.stderr, "wobble-run: manifest 'nothing.csv': no such file\n")
    }

    func testOddNamesInCSVQuotingAndJSONLines() throws {
        let image = "my, \"best\" photo ü.png"
        try box.writeImage(image, Sandbox.pattern(width: 40, height: 30, checker: 4))
        try FileManager.default.createDirectory(atPath: box.path("scènes dir"), withIntermediateDirectories: true)
        try box.write("scènes dir/s 1.lua", Sandbox.poke.replacingOccurrences(of: "img.png", with: "../a.png"))
        try box.write("pack.csv", """
        scene , image , output
        "scènes dir/s 1.lua","my, ""best"" photo ü.png","out put/ünï, ""x"".gif"
        s.lua,"a.png",'quote.gif
        s.lua,a.png,"multi
        line.gif"

        """)
        let r = try pack(["pack.csv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try bytes("out put/ünï, \"x\".gif"), try single(image))
        XCTAssertEqual(try bytes("'quote.gif"), try single("a.png"))
        XCTAssertEqual(try bytes("multi\nline.gif"), try single("a.png"))

        try box.write("pack.jsonl", """
        {"scene": "scènes dir/s 1.lua", "image": "my, \\"best\\" photo ü.png", "output": "json/ünï.gif", "seed": 3}
        {"scene": "s.lua", "image": "b.png", "output": "json/b.gif", "fps": 15}

        """)
        let j = try pack(["pack.jsonl", "--json"])
        XCTAssertEqual(j.status, 0, j.stderr)
        XCTAssertEqual(try bytes("json/ünï.gif"), try single(image, ["--seed", "3"]))
        XCTAssertEqual(try bytes("json/b.gif"), try single("b.png", ["--fps", "15"]))
        XCTAssertEqual(try objects(j).rows.map { $0["output"] as? String }, ["json/ünï.gif", "json/b.gif"])
    }

    func testDuplicateAndOutsideOutputsAreRefused() throws {
        let outside = try Sandbox()
        try FileManager.default.createSymbolicLink(atPath: box.path("planted"), withDestinationPath: outside.path)
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("pack.csv", """
        scene,image,output
        s.lua,a.png,dup.gif
        s.lua,b.png,./sub/../dup.gif
        s.lua,a.png,../escape.gif
        s.lua,a.png,\(outside.path("abs.gif"))
        s.lua,a.png,planted/x.gif
        s.lua,a.png,frames/
        s.lua,a.png,fine.gif

        """)
        let r = try pack(["pack.csv"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:2: output 'dup.gif' is also the output of pack.csv:3 (each row writes its own file)"), r.stderr)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:3: output 'sub/../dup.gif' is also the output of pack.csv:2 (each row writes its own file)"), r.stderr)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:4: output '../escape.gif' is outside the manifest's folder"), r.stderr)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:5: output '\(outside.path("abs.gif"))' is outside the manifest's folder"), r.stderr)
        XCTAssertTrue(lines.contains("wobble-run: pack.csv:6: output 'planted/x.gif' leads outside the manifest's folder through a symbolic link"), r.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("wobble-run: pack.csv:7: output 'frames/': a pack row writes one file") }, r.stderr)
        XCTAssertEqual(try outside.list(), [])
        XCTAssertNil(Posix.kind(box.path("dup.gif")))
        XCTAssertNil(Posix.kind((box.path as NSString).deletingLastPathComponent + "/escape.gif"))
        XCTAssertEqual(try bytes("fine.gif"), try single("a.png"))
    }

    func testOnATerminalAProgressLineCountsRowsAndTheTimeLeft() throws {
        guard let script = ChildProcess.findExecutable("script") else { throw XCTSkip("no script(1) to give the pack a terminal") }
        try box.write("pack.csv", "scene,image,output\ns.lua,a.png,a.gif\ns.lua,b.png,b.gif\n")
        let command = "\(ScenePaths.shellWord(Tool.executable.path)) pack pack.csv --jobs 1 --backend cpu"
        let r = try Tool.run(["-qec", command, "/dev/null"], cwd: box.url, executable: script)
        XCTAssertEqual(r.status, 0, r.stdout)
        let shown = r.stdout.replacingOccurrences(of: "\r", with: "\n")
        XCTAssertTrue(shown.range(of: #"pack: 1/2 rows  [0-9.]+ clips/min  0:[0-9]{2} left"#, options: .regularExpression) != nil, shown)
        XCTAssertTrue(shown.contains("pack: 2/2 rows"), shown)
        XCTAssertTrue(shown.contains("wobble-run: pack: 2 rows: 2 written, 0 already done, 0 failed, in "), shown)
    }

    // MARK: - Kills and resume

    /// Four rows, one at a time; stopped at `stage`, then run again.
    func killThenResume(_ stage: String, expect status: Int32, finished: Int) throws {
        let dir = try Sandbox()
        try dir.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try dir.writeImage("a.png", Sandbox.pattern(width: 40, height: 30))
        try dir.writeImage("b.png", Sandbox.pattern(width: 40, height: 30, checker: 5))
        try dir.write("s.lua", Sandbox.poke)
        try dir.write("pack.csv", "scene,image,output\n" + (0..<4).map { "s.lua,\($0 % 2 == 0 ? "a" : "b").png,o\($0).gif\n" }.joined())
        let (p, out, err) = try Tool.start(["pack", "pack.csv", "--backend", "cpu", "--jobs", "1", "--stop-at", stage], cwd: dir.url)
        _ = Tool.drain(out, err)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, status, stage)
        let done = (0..<4).filter { Posix.kind(dir.path("o\($0).gif")) != nil }
        var stamps: [Int: [Int]] = [:]
        for i in done { stamps[i] = try stamp(dir.path("o\(i).gif")) }

        let r = try Tool.run(["pack", "pack.csv", "--backend", "cpu", "--jobs", "1", "--json"], cwd: dir.url)
        XCTAssertEqual(r.status, 0, "\(stage): \(r.stderr)")
        let rows = try objects(r).rows
        XCTAssertEqual(rows.map { $0["status"] as? String }, (0..<4).map { $0 < finished ? "skipped" : "written" }, stage)
        for i in 0..<finished { XCTAssertEqual(try stamp(dir.path("o\(i).gif")), stamps[i], "\(stage): row \(i) was rendered again") }
        let a = try single("a.png"), b = try single("b.png")
        for i in 0..<4 { XCTAssertEqual(try Data(contentsOf: dir.url.appendingPathComponent("o\(i).gif")), i % 2 == 0 ? a : b, "\(stage) o\(i)") }
        XCTAssertEqual(dir.leftovers(), [], stage)
        XCTAssertEqual(try dir.list(".wobble-pack").filter { !$0.hasPrefix("slice-") && !$0.hasPrefix("assemble-") }, ["journal", "lock"], stage)
    }

    func testAKillAtEveryStageThenTheResumeRedoesNoFinishedRowAndLeavesNoDebris() throws {
        try killThenResume("claimed", expect: SIGKILL, finished: 0)
        try killThenResume("row-start:2", expect: SIGKILL, finished: 2)
        try killThenResume("row-written:1", expect: SIGKILL, finished: 1)
        try killThenResume("journal:1", expect: SIGKILL, finished: 1)
        try killThenResume("row-start:3:INT", expect: 130, finished: 3)
    }

    func testAKillInTheMiddleOfARowLeavesNothingHalfWritten() throws {
        // A longer clip, so the kill lands while frames are being written.
        try box.write("long.lua", "image('a.png') addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(1, 1, 0) wait(20)")
        try box.write("pack.csv", "scene,image,output\nlong.lua,,long.gif\n")
        let (p, out, err) = try Tool.start(["pack", "pack.csv", "--backend", "cpu"], cwd: box.url)
        var sawTemporary = false
        for _ in 0..<600 where p.isRunning {
            if box.leftovers().contains(where: { !$0.hasPrefix(".wobble-pack") }) { sawTemporary = true; break }
            usleep(20_000)
        }
        kill(p.processIdentifier, SIGKILL)
        _ = Tool.drain(out, err)
        p.waitUntilExit()
        XCTAssertTrue(sawTemporary, "the kill came before the output's temporary file")
        XCTAssertNil(Posix.kind(box.path("long.gif")))
        try box.write("pack.csv", "scene,image,output\ns.lua,a.png,short.gif\n")
        let r = try pack(["pack.csv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(box.leftovers(), [], "the next pack removes what the killed one left")
    }

    // MARK: - Slices and shards

    func testSlicesAndShardsMakeTheSameBytesAsOneRun() throws {
        try box.write("long.lua", "image('a.png') addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(1, 1, 0) wait(1)")
        let manifest = "scene,image,output\n" + (0..<5).map { "s.lua,\($0 % 2 == 0 ? "a" : "b").png,o\($0).gif\n" }.joined() + "long.lua,,long.gif\n"
        let one = try Sandbox(), sliced = try Sandbox(), auto = try Sandbox()
        for d in [one, sliced, auto] {
            try d.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
            try d.writeImage("a.png", Sandbox.pattern(width: 40, height: 30))
            try d.writeImage("b.png", Sandbox.pattern(width: 40, height: 30, checker: 5))
            try d.write("s.lua", Sandbox.poke)
            try d.write("long.lua", "image('a.png') addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(1, 1, 0) wait(1)")
            try d.write("pack.csv", manifest)
        }
        var r = try pack(["pack.csv"], cwd: one.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        // Three slices, one after another; the long clip (30 frames) in three shards.
        for i in 0..<3 {
            r = try pack(["pack.csv", "--slice", "\(i)/3", "--shard-frames", "10", "--json"], cwd: sliced.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            let rows = try objects(r).rows
            XCTAssertEqual(rows.filter { $0["shard"] != nil }.map { $0["shard"] as? String }, ["\(i)/3"])
            XCTAssertEqual(rows.filter { $0["shard"] == nil }.map { $0["row"] as? Int }, (0..<5).filter { $0 % 3 == i })
        }
        // Slurm's job array through --slice auto (an array 1-2, so the ids are offset).
        for id in 1...2 {
            let env = ["SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "1",
                       "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
            let (p, out, err) = try Tool.start(["pack", "pack.csv", "--slice", "auto", "--backend", "cpu", "--shard-frames", "10"], cwd: auto.url, env: env)
            let (_, e) = Tool.drain(out, err)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, String(decoding: e, as: UTF8.self))
        }
        for name in (0..<5).map({ "o\($0).gif" }) + ["long.gif"] {
            let reference = try bytes(name, in: one.url)
            XCTAssertEqual(try bytes(name, in: sliced.url), reference, name)
            XCTAssertEqual(try bytes(name, in: auto.url), reference, name)
        }
        XCTAssertEqual(try sliced.list(".wobble-pack/shards"), [], "the shards' frames go once assembled")
        // Every row is finished for the unsliced run too.
        r = try pack(["pack.csv", "--json"], cwd: sliced.url)
        XCTAssertEqual(try objects(r).summary?["skipped"] as? Int, 6)
    }

    func testAShardKilledIsRenderedAgainAndTheLastSliceAssembles() throws {
        try box.write("long.lua", "image('a.png') addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(1, 1, 0) wait(0.7)")
        try box.write("pack.csv", "scene,image,output\nlong.lua,,long.gif\n")
        let reference = try Tool.run(["long.lua", "--backend", "cpu", "-q", "-o", "ref.gif"], cwd: box.url)
        XCTAssertEqual(reference.status, 0, reference.stderr)
        let (p, out, err) = try Tool.start(["pack", "pack.csv", "--backend", "cpu", "--slice", "0/2", "--shard-frames", "5",
                                            "--stop-at", "shard-written:0"], cwd: box.url)
        _ = Tool.drain(out, err)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, SIGKILL)
        for i in [1, 0] {
            let r = try pack(["pack.csv", "--slice", "\(i)/2", "--shard-frames", "5", "--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(try objects(r).rows.map { $0["status"] as? String }, [i == 1 ? "shard" : "written"], "slice \(i)")
        }
        XCTAssertEqual(try bytes("long.gif"), try bytes("ref.gif"))
        XCTAssertEqual(box.leftovers(), [])
        XCTAssertEqual(try box.list(".wobble-pack/shards"), [])
    }

    /// The pack's state folder is named by wobble-run, and so is all it
    /// holds: a link planted there (a pack folder shipped with one) is never
    /// written through. The journal replaces it; a lock file that is a link
    /// is refused (its holder writes into it); a shard folder that is a link
    /// is not entered.
    func testLinksPlantedInTheStateFolderAreNeverFollowed() throws {
        let victim = Data("precious\n".utf8)
        try victim.write(to: box.url.appendingPathComponent("victim.txt"))
        try FileManager.default.createDirectory(atPath: box.path(".wobble-pack"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: box.path(".wobble-pack/lock"), withDestinationPath: "../victim.txt")
        try box.write("pack.csv", "scene,image,output\ns.lua,a.png,o.gif\n")
        let locked = try pack(["pack.csv"])
        XCTAssertEqual(locked.status, 1)
        XCTAssertEqual(locked.firstError, "wobble-run: open './.wobble-pack/lock': Too many levels of symbolic links")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("o.gif")))
        try FileManager.default.removeItem(atPath: box.path(".wobble-pack/lock"))
        // The slice's claim (its holder writes the manifest's identity into it).
        try FileManager.default.createSymbolicLink(atPath: box.path(".wobble-pack/slice-0-of-1"), withDestinationPath: "../victim.txt")
        let claimed = try pack(["pack.csv"])
        XCTAssertEqual(claimed.status, 1)
        XCTAssertEqual(claimed.firstError, "wobble-run: open './.wobble-pack/slice-0-of-1': Too many levels of symbolic links")
        XCTAssertEqual(try bytes("victim.txt"), victim)
        try FileManager.default.removeItem(atPath: box.path(".wobble-pack/slice-0-of-1"))
        try FileManager.default.createSymbolicLink(atPath: box.path(".wobble-pack/journal"), withDestinationPath: "../victim.txt")
        let r = try pack(["pack.csv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try bytes("o.gif"), try single("a.png"))
        XCTAssertEqual(Posix.kind(box.path(".wobble-pack/journal"), follow: false), .regular)
        XCTAssertEqual(try bytes("victim.txt"), victim)
        // A long row in shards: the shards folder planted as a link to a folder outside.
        try FileManager.default.createDirectory(atPath: box.path("elsewhere"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: box.path(".wobble-pack/shards"), withDestinationPath: "../elsewhere")
        try box.write("long.lua", "image('a.png') addSketch{x = 8, y = 6, w = 24, h = 18} prepare() impulse(1, 1, 0) wait(1)")
        try box.write("long.csv", "scene,image,output\nlong.lua,,long.gif\n")
        let sharded = try pack(["long.csv", "--slice", "0/2", "--shard-frames", "10"])
        XCTAssertEqual(sharded.status, 1)
        XCTAssertTrue(sharded.stderr.contains("'./.wobble-pack/shards' is not a folder (the pack's state folder names it itself: remove what is there)"), sharded.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("elsewhere")), [])
        XCTAssertEqual(try bytes("victim.txt"), victim)
    }

    func testSliceUsageErrors() throws {
        try box.write("pack.csv", "scene,image,output\n")
        let env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        func run(_ args: [String], _ extra: [String: String]) throws -> (Int32, String) {
            let (p, out, err) = try Tool.start(["pack", "pack.csv"] + args, cwd: box.url, env: env.merging(extra) { $1 })
            let (_, e) = Tool.drain(out, err)
            p.waitUntilExit()
            return (p.terminationStatus, String(decoding: e, as: UTF8.self))
        }
        XCTAssertEqual(try run(["--slice", "3/3"], [:]).1, "wobble-run: --slice: 3/3: I must be less than N (0 to 2)\n")
        XCTAssertEqual(try run(["--slice", "auto"], [:]).1, "wobble-run: --slice auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --slice I/N\n")
        XCTAssertEqual(try run(["--slice", "auto"], ["JOB_COMPLETION_INDEX": "1"]).0, 2)
        XCTAssertEqual(try run(["--slice", "auto/4", "--json"], ["JOB_COMPLETION_INDEX": "1"]).0, 0)
        XCTAssertEqual(try run(["--slice", "auto/3"], ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4"]).1,
                       "wobble-run: --slice auto/3: the Slurm array has 4 tasks, not 3\n")
    }

    // MARK: - Two packs at once

    func testTwoPacksIntoOneFolderAtOnceTakeTurns() throws {
        try box.write("one.csv", "scene,image,output\ns.lua,a.png,one.gif\n")
        try box.write("two.csv", "scene,image,output\ns.lua,b.png,two.gif\n")
        let release = box.path("release")
        let (first, out1, err1) = try Tool.start(["pack", "one.csv", "--backend", "cpu", "--hold-until", release], cwd: box.url)
        for _ in 0..<1000 where Posix.kind(release + ".claimed") == nil { usleep(10_000) }
        XCTAssertNotNil(Posix.kind(release + ".claimed"), "the first pack did not claim the folder")
        let (second, out2, err2) = try Tool.start(["pack", "two.csv", "--backend", "cpu"], cwd: box.url)
        // The second says it waits, and writes nothing meanwhile.
        var said = Data()
        for _ in 0..<1000 where !String(decoding: said, as: UTF8.self).contains("waiting") {
            let chunk = err2.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += chunk
        }
        XCTAssertEqual(String(decoding: said, as: UTF8.self),
                       "wobble-run: pack: another pack (or this slice of this pack) is being rendered into this folder: waiting for it to finish\n")
        XCTAssertNil(Posix.kind(box.path("two.gif")))
        XCTAssertNil(Posix.kind(box.path("one.gif")))
        try box.write("release", "")
        _ = Tool.drain(out1, err1)
        first.waitUntilExit()
        _ = Tool.drain(out2, err2)
        second.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        XCTAssertEqual(second.terminationStatus, 0)
        XCTAssertEqual(try bytes("one.gif"), try single("a.png"))
        XCTAssertEqual(try bytes("two.gif"), try single("b.png"))
        // Both are in the journal: neither renders again.
        for m in ["one.csv", "two.csv"] {
            XCTAssertEqual(try objects(try pack([m, "--json"])).summary?["skipped"] as? Int, 1, m)
        }
    }
}
