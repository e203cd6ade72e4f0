import Foundation
import XCTest

/// The studio under a tiny stack limit (`ulimit -s 32`, soft and hard):
/// it crashed with SIGSEGV compiling its shaders; it now opens, plays and
/// quits as usual (it runs on a thread with a stack of its own).
extension StudioTests {
    func testTheStudioRunsUnderATinyStackLimit() throws {
        try startDisplay()
        try writePattern("img.png", 80, 60)
        try write("s.lua", "image('img.png') local s = addSketch{x = 10, y = 10, w = 60, h = 40} prepare() impulse(s, 1, 0) wait(1)\n")
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = display.name
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        env.removeValue(forKey: "SDL_VIDEODRIVER")
        let r = try Tool.exec("/bin/sh", ["-c", "ulimit -s 32; exec \"$0\" edit s.lua --quit-after 2 --verbose", Tool.executable.path],
                              cwd: dir, env: env)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNotNil(r.stderr.range(of: "studio: [1-9][0-9]* frames presented in ", options: .regularExpression), r.stderr)
    }
}
