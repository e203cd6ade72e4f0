import Foundation
import XCTest

/// `wobble-run edit` parses its options with the render's option table:
/// the shared options are refused with the same message and status,
/// `--opt=value` works, and a misspelt option gets a suggestion.
final class EditOptionsTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.write("s.lua", Sandbox.poke)
    }

    /// Runs the tool without a display (the studio stops there once its
    /// options are accepted).
    func run(_ args: [String]) throws -> Tool.Result {
        try Tool.run(["-c", "unset DISPLAY WAYLAND_DISPLAY; exec \"$0\" \"$@\"", Tool.executable.path] + args,
                     cwd: box.url, executable: "/bin/bash")
    }

    func testSharedOptionsAreRefusedExactlyAsARenderRefusesThem() throws {
        let bad: [[String]] = [
            ["--fps", "0.005"], ["--fps=0.005"], ["--fps", "1001"], ["--fps", "x"], ["--fps"],
            ["--seed", "1.5"], ["--seed=abc"], ["--timeout", "0"], ["--timeout", "-1"],
            ["--backend", "vulkan"], ["--backend=metal"], ["--allow-io=yes"], ["--image"],
        ]
        for args in bad {
            let render = try run(["s.lua"] + args)
            let edit = try run(["edit", "s.lua"] + args)
            XCTAssertEqual(render.status, 2, "\(args): \(render.stderr)")
            XCTAssertEqual(edit.status, 2, "\(args): \(edit.stderr)")
            XCTAssertTrue(render.stderr.hasPrefix("wobble-run: --"), render.stderr)
            XCTAssertEqual(edit.stderr, render.stderr, "\(args)")
            XCTAssertEqual(edit.stderr.filter { $0 == "\n" }.count, 1, edit.stderr)
        }
        let r = try run(["edit", "s.lua", "--fps", "0.005"])
        XCTAssertEqual(r.stderr, "wobble-run: --fps: 0.005 must be greater than or equal to 0.01\n")
    }

    func testEditAcceptsOptEqualsValue() throws {
        let noDisplay = "wobble-run: edit needs a display (DISPLAY or WAYLAND_DISPLAY is not set); render headless with 'wobble-run SCENE.lua'\n"
        for args in [["--fps=30"], ["--fps", "30"], ["--seed=7", "--timeout=2.5", "--backend=cpu", "--image=img.png"], ["--fps=0.01"]] {
            let r = try run(["edit", "s.lua"] + args)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr, noDisplay, "\(args)")
        }
        // A flag takes no value, in either command.
        let flag = try run(["edit", "s.lua", "--allow-io=1"])
        XCTAssertEqual(flag.stderr, "wobble-run: --allow-io takes no value\n")
    }

    func testAMisspeltOptionGetsASuggestion() throws {
        var r = try run(["edit", "s.lua", "--sede", "3"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "wobble-run: unknown option '--sede' (did you mean '--seed'?); see wobble-run edit --help\n")
        r = try run(["edit", "s.lua", "--backed=cpu"])
        XCTAssertEqual(r.stderr, "wobble-run: unknown option '--backed' (did you mean '--backend'?); see wobble-run edit --help\n")
        // Hidden hooks are never suggested; far-off names get no suggestion.
        r = try run(["edit", "s.lua", "--quit-afte", "1"])
        XCTAssertEqual(r.stderr, "wobble-run: unknown option '--quit-afte'; see wobble-run edit --help\n")
        r = try run(["edit", "s.lua", "--zzzzzz"])
        XCTAssertEqual(r.stderr, "wobble-run: unknown option '--zzzzzz'; see wobble-run edit --help\n")
        // The render suggests from its own table.
        r = try run(["s.lua", "--sede", "3"])
        XCTAssertEqual(r.stderr, "wobble-run: unknown option '--sede' (did you mean '--seed'?); see --help\n")
    }
}
