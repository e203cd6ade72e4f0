import XCTest
import Foundation
@testable import WobbleScript
import WobbleCore
import WobbleSystem

/// The path policy in the host: what `output`,
/// `image`, `enableMotion`, `require`, `dofile` and `loadfile` may reach,
/// the inputs a session records, and messages that never quote a file.
final class PathPolicyTests: XCTestCase {
    let tail = " (use --allow-io, or -o on the command line)"

    func testOutputStaysInsideTheFolder() throws {
        let f = SceneFixture()
        let other = SceneFixture()
        f.write("sub/keep.txt", "")
        other.write("x.gif", "keep")
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: f.dir + "/out", withDestinationPath: other.dir)
        try fm.createSymbolicLink(atPath: f.dir + "/in", withDestinationPath: "sub")
        try fm.createSymbolicLink(atPath: f.dir + "/x.gif", withDestinationPath: other.dir + "/x.gif")
        try fm.createSymbolicLink(atPath: f.dir + "/loop.gif", withDestinationPath: "loop.gif")
        let refused: [(String, String)] = [
            ("../x.gif", "is outside the scene's folder"),
            ("sub/../../x.gif", "is outside the scene's folder"),
            ("\(other.dir)/", "is outside the scene's folder"),
            ("/tmp", "is outside the scene's folder"),
            ("/dev/null", "is outside the scene's folder"),
            ("/proc/self/cwd/../y.gif", "is outside the scene's folder"),
            ("out/", "leads outside the scene's folder through a symbolic link"),
            ("out/a/", "leads outside the scene's folder through a symbolic link"),
            ("x.gif", "leads outside the scene's folder through a symbolic link"),
            ("loop.gif", "is a symbolic link that does not resolve"),
            ("nope/../a.gif", "goes through a folder that does not exist"),
        ]
        for (path, why) in refused {
            XCTAssertEqual(f.message(withImage + "output(\(luaLiteral(path)))"), "scene.lua:2: output: path '\(path)' \(why)\(tail)", path)
            // --allow-io lifts it; -o makes output() irrelevant.
            XCTAssertNoThrow(try f.run(withImage + "output(\(luaLiteral(path)))") { $0.allowIO = true }, path)
            XCTAssertNoThrow(try f.run(withImage + "output(\(luaLiteral(path)))") { $0.outputGiven = true }, path)
        }
        for path in ["a.gif", "./a.gif", "sub/", "sub/../a.gif", "in/a.gif", "in/", "new/", "frames_%04d.png", ".", "sub//"] {
            let r = try f.run(withImage + "output(\(luaLiteral(path)))")
            XCTAssertEqual(r.outputPath, f.dir + "/" + path, path)
        }
        XCTAssertEqual(f.message(withImage + "output('')"), "scene.lua:2: bad argument #1 to 'output' (empty path)")
        XCTAssertEqual(f.message(withImage + "output('a\\0b')"), "scene.lua:2: bad argument #1 to 'output' (path contains a NUL byte)")
        // Bytes that are not UTF-8 are kept exactly (PathBytes), not replaced by U+FFFD.
        XCTAssertEqual(try f.run(withImage + "output('o\\254.gif')").outputPath, f.dir + "/" + PathBytes.string([0x6F, 0xFE] + Array(".gif".utf8)))
        XCTAssertEqual(f.message(withImage + "output('../o\\254.gif')"), "scene.lua:2: output: path '../o\\xFE.gif' is outside the scene's folder\(tail)")
        XCTAssertEqual(f.message(withImage + "output(string.rep('n', 5000) .. '.gif')"),
                       "scene.lua:2: output: path '\(String(repeating: "n", count: 5000)).gif' cannot be checked: File name too long\(tail)")
    }

    func testDeepMissingPathsDoNotExhaustTheStack() throws {
        // Found by the path fuzzer: 2100 missing components recursed until the stack ran out.
        let f = SceneFixture()
        XCTAssertEqual(f.message(withImage + "output(string.rep('c/', 2100) .. 'x.gif')")?.hasSuffix(
            "cannot be checked: File name too long (use --allow-io, or -o on the command line)"), true)
        let deep = try f.run(withImage + "output(string.rep('c/', 1500) .. 'x.gif')")
        XCTAssertEqual(deep.outputPath, f.dir + "/" + String(repeating: "c/", count: 1500) + "x.gif")
        XCTAssertEqual(f.message(withImage + "output(string.rep('c/', 1500) .. '../../../x.gif')")?.hasSuffix(
            "goes through a folder that does not exist (use --allow-io, or -o on the command line)"), true)
    }

    func testTracesNeverQuoteTheFile() throws {
        let f = SceneFixture()
        let other = SceneFixture()
        other.write("secret.csv", "hunter2,swordfish,letmein\n")
        other.write("key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
        other.write("three.csv", "1,2,3\n0.5,  hunter2\t,1\n")
        for (file, expected) in [("secret.csv", "secret.csv:1:1: column t: expected a finite number"),
                                 ("key", "key:1: expected 3 columns t,ax,ay, got 1"),
                                 ("three.csv", "three.csv:2:7: column ax: expected a finite number")] {
            let path = other.dir + "/" + file
            let message = f.message(withImage + "local ok, e = pcall(enableMotion, '\(path)') error(e, 0)")
            XCTAssertEqual(message, "enableMotion: \(other.dir)/\(expected)")
            for secret in ["hunter2", "swordfish", "BEGIN", "b3Bl"] {
                XCTAssertFalse(message?.contains(secret) ?? true, "\(file): \(message ?? "")")
            }
        }
    }

    func testScriptsReadRegularFilesOnly() throws {
        let f = SceneFixture()
        XCTAssertEqual(mkfifo(f.dir + "/fifo", 0o600), 0)
        XCTAssertEqual(mkfifo(f.dir + "/fifo.lua", 0o600), 0)
        mkdir(f.dir + "/dir.png", 0o755)
        let start = Date()
        XCTAssertEqual(f.message(withImage + "enableMotion('fifo')"),
                       "scene.lua:2: enableMotion: path 'fifo' is not a regular file (it is a FIFO); a scene reads files only (use --image for a pipe)")
        XCTAssertEqual(f.message(withImage + "enableMotion('/dev/zero')"),
                       "scene.lua:2: enableMotion: path '/dev/zero' is not a regular file (it is a character device); a scene reads files only (use --image for a pipe)")
        XCTAssertEqual(f.message("image('fifo')"),
                       "scene.lua:1: image: path 'fifo' is not a regular file (it is a FIFO); a scene reads files only (use --image for a pipe)")
        XCTAssertEqual(f.message("image('/dev/stdin')")?.hasPrefix("scene.lua:1: image: path '/dev/stdin' is not a regular file"), true)
        XCTAssertEqual(f.message("image('dir.png')"),
                       "scene.lua:1: image: path 'dir.png' is not a regular file (it is a folder); a scene reads files only (use --image for a pipe)")
        XCTAssertEqual(f.message(withImage + "dofile('fifo.lua')"),
                       "scene.lua:2: dofile: 'fifo.lua' is not a regular file (it is a FIFO) (sandbox; --allow-io lifts it)")
        XCTAssertEqual(f.message(withImage + "assert(loadfile('fifo'))"),
                       "scene.lua:2: loadfile: 'fifo' is not a regular file (it is a FIFO) (sandbox; --allow-io lifts it)")
        XCTAssertEqual(f.message(withImage + "require 'fifo'"),
                       "scene.lua:2: module 'fifo' not found in the scene's folder (no file 'fifo.lua', no file 'fifo/init.lua')")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "a FIFO blocked the script")
        // Names that are not UTF-8 reach the system byte for byte.
        func create(_ bytes: [UInt8], _ text: String) {
            let fd = PathBytes.withCString(f.dir + "/" + PathBytes.string(bytes)) { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) } ?? -1
            XCTAssertGreaterThanOrEqual(fd, 0)
            _ = text.withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        create([0x74, 0xFF] + Array(".csv".utf8), "0.1,2,0\n")
        create([0x64, 0xFF] + Array(".lua".utf8), "return 41")
        create([0x6D, 0xFE] + Array(".lua".utf8), "return 42")
        try f.run(withImage + "enableMotion('t\\255.csv') assert(dofile('d\\255.lua') == 41) assert(require('m\\254') == 42)")
        XCTAssertEqual(f.message(withImage + "enableMotion('n\\255.csv')"),
                       "scene.lua:2: enableMotion: cannot read trace 'n\\xFF.csv': No such file or directory")
        try f.run("image('i\\255.png')")
        XCTAssertEqual(f.loadedImages.last, f.dir + "/" + PathBytes.string([0x69, 0xFF] + Array(".png".utf8)))
    }

    func testCodeLoadErrorsNeverQuoteTheFile() throws {
        let f = SceneFixture()
        f.write("secret.lua", "local x = 1\npassword hunter2 swordfish\n")
        f.write("string.lua", "x = 'hunter2 is the password\n")
        f.write("number.lua", "x = 0x1hunter2\n")
        f.write("bin.lua", "\u{1B}Lua hunter2")
        try f.run(withImage + """
            local fn, e = loadfile('secret.lua')
            assert(fn == nil and e:match('secret.lua:2:10: syntax error$'), e)
            fn, e = loadfile('string.lua', 't', {})
            assert(fn == nil and e:match('string.lua:1:5: unfinished string$'), e)
            fn, e = loadfile('number.lua')
            assert(fn == nil and e:match('number.lua:1:5: malformed number$'), e)
            fn, e = loadfile('bin.lua', 'b')
            assert(fn == nil and e:match('attempt to load a binary chunk'), e)
            assert(not e:match('hunter2'))
            """)
        for source in ["dofile('secret.lua')", "require('secret')", "dofile('string.lua')", "dofile('number.lua')"] {
            let e = f.failure(withImage + source)
            XCTAssertFalse(e?.message.contains("hunter2") ?? true, e?.message ?? "")
            XCTAssertFalse(e?.details?.contains("hunter2") ?? false, e?.details ?? "")
        }
        XCTAssertEqual(f.message(withImage + "require('secret')"),
                       "scene.lua:2: error loading module 'secret' from file 'secret.lua':\n\tsecret.lua:2:10: syntax error")
    }

    func testCodeStaysInsideTheFolder() throws {
        let f = SceneFixture()
        let other = SceneFixture()
        other.write("evil.lua", "return 'evil'")
        try FileManager.default.createSymbolicLink(atPath: f.dir + "/lib", withDestinationPath: other.dir)
        try FileManager.default.createSymbolicLink(atPath: f.dir + "/up", withDestinationPath: "..")
        let dirName = (f.dir as NSString).lastPathComponent
        for source in ["require 'lib.evil'", "require 'up.\(dirName)'", "require('..x')", "require('a..b')", "require('.x')",
                       "require('x.')", "require('/etc/passwd')", "require('')",
                       "package.path = '\(other.dir)/?.lua' require 'evil'",
                       "package.searchers = {function() return function() return 'evil' end end} require 'evil'",
                       "dofile('lib/evil.lua')", "dofile('up/\(dirName)/../\((other.dir as NSString).lastPathComponent)/evil.lua')",
                       "assert(loadfile('\(other.dir)/evil.lua'))", "dofile('/proc/self/cwd/../evil.lua')",
                       "dofile('/dev/stdin')", "dofile('/proc/self/environ')", "dofile('')"] {
            let e = f.failure(withImage + source)
            XCTAssertEqual(e?.kind, .runtime, source)
        }
    }

    func testTheSessionRecordsItsInputs() throws {
        let f = SceneFixture()
        f.write("cat.png", "stub")
        f.write("t.csv", "0.1,0,0\n")
        f.write("m.lua", "return 1")
        f.write("lib/d.lua", "return 2")
        f.write("l.lua", "return 3")
        try FileManager.default.createSymbolicLink(atPath: f.dir + "/alias.csv", withDestinationPath: "t.csv")
        let r = try f.run(withImage + "enableMotion('t.csv') enableMotion('alias.csv') require 'm' dofile('lib/d.lua') loadfile('l.lua')")
        XCTAssertEqual(r.inputs.map(\.role), [.scene, .image, .trace, .module, .code, .code])
        XCTAssertEqual(r.inputs.map { ($0.path as NSString).lastPathComponent }, ["scene.lua", "cat.png", "t.csv", "m.lua", "d.lua", "l.lua"])
        XCTAssertEqual(r.inputs[2].canonical, PathPolicy.realPath(f.dir + "/t.csv"))
        // --allow-io: Lua's own require/dofile/loadfile, recorded too.
        let io = try f.run(withImage + "require 'm' dofile(arg[0]:gsub('scene.lua$', 'lib/d.lua')) loadfile('nope.lua')") { $0.allowIO = true }
        XCTAssertEqual(io.inputs.map { ($0.path as NSString).lastPathComponent }, ["scene.lua", "cat.png", "m.lua", "d.lua"])
        XCTAssertEqual(io.inputs.map(\.role), [.scene, .image, .module, .code])
    }
}

/// A Lua string literal for `s` (bytes as they are).
func luaLiteral(_ s: String) -> String {
    "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}
