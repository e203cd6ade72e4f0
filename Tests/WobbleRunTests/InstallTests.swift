import Foundation
import XCTest
import WobbleMedia

/// Scripts/install.sh and Scripts/package-deb.sh with the release binary
/// (static Swift standard library) that Scripts/test.sh builds once and
/// names in `WOBBLE_RELEASE_BINARY`.
final class InstallTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    static var repo: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    }

    func releaseBinary() throws -> String {
        guard let p = ProcessInfo.processInfo.environment["WOBBLE_RELEASE_BINARY"], !p.isEmpty else {
            throw XCTSkip("WOBBLE_RELEASE_BINARY is not set: Scripts/test.sh builds the release binary and sets it")
        }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: p), p)
        return p
    }

    /// The release studio executable, built beside the release wobble-run.
    func releaseStudio() throws -> String {
        let p = URL(fileURLWithPath: try releaseBinary()).deletingLastPathComponent().appendingPathComponent("wobble-studio").path
        guard FileManager.default.isExecutableFile(atPath: p) else {
            throw XCTSkip("no release wobble-studio beside WOBBLE_RELEASE_BINARY: swift build -c release --static-swift-stdlib --product wobble-studio")
        }
        return p
    }

    func sh(_ script: String, cwd: URL? = nil) throws -> Tool.Result {
        try Tool.run(["-c", script], cwd: cwd ?? box.url, executable: "/bin/bash")
    }

    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    func testInstallIntoAPrefixRunsWithoutSwift() throws {
        let binary = try releaseBinary()
        _ = try releaseStudio()
        let prefix = box.path("a prefix with spaces")
        let script = Self.repo.appendingPathComponent("Scripts/install.sh").path
        var r = try sh("\(q(script)) --prefix \(q(prefix)) --binary \(q(binary))")
        XCTAssertEqual(r.status, 0, r.stderr)
        let bin = prefix + "/bin/wobble-run"
        // No Swift runtime: linked statically, run with a bare environment.
        r = try sh("ldd \(q(bin))")
        XCTAssertFalse(r.stdout.contains("libswift"), r.stdout)
        XCTAssertFalse(r.stdout.contains("not found"), r.stdout)
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        r = try sh("env -i PATH=/usr/bin:/bin \(q(bin)) s.lua --backend cpu -q --json -o out.gif")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\"frames\":9"), r.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("out.gif"))).prefix(6), Data("GIF89a".utf8))
        // The studio is installed beside it, and `edit` finds it there.
        r = try sh("ldd \(q(prefix + "/bin/wobble-studio"))")
        XCTAssertFalse(r.stdout.contains("libswift"), r.stdout)
        r = try sh("env -i PATH=/usr/bin:/bin \(q(bin)) edit --help")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("usage: wobble-run edit SCENE.lua"), r.stdout)
        // --no-studio: a render node.
        let node = box.path("node")
        r = try sh("\(q(script)) --prefix \(q(node)) --binary \(q(binary)) --no-studio")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: node + "/bin/wobble-studio"))
        r = try sh("env -i PATH=/usr/bin:/bin \(q(node + "/bin/wobble-run")) edit s.lua")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, StudioSplitTests.notInstalled)

        // The man page renders and names every option of --help.
        r = try sh("MANWIDTH=200 man -l \(q(prefix + "/share/man/man1/wobble-run.1")) | col -b")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = r.stdout
        let help = try sh("\(q(bin)) --help").stdout
        let options = Set(help.split(whereSeparator: { " ,\n()".contains($0) }).map(String.init)
            .filter { $0.hasPrefix("-") && $0.count > 1 && $0.first(where: { $0.isLetter }) != nil && !$0.contains("=") })
        XCTAssertGreaterThan(options.count, 20, "\(options)")
        for o in options where o.hasPrefix("--") || o.count == 2 {
            XCTAssertTrue(page.contains(o), "the man page lacks \(o)")
        }
        XCTAssertTrue(page.contains("EXIT STATUS"))

        // bash completion: --for completes to --format, and its values.
        let completion = prefix + "/share/bash-completion/completions/wobble-run"
        r = try sh("source \(q(completion)); COMP_WORDS=(wobble-run --for); COMP_CWORD=1; _wobble_run; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(wobble-run --format w); COMP_CWORD=2; _wobble_run; echo \"${COMPREPLY[*]}\"")
        XCTAssertEqual(r.stdout, "--format\nwebp webm web\n", r.stderr)
        for f in ["share/zsh/site-functions/_wobble-run", "share/fish/vendor_completions.d/wobble-run.fish"] {
            let text = try String(contentsOfFile: prefix + "/" + f, encoding: .utf8)
            XCTAssertTrue(text.contains("format"), f)
        }

        // luacheck with the installed standard: the gallery passes, a misspelt function fails.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/luacheck") else {
            throw XCTSkip("luacheck is not installed (Debian: lua-check; Scripts/install-deps.sh --bench)")
        }
        let rc = prefix + "/share/wobble-run/lua/luacheckrc"
        r = try sh("luacheck --no-color --config \(q(rc)) --std lua54+wobble */*.lua", cwd: Self.repo.appendingPathComponent("Examples"))
        XCTAssertEqual(r.status, 0, r.stdout)
        let scenes = try FileManager.default.contentsOfDirectory(atPath: Self.repo.appendingPathComponent("Examples").path)
            .filter { (try? FileManager.default.contentsOfDirectory(atPath: Self.repo.appendingPathComponent("Examples/\($0)").path))?
                .contains { $0.hasSuffix(".lua") } ?? false }.count
        XCTAssertGreaterThanOrEqual(scenes, 7)
        XCTAssertTrue(r.stdout.contains("0 warnings / 0 errors in \(scenes) files"), r.stdout)
        try box.write("typo.lua", "image('img.png')\nlocal s = addSketch{x = 1, y = 1, w = 9, h = 9}\nprepare()\ntuoch(2, 2, 5, 5)\nuntilStill()\n")
        r = try sh("luacheck --no-color --config \(q(rc)) --std lua54+wobble typo.lua")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("typo.lua:4:1: accessing undefined variable 'tuoch'"), r.stdout)
        let meta = try String(contentsOfFile: prefix + "/share/wobble-run/lua/wobble.lua", encoding: .utf8)
        XCTAssertTrue(meta.hasPrefix("---@meta"))
        XCTAssertTrue(meta.contains("function touch(x0, y0, x1, y1) end"))
    }

    /// A relative prefix, and two installs into one prefix at once.
    func testRelativePrefixAndTwoInstallsAtOnce() throws {
        let binary = try releaseBinary()
        let script = Self.repo.appendingPathComponent("Scripts/install.sh").path
        let r = try sh("\(q(script)) --prefix rel/p --binary \(q(binary)) & a=$!; \(q(script)) --prefix rel/p --binary \(q(binary)) & b=$!; wait $a && wait $b")
        XCTAssertEqual(r.status, 0, r.stderr)
        let bin = box.path("rel/p/bin/wobble-run")
        XCTAssertEqual(try Tool.run(["--version"], cwd: box.url, executable: bin).status, 0)
        XCTAssertEqual(try Tool.run(["--generate", "man"], cwd: box.url, executable: bin).stdout,
                       try Tool.run(["--generate", "man"], cwd: box.url, executable: binary).stdout)
        let left = try sh("find rel -name '.wobble-install.*'").stdout
        XCTAssertEqual(left, "", "no temporary files left")
        let bad = try sh("\(q(script)) --prefix")
        XCTAssertNotEqual(bad.status, 0)
    }

    /// The .deb installs with dpkg -i (then apt-get -f install) and runs.
    func testDebianPackageInstallsAndRuns() throws {
        let binary = try releaseBinary()
        guard getuid() == 0 else { throw XCTSkip("installing a .deb needs root") }
        let script = Self.repo.appendingPathComponent("Scripts/package-deb.sh").path
        _ = try releaseStudio()
        // Uncompressed: xz (the default) of two 70 MB static binaries takes
        // minutes on two cores, and the packages' contents are what is tested.
        var r = try sh("\(q(script)) --binary \(q(binary)) --out debs --compression none")
        XCTAssertEqual(r.status, 0, r.stderr)
        let debs = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(debs.count, 2, r.stdout)
        let deb = debs.first ?? "", studioDeb = debs.last ?? ""
        XCTAssertTrue(deb.hasSuffix("_amd64.deb") || deb.hasSuffix(".deb"), deb)
        XCTAssertTrue(URL(fileURLWithPath: deb).lastPathComponent.hasPrefix("wobble-run_"), deb)
        XCTAssertTrue(URL(fileURLWithPath: studioDeb).lastPathComponent.hasPrefix("wobble-studio_"), studioDeb)
        r = try sh("ar t \(q(deb))")
        XCTAssertEqual(r.stdout, "debian-binary\ncontrol.tar\ndata.tar\n", "--compression none")
        let bad = try sh("\(q(script)) --binary \(q(binary)) --out debs --compression lzma")
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "package-deb.sh: --compression: 'lzma' is not xz, zstd, gzip or none\n")
        r = try sh("dpkg-deb -f \(q(deb)) Depends")
        XCTAssertTrue(r.stdout.contains("liblua5.4-0"), r.stdout)
        XCTAssertFalse(r.stdout.contains("-dev"), r.stdout)
        // The render node's package pulls in no window system.
        for bad in ["sdl", "x11", "xcb", "wayland", "libxext", "libxi", "libxrandr"] {
            XCTAssertFalse(r.stdout.lowercased().contains(bad), "Depends: \(r.stdout)")
        }
        r = try sh("dpkg-deb -f \(q(studioDeb)) Depends")
        XCTAssertTrue(r.stdout.contains("wobble-run (= "), r.stdout)
        XCTAssertTrue(r.stdout.contains("libsdl2"), r.stdout)
        XCTAssertFalse(r.stdout.contains("-dev"), r.stdout)
        r = try sh("dpkg-deb -c \(q(studioDeb))")
        XCTAssertTrue(r.stdout.contains("./usr/bin/wobble-studio"), r.stdout)
        r = try sh("dpkg-deb -c \(q(deb))")
        XCTAssertFalse(r.stdout.contains("wobble-studio"), r.stdout)
        r = try sh("dpkg-deb -c \(q(deb))")
        for f in ["./usr/bin/wobble-run", "./usr/share/man/man1/wobble-run.1", "./usr/share/wobble-run/lua/luacheckrc"] {
            XCTAssertTrue(r.stdout.contains(f), f)
        }
        r = try sh("(dpkg -i \(q(deb)) || DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq) >/dev/null 2>&1; dpkg-query -W -f='${Status}' wobble-run")
        XCTAssertEqual(r.stdout, "install ok installed", r.stderr)
        defer { _ = try? sh("dpkg -r wobble-studio >/dev/null 2>&1; dpkg -r wobble-run >/dev/null 2>&1") }
        // Without the studio package, `edit` names it.
        r = try sh("env -i PATH=/usr/bin:/bin DISPLAY=:0 /usr/bin/wobble-run edit s.lua")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, StudioSplitTests.notInstalled)
        // The studio package installs beside it, and `edit` finds it.
        r = try sh("(dpkg -i \(q(studioDeb)) || DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq) >/dev/null 2>&1; dpkg-query -W -f='${Status}' wobble-studio")
        XCTAssertEqual(r.stdout, "install ok installed", r.stderr)
        r = try sh("env -i PATH=/bin /usr/bin/wobble-run edit --help")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("usage: wobble-run edit SCENE.lua"), r.stdout)
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        r = try sh("env -i PATH=/usr/bin:/bin /usr/bin/wobble-run s.lua --backend cpu -q -o out.gif && env -i PATH=/usr/bin:/bin /usr/bin/wobble-run s.lua --check")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("ok: 9 frames"), r.stderr)
    }
}
