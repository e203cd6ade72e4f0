import Foundation
import XCTest

/// The Lua fuzzer's path family on the built tool (issue 9): scenes that
/// call `output`, `image`, `enableMotion`, `require`, `dofile`, `loadfile`
/// with hostile paths, rendered for real. Asserts: no crash (no exit of 128
/// or more), no hang (`--timeout`), no file's text in any output, nothing
/// outside the scene's folder written or removed (canaries, byte for byte;
/// no new files), the scene's own inputs intact, no temporary files left.
///
/// `WOBBLE_FUZZ_PATH_SCENES` sets the number of scenes (default 40),
/// `WOBBLE_FUZZ_SEED` the seed (default 1).
final class PathFuzzE2ETests: XCTestCase {
    static let canary = "CANARY-e2e-91c4"


    func testHostileOutputPathsWriteNothingOutside() throws {
        let env = ProcessInfo.processInfo.environment
        let scenes = Int(env["WOBBLE_FUZZ_PATH_SCENES"] ?? "") ?? 40
        var r = SplitMix64(state: (UInt64(env["WOBBLE_FUZZ_SEED"] ?? "") ?? 1) &+ 0xE2E)
        let box = try Sandbox()
        let fm = FileManager.default
        for d in ["scene", "scene/sub", "scene/frames", "outside", "outside/dir"] {
            try fm.createDirectory(atPath: box.path(d), withIntermediateDirectories: true)
        }
        let outside = box.path("outside")
        try box.writeImage("scene/img.png", Sandbox.pattern(width: 24, height: 16))
        try box.writeImage("outside/photo.png", Sandbox.pattern(width: 8, height: 8))
        let planted: [(String, String)] = [
            ("outside/photo.gif", "GIF89a \(Self.canary)"), ("outside/secret.csv", "\(Self.canary),1,2\n"),
            ("outside/evil.lua", "PWNED = true return 'pwned'\n"), ("scene/t.csv", "t,ax,ay\n0.05,2,0\n"),
            ("scene/mod.lua", "return 1\n"), ("scene/frames/frame_00000.png", "mine"),
        ] + (0..<8).map { (String(format: "outside/dir/frame_%05d.png", $0), "\(Self.canary) \($0)") }
        for (name, text) in planted { try box.write(name, text) }
        for (name, target) in [("scene/out", "../outside"), ("scene/up", ".."), ("scene/dang", "../outside/nope.gif"),
                               ("scene/photo.gif", "../outside/photo.gif"), ("scene/odir", "../outside/dir"),
                               ("scene/loop", "loop")] {
            try fm.createSymbolicLink(atPath: box.path(name), withDestinationPath: target)
        }
        mkfifo(box.path("scene/fifo"), 0o600)
        func snapshot(_ dir: String) -> [String: Data] {
            var out: [String: Data] = [:]
            let e = fm.enumerator(atPath: box.path(dir))
            while let f = e?.nextObject() as? String {
                var st = stat()
                if lstat(box.path(dir + "/" + f), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
                    out[f] = fm.contents(atPath: box.path(dir + "/" + f))
                } else {
                    out[f] = Data()
                }
            }
            return out
        }
        let outsideBefore = snapshot("outside")
        let inputs = ["img.png", "t.csv", "mod.lua"]
        let inputsBefore = try inputs.map { try Data(contentsOf: URL(fileURLWithPath: box.path("scene/" + $0))) }
        let rootBefore = box.files()

        let parts = ["'..'", "'.'", "'sub'", "'out'", "'up'", "'dang'", "'photo.gif'", "'odir'", "'loop'", "'fifo'",
                     "'frames'", "'img.png'", "'t.csv'", "'mod.lua'", "'x.gif'", "'y_%03d.png'", "'outside'", "'dir'",
                     "'scene'", "'a\\0b'", "'\\255'", "string.rep('n', 300)", "''", "'SUB'"]
        let absolute = ["'/'", "'/tmp/'", "'/dev/null'", "'/dev/full'", "'/dev/stdout'", "'/proc/self/cwd/..'",
                        "'\(outside)'", "'\(outside)/'", "'\(outside)/photo.gif'", "'\(outside)/dir/'",
                        "'\(outside)/dir/frame_%05d.png'", "'\(outside)/new.gif'", "'\(outside)/new/'"]
        func path() -> String {
            var e: [String] = []
            if r.int(3) == 0 { e.append(r.pick(absolute)) }
            for _ in 0..<(r.int(3) + (e.isEmpty ? 1 : 0)) { e.append(r.pick(parts)) }
            return e.joined(separator: " .. '/' .. ") + r.pick(["", "", " .. '/'", " .. '.gif'", " .. '_%02d.png'"])
        }
        var statuses: [Int32: Int] = [:]
        for k in 0..<scenes {
            var src = "image('img.png')\naddSketch{x = 4, y = 4, w = 12, h = 8}\nprepare()\nimpulse(1, 1, 0)\n"
            for _ in 0..<4 {
                let call = r.pick(["output(\(path()))", "image(\(path()))", "enableMotion(\(path()))",
                                   "dofile(\(path()))", "loadfile(\(path()))", "require(\(path()))",
                                   "enableMotion('\(outside)/secret.csv')"])
                src += "print(select(2, pcall(function() local v = \(call) return v end)))\n"
            }
            src += r.int(2) == 0 ? "output(\(path()))\n" : "pcall(output, \(path()))\n"
            src += "assert(not PWNED, 'code from outside ran')\nwait(0.1)\n"
            try box.write("scene/s.lua", src)
            let res = try Tool.run(["s.lua", "--backend", "cpu", "--timeout", "20", "-q"], cwd: box.url.appendingPathComponent("scene"))
            statuses[res.status, default: 0] += 1
            XCTAssertLessThan(res.status, 128, "scene \(k) crashed:\n\(src)\n\(res.stderr)")
            XCTAssertTrue([0, 1, 2].contains(res.status), "scene \(k): \(res.status)\n\(src)\n\(res.stderr)")
            if res.status != 0 { XCTAssertFalse(res.firstError.isEmpty, "scene \(k): no error line\n\(src)") }
            XCTAssertFalse(res.stdout.contains(Self.canary) || res.stderr.contains(Self.canary), "scene \(k) leaked a file:\n\(src)\n\(res.stderr)")
            XCTAssertFalse(res.stderr.contains("code from outside ran"), "scene \(k):\n\(src)")
            XCTAssertEqual(snapshot("outside"), outsideBefore, "scene \(k) changed a file outside:\n\(src)\n\(res.stderr)")
            XCTAssertEqual(box.files(), rootBefore, "scene \(k) wrote beside the scene's folder:\n\(src)")
            XCTAssertEqual(try inputs.map { try Data(contentsOf: URL(fileURLWithPath: box.path("scene/" + $0))) }, inputsBefore,
                           "scene \(k) replaced an input:\n\(src)\n\(res.stderr)")
            XCTAssertTrue(box.leftovers().isEmpty, "scene \(k): \(box.leftovers())")
            if testRun?.failureCount ?? 0 > 5 { break }
        }
        print("path fuzz (tool): \(scenes) scenes, exit statuses \(statuses.sorted { $0.key < $1.key })")
    }
}
