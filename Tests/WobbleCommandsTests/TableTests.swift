import Foundation
import XCTest
@testable import WobbleCommands
import WobbleEngine
import WobbleTestSupport

/// Help, the man page and the completions are made from the one subcommand
/// table: each shows every subcommand and every option the table has.
final class TableTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    var shown: [Subcommand] { Commands.all.filter { !$0.hidden } }

    func testTheTableHasTheSubcommandsOfToday() {
        XCTAssertEqual(Commands.all.map(\.name), ["", "edit", "new", "cutout", "serve", "pack", "completions"])
        for c in Commands.all {
            let names = c.options.flatMap(\.names)
            XCTAssertEqual(names.count, Set(names).count, "\(c.name): an option name twice")
            XCTAssertTrue(names.contains("--help"), "\(c.name): no --help")
            for row in c.options where !row.hidden {
                XCTAssertFalse(row.help.isEmpty, "\(c.name) \(row.names): no help")
            }
        }
    }

    func testEachHelpListsEveryOptionOfItsRow() {
        for c in Commands.all {
            let help = c.name.isEmpty ? Commands.renderHelpText : c.helpText
            XCTAssertTrue(help.hasPrefix(c.name.isEmpty ? "wobble-run — " : "usage: wobble-run \(c.synopsis[0])"), help)
            for row in c.options {
                let entry = OptionParser.helpEntry(names: row.names, value: row.value, help: row.help)
                if row.hidden {
                    XCTAssertFalse(help.contains(row.names.joined(separator: ", ")), "\(c.name): hidden \(row.names) in help")
                } else {
                    XCTAssertTrue(help.contains(entry), "\(c.name): \(row.names) missing from its help:\n\(help)")
                }
            }
        }
        // The overview names every subcommand with its synopsis.
        for c in shown where !c.name.isEmpty {
            XCTAssertTrue(Commands.renderHelpText.contains("wobble-run \(c.synopsis[0])   (\(c.summary)"), c.name)
        }
    }

    func testTheManPageShowsEverySubcommandAndOption() throws {
        let man = Generate.man()
        XCTAssertTrue(man.utf8.allSatisfy { $0 < 0x80 }, "the roff source is ASCII")
        for c in shown {
            if !c.name.isEmpty {
                XCTAssertTrue(man.contains(".B wobble\\-run \(c.name)\n"), c.name)
                XCTAssertTrue(man.contains(".SS wobble\\-run \(c.name)\n"), c.name)
            }
            for row in c.options where !row.hidden {
                let names = row.names.map { "\\fB\(Generate.roff($0))\\fR" }.joined(separator: ", ")
                XCTAssertTrue(man.contains(".TP\n\(names)"), "\(c.name) \(row.names)")
                XCTAssertTrue(man.contains(Generate.roff(row.help)), "\(c.name) \(row.names)")
            }
            for row in c.options where row.hidden {
                XCTAssertFalse(man.contains(Generate.roff(row.names[0]) + "\\fR"), "hidden \(row.names[0])")
            }
        }
        // As man shows it: every synopsis, in words.
        let box = try Sandbox()
        try box.write("wobble-run.1", man)
        let r = try Tool.run(["-c", "LANG=C MANWIDTH=400 man ./wobble-run.1 | col -b"], cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = r.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for c in shown {
            for line in c.synopsis {
                XCTAssertTrue(page.contains("wobble-run " + line), "\(line) not in the page")
            }
        }
    }

    /// Runs the generated bash completion for `words` (the last one is
    /// completed); what it offers.
    func complete(_ words: [String], in box: Sandbox) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
        source ./completion.bash
        COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _wobble_run; printf '%s\\n' "${COMPREPLY[@]}"
        """
        let r = try Tool.run(["-c", script], cwd: box.url, executable: "/bin/bash")
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func testBashCompletesEverySubcommandAndOption() throws {
        let box = try Sandbox()
        try box.write("completion.bash", try Generate.text("bash"))
        try box.write("scene.lua", "")
        try box.write("m.csv", "")
        try box.write("photo.png", "")
        XCTAssertEqual(try complete(["wobble-run", ""], in: box).filter { !$0.contains(".") }, ["edit", "new", "cutout", "serve", "pack"])
        for c in shown {
            let words = c.name.isEmpty ? ["wobble-run", "scene.lua", "--"] : ["wobble-run", c.name, "--"]
            let offered = try complete(words, in: box)
            XCTAssertEqual(Set(offered), Set(c.options.filter { !$0.hidden }.flatMap(\.longNames)), c.name)
            for row in c.options where !row.hidden && row.value != nil {
                let after = (c.name.isEmpty ? ["wobble-run", "scene.lua"] : ["wobble-run", c.name]) + [row.names[0], ""]
                let values = try complete(after, in: box)
                switch row.completion {
                case .choices(let words): XCTAssertEqual(values, words, "\(c.name) \(row.names)")
                case .file: XCTAssertEqual(Set(values), ["completion.bash", "scene.lua", "m.csv", "photo.png"], "\(c.name) \(row.names)")
                case .directory, .text, .none: XCTAssertEqual(values, [], "\(c.name) \(row.names)")
                }
            }
        }
        // The words that are not options: a photo, a manifest, a scene.
        XCTAssertEqual(try complete(["wobble-run", "cutout", "p"], in: box), ["photo.png"])
        XCTAssertEqual(try complete(["wobble-run", "pack", ""], in: box), ["m.csv"])
        XCTAssertEqual(try complete(["wobble-run", "serve", ""], in: box), ["scene.lua"])
        XCTAssertEqual(try complete(["wobble-run", "completions", ""], in: box), ["bash", "zsh", "fish"])
    }

    func testZshAndFishNameEverySubcommandAndOption() throws {
        let zsh = try Generate.text("zsh"), fish = try Generate.text("fish")
        for c in shown {
            if !c.name.isEmpty {
                XCTAssertTrue(fish.contains("-a \(c.name) -d '\(c.summary.replacingOccurrences(of: "'", with: "\\'"))'"), c.name)
                XCTAssertTrue(zsh.contains("  \(c.name)) "), c.name)
            }
            for row in c.options where !row.hidden {
                for name in row.longNames {
                    XCTAssertTrue(fish.contains(" -l \(name.dropFirst(2))"), "\(c.name) \(name)")
                    XCTAssertTrue(zsh.contains("\(name)"), "\(c.name) \(name)")
                }
            }
        }
    }

    /// docs/CLI.md describes the same options: every option of every
    /// subcommand is there, and each subcommand has its section.
    func testTheCommandLineDocumentAgreesWithTheTable() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        for c in shown {
            if !c.name.isEmpty { XCTAssertTrue(doc.contains("`wobble-run \(c.name)`"), "docs/CLI.md has no section on \(c.name)") }
            for row in c.options where !row.hidden {
                for name in row.longNames where name != "--help" {
                    // `--fps N` in a table, `-o, --output` or `[--jobs N]` in a synopsis.
                    let said = ["`", ", ", "["].contains { doc.contains($0 + name + " ") || doc.contains($0 + name + "`") }
                    XCTAssertTrue(said, "docs/CLI.md does not mention \(name) (\(c.name.isEmpty ? "render" : c.name))")
                }
            }
        }
        XCTAssertTrue(doc.contains("wobble-run completions bash"))
    }
}
