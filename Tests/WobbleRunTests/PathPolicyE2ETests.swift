import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem

/// The path policy (no output may replace an input; paths a script names stay where it may write) on the built executable:
/// `output()` writes, replaces and removes only inside the scene's folder;
/// `-o` is free; no output may replace an input (the scene, its image, a
/// trace, a module), folders and patterns included.
final class PathPolicyE2ETests: XCTestCase {
    var box: Sandbox!
    let source = Sandbox.pattern(width: 40, height: 30)

    override func setUpWithError() throws {
        box = try Sandbox()
        for d in ["scene", "victim", "victim/dir"] {
            try FileManager.default.createDirectory(atPath: box.path(d), withIntermediateDirectories: true)
        }
        try box.writeImage("scene/img.png", source)
    }

    /// The poke scene with `extra` after its `image(...)` line.
    func scene(_ extra: String, name: String = "scene/s.lua") throws {
        try box.write(name, Sandbox.poke.replacingOccurrences(of: "image(\"img.png\")", with: "image(\"img.png\")\n" + extra))
    }

    func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: box.path(name))) }

    /// Plants files outside the scene's folder; returns their contents to compare later.
    func plantVictims() throws -> [String: Data] {
        var planted: [String: Data] = [:]
        try Data("precious gif".utf8).write(to: URL(fileURLWithPath: box.path("victim/photo.gif")))
        for k in 1...7 {
            let name = String(format: "victim/dir/frame_%05d.png", k)
            try Data("foreign \(k)".utf8).write(to: URL(fileURLWithPath: box.path(name)))
        }
        for f in ["victim/photo.gif"] + (1...7).map({ String(format: "victim/dir/frame_%05d.png", $0) }) {
            planted[f] = try bytes(f)
        }
        return planted
    }

    func assertUntouched(_ planted: [String: Data], file: StaticString = #filePath, line: UInt = #line) throws {
        for (name, data) in planted {
            XCTAssertEqual(try? bytes(name), data, "\(name) changed", file: file, line: line)
        }
        let victims = try FileManager.default.contentsOfDirectory(atPath: box.path("victim")).sorted()
        XCTAssertEqual(victims, ["dir", "photo.gif"], file: file, line: line)
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())", file: file, line: line)
    }

    // MARK: output() stays inside the scene's folder

    func testOutputOutsideTheFolderIsRefused() throws {
        let planted = try plantVictims()
        let abs = box.path("victim/dir") + "/"
        let cases: [(String, String)] = [
            ("../victim/photo.gif", "'../victim/photo.gif' is outside the scene's folder"),
            (abs, "'\(abs)' is outside the scene's folder"),
            ("sub/../../victim/photo.gif", "'sub/../../victim/photo.gif' is outside the scene's folder"),
            ("../victim/dir/frame_%05d.png", "'../victim/dir/frame_%05d.png' is outside the scene's folder"),
            ("..", "'..' is outside the scene's folder"),
            ("../victim//", "'../victim//' is outside the scene's folder"),
            ("/", "'/' is outside the scene's folder"),
        ]
        try FileManager.default.createDirectory(atPath: box.path("scene/sub"), withIntermediateDirectories: true)
        for (path, what) in cases {
            try scene("output(\(luaQuote(path)))")
            let r = try Tool.run(["scene/s.lua", "--backend", "cpu"], cwd: box.url)
            XCTAssertEqual(r.status, 1, path)
            XCTAssertEqual(r.firstError, "scene/s.lua:2: output: path \(what) (use --allow-io, or -o on the command line)", path)
            let check = try Tool.run(["scene/s.lua", "--check"], cwd: box.url)
            XCTAssertEqual(check.status, 1, path)
            XCTAssertEqual(check.firstError, r.firstError, path)
        }
        try assertUntouched(planted)
    }

    func testOutputThroughALinkToOutsideIsRefused() throws {
        let planted = try plantVictims()
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: box.path("scene/out"), withDestinationPath: "../victim/dir")
        try fm.createSymbolicLink(atPath: box.path("scene/clip.gif"), withDestinationPath: "../victim/photo.gif")
        try fm.createSymbolicLink(atPath: box.path("scene/up"), withDestinationPath: "..")
        try fm.createSymbolicLink(atPath: box.path("scene/dangling.gif"), withDestinationPath: "../victim/nope.gif")
        let cases: [(String, String)] = [
            ("out/", "'out/' leads outside the scene's folder through a symbolic link"),
            ("out", "'out' leads outside the scene's folder through a symbolic link"),
            ("out/x.gif", "'out/x.gif' leads outside the scene's folder through a symbolic link"),
            ("clip.gif", "'clip.gif' leads outside the scene's folder through a symbolic link"),
            ("up/victim/photo.gif", "'up/victim/photo.gif' leads outside the scene's folder through a symbolic link"),
            ("./up/victim/dir/", "'./up/victim/dir/' leads outside the scene's folder through a symbolic link"),
            ("dangling.gif", "'dangling.gif' is a symbolic link that does not resolve"),
        ]
        for (path, what) in cases {
            try scene("output(\(luaQuote(path)))")
            let r = try Tool.run(["scene/s.lua", "--backend", "cpu"], cwd: box.url)
            XCTAssertEqual(r.status, 1, path)
            XCTAssertEqual(r.firstError, "scene/s.lua:2: output: path \(what) (use --allow-io, or -o on the command line)", path)
        }
        try assertUntouched(planted)
        XCTAssertFalse(fm.fileExists(atPath: box.path("victim/nope.gif")))
    }

    func testOutputInsideTheFolderAndMinusOAndAllowIOWork() throws {
        // Inside: a file, a new folder, a pattern, a link that stays inside.
        try FileManager.default.createDirectory(atPath: box.path("scene/renders"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: box.path("scene/latest"), withDestinationPath: "renders")
        for (path, made) in [("clip.gif", "scene/clip.gif"), ("frames/", "scene/frames/frame_00008.png"),
                             ("renders/p_%02d.png", "scene/renders/p_08.png"), ("latest/x.gif", "scene/renders/x.gif"),
                             ("sub/../inside.gif", nil)] as [(String, String?)] {
            if path.hasPrefix("sub/") {
                try FileManager.default.createDirectory(atPath: box.path("scene/sub"), withIntermediateDirectories: true)
            }
            try scene("output(\(luaQuote(path)))")
            let r = try Tool.run(["scene/s.lua", "--backend", "cpu"], cwd: box.url)
            XCTAssertEqual(r.status, 0, "\(path): \(r.stderr)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: box.path(made ?? "scene/inside.gif")), path)
        }
        // -o is the user's own choice; --allow-io lifts the policy.
        try plantVictimsAndRender(["-o", "../victim/photo.gif"], cwd: "scene", scenePath: "s.lua")
        try plantVictimsAndRender(["--allow-io"], cwd: ".", scenePath: "scene/s.lua")
    }

    private func plantVictimsAndRender(_ args: [String], cwd: String, scenePath: String) throws {
        _ = try plantVictims()
        try scene("output('../victim/photo.gif')")
        let r = try Tool.run([scenePath, "--backend", "cpu"] + args, cwd: box.url.appendingPathComponent(cwd))
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        XCTAssertTrue(try bytes("victim/photo.gif").starts(with: Data("GIF89a".utf8)), "\(args)")
    }

    func testOutputNamesThatAreNotUTF8AreKept() throws {
        try scene("output('o\\254.gif')")
        let r = try Tool.run(["scene/s.lua", "--backend", "cpu"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let name = box.path("scene") + "/" + PathBytes.string([0x6F, 0xFE] + Array(".gif".utf8))
        XCTAssertEqual(PathBytes.withCString(name) { access($0, F_OK) }, 0, "o\\xFE.gif was not written")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("scene/o\u{FFFD}.gif")))
        try scene("output('../o\\254.gif')")
        let out = try Tool.run(["scene/s.lua", "--backend", "cpu"], cwd: box.url)
        XCTAssertEqual(out.status, 1)
        XCTAssertEqual(out.firstError, "scene/s.lua:2: output: path '../o\\xFE.gif' is outside the scene's folder (use --allow-io, or -o on the command line)")
    }

    // MARK: no output replaces an input

    func testOutputFolderHoldingTheImageIsRefused() throws {
        try FileManager.default.createDirectory(atPath: box.path("scene/fd2"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: box.path("scene/img.png"), toPath: box.path("scene/fd2/frame_00003.png"))
        try box.write("scene/s.lua", Sandbox.poke.replacingOccurrences(of: "img.png", with: "fd2/frame_00003.png"))
        let image = try bytes("scene/fd2/frame_00003.png")
        // Frame 3 would replace the image; with 2 frames it would be removed as stale.
        for (args, status) in [(["-o", "fd2/"], 2), (["-o", "fd2"], 2), (["-o", "./fd2/frame_%05d.png"], 2),
                               (["--frames", "3-4", "-o", "fd2/"], 2)] as [([String], Int32)] {
            let r = try Tool.run(["s.lua", "--backend", "cpu"] + args, cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, status, "\(args): \(r.stderr)")
            let frame = args.last!.hasPrefix("./") ? "./fd2/frame_00003.png" : "fd2/frame_00003.png"
            XCTAssertEqual(r.firstError, "wobble-run: output '\(args.last!)' would replace frame 3 '\(frame)', which is the image 'fd2/frame_00003.png'; choose another output", "\(args)")
            XCTAssertEqual(try bytes("scene/fd2/frame_00003.png"), image, "\(args)")
        }
        // Stale removal: a full render of 2 frames would remove frame_00003.png.
        try box.write("scene/two.lua", "image('fd2/frame_00003.png') wait(0.05)\n")
        var r = try Tool.run(["two.lua", "--backend", "cpu", "-o", "fd2/"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertEqual(r.firstError, "wobble-run: output 'fd2/' would remove the stale frame 'fd2/frame_00003.png', which is the image 'fd2/frame_00003.png'; choose another output")
        // From the script: exit 1.
        try box.write("scene/three.lua", "image('fd2/frame_00003.png') output('fd2/') wait(0.2)\n")
        r = try Tool.run(["three.lua", "--backend", "cpu"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: output '"), r.firstError)
        XCTAssertTrue(r.firstError.contains("which is the image"), r.firstError)
        // --frames 0-1: neither written nor removed: fine.
        r = try Tool.run(["s.lua", "--backend", "cpu", "--frames", "0-1", "-o", "fd2/"], cwd: box.url.appendingPathComponent("scene"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try bytes("scene/fd2/frame_00003.png"), image)
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
    }

    func testOutputThatIsATraceAModuleOrADofiledFileIsRefused() throws {
        try box.write("scene/t.csv", "t,ax,ay\n0.05,0.1,0\n")
        try box.write("scene/mod.lua", "return 1\n")
        try box.write("scene/extra.lua", "x = 1\n")
        try FileManager.default.createDirectory(atPath: box.path("scene/lib"), withIntermediateDirectories: true)
        try box.write("scene/lib/frame_00001.png", "return 2\n")
        try FileManager.default.createSymbolicLink(atPath: box.path("scene/alias.gif"), withDestinationPath: "t.csv")
        try scene("enableMotion('t.csv') require('mod') dofile('extra.lua') loadfile('lib/frame_00001.png')")
        let cases: [([String], String)] = [
            (["--format", "gif", "-o", "t.csv"], "output 't.csv' is the motion trace 't.csv' itself"),
            (["--format", "gif", "-o", "./mod.lua"], "output './mod.lua' is the module 'mod.lua' itself"),
            (["--format", "gif", "-o", "extra.lua"], "output 'extra.lua' is the script file 'extra.lua' itself"),
            (["-o", "alias.gif"], "output 'alias.gif' is the motion trace 't.csv' itself"),
            (["--format", "gif", "-o", "s.lua"], "output 's.lua' is the scene 's.lua' itself"),
            (["-o", "lib/"], "output 'lib/' would replace frame 1 'lib/frame_00001.png', which is the script file 'lib/frame_00001.png'"),
        ]
        let before = try ["t.csv", "mod.lua", "extra.lua", "lib/frame_00001.png", "s.lua"].map { try bytes("scene/" + $0) }
        for (args, what) in cases {
            let r = try Tool.run(["s.lua", "--backend", "cpu"] + args, cwd: box.url.appendingPathComponent("scene"))
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.firstError, "wobble-run: \(what); choose another output", "\(args)")
        }
        let after = try ["t.csv", "mod.lua", "extra.lua", "lib/frame_00001.png", "s.lua"].map { try bytes("scene/" + $0) }
        XCTAssertEqual(before, after)
        XCTAssertTrue(box.leftovers().isEmpty, "\(box.leftovers())")
    }

    func testTraceErrorsNameTheFileWithoutQuotingIt() throws {
        let secret = box.path("victim/secret.csv")
        try "hunter2-secret-password,1,2\n".write(toFile: secret, atomically: true, encoding: .utf8)
        try scene("local ok, err = pcall(enableMotion, \(luaQuote(secret))) print(err) error(err, 0)")
        let r = try Tool.run(["scene/s.lua", "--backend", "cpu", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertFalse(r.stdout.contains("hunter2") || r.stderr.contains("hunter2") || r.stderr.contains("password"), r.stderr)
        XCTAssertEqual(r.firstError, "enableMotion: \(secret):1:1: column t: expected a finite number")
    }
}

/// A Lua string literal for `s`.
func luaQuote(_ s: String) -> String {
    "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}
