import Foundation
import XCTest

/// The headless tool links no window system; `wobble-run edit` runs the
/// separate `wobble-studio` executable (beside wobble-run, else on PATH),
/// and says which package to install when there is none.
final class StudioSplitTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    func sh(_ script: String) throws -> Tool.Result {
        try Tool.run(["-c", script], cwd: box.url, executable: "/bin/bash")
    }

    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static let notInstalled = "wobble-run: edit needs the studio, which is not installed: install the package 'wobble-studio' (or render headless with 'wobble-run SCENE.lua')\n"

    /// Its NEEDED entries (the libraries the dynamic linker loads for it).
    func needed(_ binary: String) throws -> [String] {
        let r = try sh("objdump -p \(q(binary))")
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.split(separator: "\n").filter { $0.contains("NEEDED") }
            .compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    func testHeadlessBinaryNamesNoWindowSystemLibrary() throws {
        var binaries = [Tool.executable.path]
        if let p = ProcessInfo.processInfo.environment["WOBBLE_RELEASE_BINARY"], !p.isEmpty { binaries.append(p) }
        for binary in binaries {
            let libs = try needed(binary)
            XCTAssertTrue(libs.contains { $0.hasPrefix("libEGL") }, "\(binary): \(libs)")
            for lib in libs {
                for bad in ["SDL", "X11", "xcb", "wayland", "Xext", "Xrandr", "Xi."] {
                    XCTAssertFalse(lib.lowercased().contains(bad.lowercased()), "\(binary) links \(lib)")
                }
            }
        }
        // The studio executable is the one that links SDL.
        let studio = Tool.executable.deletingLastPathComponent().appendingPathComponent("wobble-studio").path
        XCTAssertTrue(try needed(studio).contains { $0.hasPrefix("libSDL2") })
    }

    /// A folder holding wobble-run alone (no studio beside it, none on
    /// PATH): a render works; `edit` prints one line and exits 1.
    func testRenderWithoutTheStudioAndEditNamesThePackage() throws {
        let source = ProcessInfo.processInfo.environment["WOBBLE_RELEASE_BINARY"].flatMap { $0.isEmpty ? nil : $0 } ?? Tool.executable.path
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        XCTAssertEqual(try sh("cp \(q(source)) bin/wobble-run").status, 0)
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        var r = try sh("env -i PATH=/usr/bin:/bin bin/wobble-run s.lua --backend cpu -q --json -o out.gif")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\"frames\":9"), r.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("out.gif"))).prefix(6), Data("GIF89a".utf8))
        for args in ["edit s.lua", "edit --help", "edit"] {
            r = try sh("env -i PATH=/usr/bin:/bin DISPLAY=:0 bin/wobble-run \(args)")
            XCTAssertEqual(r.status, 1, args)
            XCTAssertEqual(r.stderr, Self.notInstalled, args)
            XCTAssertEqual(r.stdout, "", args)
        }
        // On PATH: found there, run with the same arguments.
        let built = Tool.executable.deletingLastPathComponent().path
        r = try sh("env -i PATH=\(q(built)):/usr/bin:/bin bin/wobble-run edit --help")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("usage: wobble-run edit SCENE.lua"), r.stdout)
    }

    /// In a build folder the studio is beside wobble-run, and its exit
    /// status and output are the studio's own (exec'd, not wrapped).
    func testEditRunsTheStudioBesideIt() throws {
        try box.write("s.lua", "image('img.png')\n")
        let r = try sh("env -u DISPLAY -u WAYLAND_DISPLAY \(q(Tool.executable.path)) edit s.lua")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: edit needs a display (DISPLAY or WAYLAND_DISPLAY is not set); render headless with 'wobble-run SCENE.lua'\n")
        let help = try sh("\(q(Tool.executable.path)) edit --help")
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.hasPrefix("usage: wobble-run edit SCENE.lua"), help.stdout)
    }

    /// A Wayland display named without XDG_RUNTIME_DIR (an ssh or su
    /// session): libwayland printed its own "XDG_RUNTIME_DIR is invalid"
    /// line before the tool's; now the tool's line is the only one.
    func testAWaylandDisplayWithoutARuntimeFolderIsOneLineOfOurs() throws {
        try box.write("s.lua", "image('img.png')\n")
        var r = try sh("env -u DISPLAY -u XDG_RUNTIME_DIR WAYLAND_DISPLAY=wayland-0 \(q(Tool.executable.path)) edit s.lua")
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: edit: cannot open the display: WAYLAND_DISPLAY 'wayland-0' needs XDG_RUNTIME_DIR, which is not set (or not an absolute path)\n")
        // With an X display that does not answer as well: X11 is tried, Wayland is not.
        r = try sh("env -u XDG_RUNTIME_DIR DISPLAY=:4711 WAYLAND_DISPLAY=wayland-0 \(q(Tool.executable.path)) edit s.lua")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.hasPrefix("wobble-run: edit: cannot open the display (DISPLAY ':4711'): "), r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("; WAYLAND_DISPLAY 'wayland-0' needs XDG_RUNTIME_DIR, which is not set (or not an absolute path)\n"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }
}
