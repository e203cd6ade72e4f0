import XCTest
@testable import WobbleCommands
import WobbleCore
import WobbleEngine

/// The command line in-process: words in, the command value out, or the
/// exact lines and exit status a process would print and end with.
final class ParseTests: XCTestCase {
    /// The failure `body` throws, as the tool reports it.
    func failure(_ command: String? = nil, _ body: () throws -> Any) -> Failure? {
        do {
            _ = try body()
            XCTFail("no error")
            return nil
        } catch {
            return Failure(error, command: command)
        }
    }

    func testARenderParsesIntoTheEngineOptions() throws {
        let c = try RenderCommand.parse(["s.lua", "-o", "x.gif", "--fps=12", "--frames", "3-", "--json", "--", "a", "--b"])
        XCTAssertEqual(c.render.scene, "s.lua")
        XCTAssertEqual(c.render.output, "x.gif")
        XCTAssertEqual(c.render.fps, 12)
        XCTAssertEqual(c.render.frames, 3...Int.max)
        XCTAssertEqual(c.render.scriptArguments, ["a", "--b"])
        XCTAssertTrue(c.json)
        XCTAssertFalse(c.watch)
        let a = try RenderCommand.parse(["--assemble", "slices", "-o", "out.gif"])
        XCTAssertEqual(a.render.assemble, "slices")
        XCTAssertNil(a.render.scene)
    }

    func testRenderErrorsAreTheLinesTheToolPrints() {
        XCTAssertEqual(failure { try RenderCommand.parse(["s.lua", "--fsp", "3"]) },
                       Failure(lines: ["wobble-run: unknown option '--fsp' (did you mean '--fps'?); see --help"], exitCode: 2))
        XCTAssertEqual(failure { try RenderCommand.parse(["s.lua", "--fps"]) }?.lines, ["wobble-run: --fps needs a value (N)"])
        XCTAssertEqual(failure { try RenderCommand.parse(["s.lua", "--overlay=1"]) }?.lines, ["wobble-run: --overlay takes no value"])
        XCTAssertEqual(failure { try RenderCommand.parse(["a.lua", "b.lua"]) }?.lines,
                       ["wobble-run: more than one scene given ('a.lua', 'b.lua'); script arguments go after --"])
        XCTAssertEqual(failure { try RenderCommand.parse([]) }?.lines, ["wobble-run: no scene given; usage: wobble-run SCENE.lua [options] [-- args...]"])
        XCTAssertEqual(failure { try RenderCommand.parse(["--assemble", "d", "s.lua"]) }?.lines, ["wobble-run: --assemble takes no scene"])
        XCTAssertEqual(failure { try RenderCommand.parse(["s.lua", "--check", "--watch"]) }?.lines, ["wobble-run: --check and --watch do not go together"])
        XCTAssertEqual(failure { try RenderCommand.parse(["s.lua", "--width", "0"]) }?.exitCode, 2)
    }

    func testCutoutParsesIntoItsCommand() throws {
        let c = try CutoutCommand.parse(["p.png", "--box", "1,2,3,4", "--timeout=2.5"])
        XCTAssertEqual(c.photo, "p.png")
        XCTAssertEqual(c.query, .box(x: 1, y: 2, w: 3, h: 4))
        XCTAssertEqual(c.shown, "--box 1,2,3,4")
        XCTAssertEqual(c.target, "p-mask.png")
        XCTAssertEqual(c.timeout, 2.5)
        let at = try CutoutCommand.parse(["--at", "5.5,6", "--output", "m.png", "--", "-p.png"])
        XCTAssertEqual(at.photo, "-p.png")
        XCTAssertEqual(at.query, .click(x: 5.5, y: 6))
        XCTAssertEqual(at.target, "m.png")
        // --help ends the parse where it stands.
        XCTAssertTrue(try CutoutCommand.parse(["--help", "--bogus"]).help)
    }

    func testCutoutErrorsAreTheLinesTheToolPrints() {
        let usage = "usage: wobble-run cutout PHOTO (--box X,Y,W,H | --at X,Y) [-o MASK.png] [--timeout S]   (MASK.png: the photo's name with -mask.png)"
        func lines(_ args: [String]) -> [String]? { failure { try CutoutCommand.parse(args) }?.lines }
        XCTAssertEqual(lines(["p.png", "--bogus=1"]), ["wobble-run: cutout: unknown option '--bogus=1' (\(usage))"])
        XCTAssertEqual(lines(["p.png", "--box", "1,2,3,4", "--box=5,6,7,8"]), ["wobble-run: cutout: --box is given twice (\(usage))"])
        XCTAssertEqual(lines(["p.png", "--output", "a.png", "-o", "b.png"]), ["wobble-run: cutout: -o is given twice (\(usage))"])
        XCTAssertEqual(lines(["p.png", "--box"]), ["wobble-run: cutout: --box needs a value (\(usage))"])
        XCTAssertEqual(lines(["p.png", "q.png"]), ["wobble-run: cutout: one photo only (\(usage))"])
        XCTAssertEqual(lines([]), ["wobble-run: cutout: \(usage)"])
        XCTAssertEqual(lines(["p.png"]), ["wobble-run: cutout: --box X,Y,W,H or --at X,Y is required (\(usage))"])
        XCTAssertEqual(lines(["p.png", "--box", "1,2,3,4", "--at", "1,2"]), ["wobble-run: cutout: --box and --at: give one (\(usage))"])
        XCTAssertEqual(lines(["p.png", "--box", "1,2,0,4"]), ["wobble-run: cutout: --box must be X,Y,W,H in whole pixels with W and H above 0 (got '1,2,0,4')"])
        XCTAssertEqual(lines(["p.png", "--at", "60"]), ["wobble-run: cutout: --at must be X,Y in pixels (got '60')"])
        XCTAssertEqual(lines(["p.png", "--box", "1,2,3,4", "-o", "m.jpg"]), ["wobble-run: cutout: -o 'm.jpg': a mask is a PNG file: name it with .png"])
        XCTAssertEqual(lines(["p.png", "--box", "1,2,3,4", "--timeout", "0"]), ["wobble-run: cutout: --timeout must be a number of seconds above 0 (got '0')"])
        XCTAssertEqual(failure { try CutoutCommand.parse(["p.png"]) }?.exitCode, 2)
    }

