import XCTest
import WobbleTestSupport
import Foundation
@testable import WobbleScript
import WobbleCore

/// The Lua fuzzer's path family (issue 9): hostile paths (`..` chains,
/// absolute paths, links out of the folder, dangling and looping links,
/// empty, NUL bytes, very long names, non-UTF-8 bytes, `/dev/*`,
/// `/proc/self/...`, FIFOs, case variants, trailing slashes, printf
/// patterns) given to `image`, `output`, `enableMotion`, `require`,
/// `dofile` and `loadfile`, each under pcall. Asserts: no crash and no hang,
/// every failure a clean positioned string, no file's text in any message
/// (the files outside hold a canary), no code from outside the folder ever
/// runs, every `output()` that was accepted lies inside the scene's folder
/// (after links), and the canary files outside are byte-for-byte intact.
///
/// `WOBBLE_FUZZ_PATH_CASES` sets the number of calls (default 2000),
/// `WOBBLE_FUZZ_SEED` the seed (default 1). `PathFuzzE2ETests` renders
/// such scenes with the built tool.
final class PathFuzzTests: XCTestCase {
    static let canary = "CANARY-7f3e-secret"

    /// The sandbox: `root/scene` is the scene's folder, `root/outside` holds
    /// the canaries; links, a FIFO and look-alikes inside the scene's folder.
    struct Layout {
        let root: String
        var scene: String { root + "/scene" }
        var outside: String { root + "/outside" }

        init() {
            var template = Array("/tmp/wf-XXXXXX".utf8CString)
            guard let p = mkdtemp(&template) else { fatalError("mkdtemp failed") }
            root = String(cString: p)
            let fm = FileManager.default
            for d in ["scene", "scene/sub", "scene/lib", "outside", "outside/dir"] {
                try? fm.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true)
            }
            let files: [(String, String)] = [
                ("outside/secret.csv", "\(PathFuzzTests.canary),1,2\n"),
                ("outside/secret.lua", "x = = '\(PathFuzzTests.canary)'\n"),
                ("outside/evil.lua", "PWNED = true return 'pwned'\n"),
                ("outside/photo.gif", "GIF89a \(PathFuzzTests.canary)"),
                ("outside/dir/frame_00001.png", PathFuzzTests.canary),
                ("outside/dir/frame_00002.png", PathFuzzTests.canary),
                ("scene/t.csv", "t,ax,ay\n0.1,2,0\n"),
                ("scene/bad.csv", "0.1,\(PathFuzzTests.canary),1\n"),
                ("scene/mod.lua", "return {ok = true}\n"),
                ("scene/lib/util.lua", "return 42\n"),
                ("scene/broken.lua", "local = '\(PathFuzzTests.canary)\n"),
            ]
            for (name, text) in files { try? text.write(toFile: root + "/" + name, atomically: false, encoding: .utf8) }
            let links: [(String, String)] = [
                ("scene/out", "../outside"), ("scene/up", ".."), ("scene/loop", "loop"), ("scene/dang", "../outside/nope"),
                ("scene/evil.lua", "../outside/evil.lua"), ("scene/lib/evil.lua", "../../outside/evil.lua"),
                ("scene/photo.gif", "../outside/photo.gif"), ("scene/secret.csv", "../outside/secret.csv"),
                ("scene/root", "/"), ("scene/proc", "/proc/self"),
            ]
            for (name, target) in links { try? fm.createSymbolicLink(atPath: root + "/" + name, withDestinationPath: target) }
            mkfifo(root + "/scene/fifo", 0o600)
            mkfifo(root + "/scene/fifo.lua", 0o600)
            mkfifo(root + "/outside/fifo.csv", 0o600)
        }