    func testServeParsesIntoItsCommand() throws {
        let c = try ServeCommand.parse(["s.lua", "--port", "8080", "--host=0.0.0.0"])
        var expected = ServeCommand()
        expected.scene = "s.lua"
        expected.port = 8080
        expected.host = "0.0.0.0"
        XCTAssertEqual(c, expected)
        XCTAssertEqual(try ServeCommand.parse(["s.lua"]).host, "127.0.0.1")
        // -h or --help before `--` is help, whatever else the words say.
        XCTAssertTrue(try ServeCommand.parse(["--bogus", "--port", "-h"]).help)
    }

    func testServeErrorsAreTheLinesTheToolPrints() {
        let usage = "usage: wobble-run serve SCENE.lua [--port N] [--host ADDRESS]"
        func lines(_ args: [String]) -> [String]? { failure { try ServeCommand.parse(args) }?.lines }
        XCTAssertEqual(lines(["scene.lua", "--bogus"]), ["wobble-run: serve: unknown option '--bogus' (\(usage))"])
        XCTAssertEqual(lines(["s.lua", "--port", "70000"]), ["wobble-run: serve: --port '70000' is not a port number (0 to 65535)"])
        XCTAssertEqual(lines(["s.lua", "--port"]), ["wobble-run: serve: --port needs a value (\(usage))"])
        XCTAssertEqual(lines(["s.lua", "--host", ""]), ["wobble-run: serve: --host needs an address"])
        XCTAssertEqual(lines(["a.lua", "b.lua"]), ["wobble-run: serve: one scene at a time (\(usage))"])
        XCTAssertEqual(lines([]), ["wobble-run: serve: no scene given (\(usage))"])
    }

    func testNewParsesIntoItsCommand() throws {
        let c = try NewCommand.parse(["photos/rocket.png"])
        XCTAssertEqual(c.photo, "photos/rocket.png")
        XCTAssertEqual(c.scene, "rocket.lua")
        XCTAssertEqual(try NewCommand.parse(["--", "-cat.png", "-x.lua"]).scene, "-x.lua")
        XCTAssertTrue(try NewCommand.parse(["-x", "--help"]).help)
        XCTAssertEqual(failure { try NewCommand.parse(["-cat.png", "y.lua"]) },
                       Failure(lines: ["wobble-run: new: unknown option '-cat.png' (a photo whose name starts with '-': wobble-run new ./-cat.png)"], exitCode: 2))
        XCTAssertEqual(failure { try NewCommand.parse(["a", "b", "c"]) }?.lines,
                       ["wobble-run: new: usage: wobble-run new PHOTO [SCENE.lua]   (SCENE.lua: the photo's name with .lua, in the current folder)"])
    }

    func testPackParsesIntoItsCommand() throws {
        let c = try PackCommand.parse(["m.csv", "-j", "3", "--slice", "1/4", "--json"])
        XCTAssertEqual(c.pack.manifest, "m.csv")
        XCTAssertEqual(c.pack.jobs, 3)
        XCTAssertEqual("\(c.pack.slice)", "1/4")
        XCTAssertTrue(c.pack.json)
        XCTAssertEqual(c.pack.version, RenderCommand.version)
        XCTAssertEqual(failure { try PackCommand.parse(["--jobs", "2"]) }?.lines, ["wobble-run: pack: no manifest given; usage: wobble-run pack MANIFEST [options]"])
        XCTAssertEqual(failure { try PackCommand.parse(["m.csv", "--slise", "1/2"]) }?.lines,
                       ["wobble-run: unknown option '--slise' (did you mean '--slice'?); see wobble-run pack --help"])
    }

    func testCompletionsNamesItsShell() throws {
        XCTAssertEqual(try CompletionsCommand.parse(["bash"]), "bash")
        XCTAssertNil(try CompletionsCommand.parse(["--help"]))
        XCTAssertEqual(failure { try CompletionsCommand.parse(["tcsh"]) as Any }?.lines, ["wobble-run: completions: name a shell: bash, zsh, fish (got 'tcsh')"])
    }

    func testTheFirstWordNamesTheSubcommand() {
        XCTAssertEqual(Commands.named("cutout")?.name, "cutout")
        XCTAssertEqual(Commands.named("pack")?.name, "pack")
        // A scene file named like a subcommand is reached as ./cutout.
        XCTAssertNil(Commands.named("./cutout"))
        XCTAssertNil(Commands.named("s.lua"))
        XCTAssertNil(Commands.named(""))
    }

    func testEveryErrorBecomesOneFailure() {
        XCTAssertEqual(Failure(UsageError("bad"), command: "cutout"), Failure(lines: ["wobble-run: cutout: bad"], exitCode: 2))
        XCTAssertEqual(Failure(RunError("scene 'x.lua': no such file")), Failure(lines: ["wobble-run: scene 'x.lua': no such file"], exitCode: 1))
        XCTAssertEqual(Failure(Interrupted(signal: 15)), Failure(lines: [], exitCode: 143))
    }
}