        /// Every regular file below `outside`, with its bytes.
        func snapshot() -> [String: Data] {
            var out: [String: Data] = [:]
            let e = FileManager.default.enumerator(atPath: outside)
            while let f = e?.nextObject() as? String {
                var st = stat()
                guard lstat(outside + "/" + f, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                out[f] = FileManager.default.contents(atPath: outside + "/" + f)
            }
            return out
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A hostile path as a Lua expression.
    static func hostilePath(_ r: inout SplitMix64, outside: String) -> String {
        let absolute = ["'/'", "'//'", "'/etc/passwd'", "'/etc/'", "'/dev/zero'", "'/dev/null'", "'/dev/stdin'",
                        "'/dev/stdout'", "'/dev/full'", "'/dev/urandom'", "'/proc/self/environ'", "'/proc/self/cwd'",
                        "'/proc/self/fd/0'", "'/proc/self/mem'", "'/proc/self/root/etc/passwd'", "'/tmp'",
                        "'\(outside)'", "'\(outside)/'", "'\(outside)/photo.gif'", "'\(outside)/dir/'",
                        "'\(outside)/dir/frame_%05d.png'", "'\(outside)/secret.csv'", "'\(outside)/evil.lua'",
                        "'\(outside)/fifo.csv'"]
        let parts = ["'..'", "'.'", "''", "'sub'", "'SUB'", "'out'", "'Out'", "'up'", "'loop'", "'dang'", "'fifo'",
                     "'fifo.lua'", "'root'", "'proc'", "'lib'", "'evil.lua'", "'photo.gif'", "'secret.csv'", "'t.csv'",
                     "'bad.csv'", "'mod.lua'", "'broken.lua'", "'x.gif'", "'frame_%05d.png'", "'%d'", "'%n%s'", "'-'",
                     "'~'", "'a\\0b'", "'\\255\\254'", "'\\xc3\\x28'", "'é.png'", "string.rep('a', 255)",
                     "string.rep('b', 256)", "string.rep('c/', 2100)", "'outside'", "'scene'", "' '", "'.lua'"]
        var expr: [String] = []
        if r.chance(probability: 0.3) { expr.append(r.pick(absolute)) }
        for _ in 0..<(r.int(4) + (expr.isEmpty ? 1 : 0)) { expr.append(r.pick(parts)) }
        var joined = expr.joined(separator: " .. '/' .. ")
        switch r.int(6) {
        case 0: joined += " .. '/'"
        case 1: joined += " .. '//'"
        case 2: joined += " .. '.gif'"
        default: break
        }
        return joined
    }

    /// A hostile module name for `require`.
    static func hostileModule(_ r: inout SplitMix64) -> String {
        r.pick(["'..x'", "'a..b'", "'.x'", "'x.'", "'/etc/passwd'", "'evil'", "'lib.evil'", "'up.outside.evil'",
                "'out.evil'", "'root.etc.passwd'", "'mod'", "'lib.util'", "'lib/util'", "'fifo'", "'broken'", "''",
                "'a\\0b'", "'\\255'", "string.rep('m', 300)", "'string'", "'_G'", "'proc.environ'", "'dang'", "'loop'",
                "'outside.secret'", "'up.scene.mod'", "'~'", "'%'", "'sub'", "'sub.'", "'.'", "'..'"])
    }

    /// One hostile call as a Lua expression.
    static func pathOperation(_ r: inout SplitMix64, outside: String) -> String {
        let p = hostilePath(&r, outside: outside)
        switch r.int(12) {
        case 0, 1: return "output(\(p))"
        case 2: return "image(\(p))"
        case 3, 4: return "enableMotion(\(p))"
        case 5: return "require(\(hostileModule(&r)))"
        case 6: return "(function() package.path = \(p) .. '?.lua' package.searchers = {function() return function() return 'pwned' end end} return require(\(hostileModule(&r))) end)()"
        case 7: return "dofile(\(p))"
        case 8: return "loadfile(\(p), \(r.pick(["'b'", "'t'", "'bt'", "nil", "'x'"])), \(r.pick(["{}", "nil", "_G"])))"
        case 9: return "(function() local f = loadfile(\(p)) return f and f() end)()"
        case 10: return r.pick(["dofile()", "loadfile()", "require()", "output()", "image()", "enableMotion(nil)",
                                "output(\(p), \(p))", "image(\(p) .. '.png')"])
        default: return "output(\(p)), wait(0.01)"
        }
    }

    static let harness = """
    local canary = ...
    local fuzzCalls, fuzzErrors = 0, 0
    local function clean(msg)
      if type(msg) ~= 'string' then return false end
      if msg:find(canary, 1, true) then error('FUZZ: a file\\'s text in a message: ' .. msg, 0) end
      if msg == 'not enough memory' then return true end
      return msg:match('^[^\\n]-:%d+:') ~= nil
    end
    function R(ok, ...)
      fuzzCalls = fuzzCalls + 1
      if PWNED then error('FUZZ: code from outside the folder ran', 0) end
      if ok then
        for i = 1, select('#', ...) do
          local v = select(i, ...)
          if v == 'pwned' then error('FUZZ: code from outside the folder ran', 0) end
          if type(v) == 'string' and v:find(canary, 1, true) then error('FUZZ: a file\\'s text in a result', 0) end
        end
      else
        fuzzErrors = fuzzErrors + 1
        if not clean((...)) then error('FUZZ: unclean error: ' .. tostring((...)), 0) end
      end
    end
    function FUZZ_SUMMARY() return fuzzCalls, fuzzErrors end
    image('cat.png')
    """

    func testHostilePathsFailCleanlyAndStayInside() throws {
        let env = ProcessInfo.processInfo.environment
        let cases = Int(env["WOBBLE_FUZZ_PATH_CASES"] ?? "") ?? 2000
        let seed = UInt64(env["WOBBLE_FUZZ_SEED"] ?? "") ?? 1
        let layout = Layout()
        defer { layout.remove() }
        let before = layout.snapshot()
        XCTAssertEqual(before.count, 6)
        guard let base = PathPolicy.realPath(layout.scene) else { return XCTFail("no scene folder") }
        var r = SplitMix64(state: seed &+ 0x5A17)
        let perScript = 100
        var done = 0, scripts = 0, accepted = 0, runtimeEnds = 0
        let start = Date()
        while done < cases {
            let n = min(perScript, cases - done)
            var src = PathFuzzTests.harness.replacingOccurrences(of: "local canary = ...", with: "local canary = '\(PathFuzzTests.canary)'") + "\n"
            // Not a tail call: an error raised at level 2 keeps the caller's position.
            for _ in 0..<n {
                src += "R(pcall(function() local t = table.pack(\(PathFuzzTests.pathOperation(&r, outside: layout.outside))) return table.unpack(t, 1, t.n) end))\n"
            }
            src += "if PWNED then error('FUZZ: code from outside the folder ran', 0) end\n"
            let unprotected = r.chance(probability: 0.5)
            if unprotected { src += "local _ = " + PathFuzzTests.pathOperation(&r, outside: layout.outside) + "\n" }
            try src.write(toFile: layout.scene + "/scene.lua", atomically: false, encoding: .utf8)
            var options = ScriptOptions(scriptPath: layout.scene + "/scene.lua") { path in
                // A stub loader that reads nothing but must only see regular files.
                var st = stat()
                if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG { XCTFail("image loader got a non-file: \(path)") }
                return (200, 100)
            }
            options.timeout = 60
            do {
                let res = try ScriptHost(options: options).run()
                if let out = res.outputPath {
                    accepted += 1
                    switch PathPolicy.canonical(out) {
                    case .success(let c):
                        XCTAssertTrue(c == base || c.hasPrefix(base + "/"), "output() accepted a path outside: \(out) -> \(c)")
                    case .failure(let e):
                        XCTFail("output() accepted an unresolvable path \(out): \(e.message)")
                    }
                }
            } catch let e as ScriptError {
                XCTAssertFalse(e.message.hasPrefix("FUZZ:"), "\(e.message)\nscript:\n\(src)")
                XCTAssertFalse(e.message.contains(PathFuzzTests.canary) || (e.details ?? "").contains(PathFuzzTests.canary),
                               "a file's text in an error: \(e.message)")
                switch e.kind {
                case .runtime:
                    runtimeEnds += 1
                    XCTAssertTrue(unprotected, "a protected call escaped: \(e.message)")
                case .finish:
                    XCTAssertTrue(e.message.hasPrefix("wobble-run: "), e.message)
                default:
                    XCTFail("unexpected \(e.kind): \(e.message)")
                }
            }
            done += n
            scripts += 1
        }
        XCTAssertEqual(layout.snapshot(), before, "a file outside the scene's folder changed")
        print("path fuzz: \(done) calls in \(scripts) scripts (seed \(seed)); \(accepted) scripts ended with an output inside,"
              + " \(runtimeEnds) by an unprotected error, \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }
}
