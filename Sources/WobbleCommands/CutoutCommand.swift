import Foundation
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// `wobble-run cutout PHOTO --box X,Y,W,H [-o MASK.png]`: writes the mask
/// `addSketch{cutout = "auto"}` would find for a rectangular region with
/// that box, or with `--at X,Y` the object a studio `Shift`+click there
/// finds first (for pipelines, and to edit by hand in a paint program):
/// grey, 255 object, 0 background, the photo's size. One clear line and
/// nothing written on any failure.
package struct CutoutCommand: RunnableSubcommand {
    package var photo = ""
    /// The box, or the point.
    package var query: CommandFiles.CutoutQuery = .box(x: 0, y: 0, w: 1, h: 1)
    /// How the query was given (`--box 1,2,3,4`), for its error lines.
    package var shown = ""
    /// `-o`; nil: the photo's name with `-mask.png`.
    package var output: String?
    package var timeout: Double?
    package var help = false

    package init() {}

    /// Where the mask goes.
    package var target: String { output ?? ScenePaths.baseName(photo) + "-mask.png" }

    static let usage = subcommand.usage

    /// What the parser fills: the words as given, checked after (in the
    /// order the errors are said).
    struct Words {
        var photo: String?, box: String?, at: String?, output: String?, timeout: String?
        var help = false
    }

    static let specs: [OptionSpec<Words>] = [
        OptionSpec(names: ["--box"], value: "X,Y,W,H", help: "the region's box (whole pixels; inside the photo)") { o, v in o.box = v },
        OptionSpec(names: ["--at"], value: "X,Y", help: "a point on the object (pixels; inside the photo)") { o, v in o.at = v },
        OptionSpec(names: ["-o", "--output"], value: "MASK.png", help: "where to write the mask (replaced atomically)") { o, v in o.output = v },
        OptionSpec(names: ["--timeout"], value: "S", help: "give up after S seconds (reading the photo and finding the object): one line, exit 1, nothing written") { o, v in o.timeout = v },
        // `--help` ends the parse where it stands: what follows is not looked at.
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { _, _ in throw HelpAsked() },
    ]

    struct HelpAsked: Error {}

    static let rules = ParseRules(unknown: { _, word, _ in
        "unknown option '\(PathBytes.display(word))' (\(usage))"
    }, needsValue: { name, _ in
        "\(name) needs a value (\(usage))"
    }, flagValue: { _, word in
        "unknown option '\(PathBytes.display(word))' (\(usage))"
    }, givenTwice: { name in
        "\(name) is given twice (\(usage))"
    })

    /// `cutout`'s row of the table.
    package static let subcommand = Subcommand(
        name: "cutout",
        synopsis: ["cutout PHOTO (--box X,Y,W,H | --at X,Y) [-o MASK.png] [--timeout S]"],
        usageNote: "(MASK.png: the photo's name with -mask.png)",
        summary: "the mask cutout = \"auto\" finds for a box",
        about: """
        Finds the object inside the box (pixels of PHOTO, origin top-left) as
        addSketch{x = X, y = Y, w = W, h = H, cutout = "auto"} does, and writes
        it as a grey PNG the size of PHOTO: 255 object, 0 background, a soft
        edge between. The same photo and box give the same bytes on every run.
        Use it as addSketch{..., cutout = "MASK.png"}, after touching it up in
        any paint program if you like.

        With --at X,Y instead: the object a Shift+click at that point of the
        picture finds first in the studio (wobble-run edit).

        PHOTO must be a regular file (a FIFO or a device is refused, as the
        scene's image() refuses it). Without -o the mask is PHOTO's name with
        -mask.png, a name wobble-run chooses: a symbolic link there is replaced
        by the mask, never written through.

        """,
        options: specs.map(OptionRow.init),
        operands: .photo,
        run: { CutoutCommand.main($0) })

    /// The words after `cutout` as a command; a `Failure` (exit 2) for bad usage.
    package static func parse(_ args: [String]) throws -> CutoutCommand {
        var w = Words()
        do {
            // (After `--` every word is the photo.)
            try OptionParser.parse(args, specs: specs, into: &w, rules: rules, operand: \.photo,
                                   tooMany: "one photo only (\(usage))")
        } catch is HelpAsked {
            var c = CutoutCommand()
            c.help = true
            return c
        } catch let e as UsageError {
            throw Failure(e.message, command: "cutout", exitCode: 2)
        }
        func bad(_ message: String) -> Failure { Failure(message, command: "cutout", exitCode: 2) }
        guard let photo = w.photo else { throw bad(Self.usage) }
        var c = CutoutCommand()
        c.photo = photo
        c.output = w.output
        if let t = w.timeout {
            guard let v = Double(t.trimmingCharacters(in: .whitespaces)), v.isFinite, v > 0 else {
                throw bad("--timeout must be a number of seconds above 0 (got '\(PathBytes.display(t, controls: true))')")
            }
            c.timeout = v
        }
        // A mask is a PNG: another name would hold bytes its extension does not say.
        let target = c.target
        let stream = target == "-" || OutputTarget.namesStdout(target) || Posix.kind(target)?.isStream == true
        guard stream || target.lowercased().hasSuffix(".png") else {
            throw bad("-o '\(PathBytes.display(target, controls: true))': a mask is a PNG file: name it with .png")
        }
        switch (w.box, w.at) {
        case (let boxText?, nil):
            let parts = boxText.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3], w > 0, h > 0 else {
                throw bad("--box must be X,Y,W,H in whole pixels with W and H above 0 (got '\(PathBytes.display(boxText))')")
            }
            c.query = .box(x: x, y: y, w: w, h: h)
            c.shown = "--box \(boxText)"
        case (nil, let atText?):
            let parts = atText.split(separator: ",", omittingEmptySubsequences: false).map { Double(decimal: $0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let x = parts[0], let y = parts[1], x.isFinite, y.isFinite else {
                throw bad("--at must be X,Y in pixels (got '\(PathBytes.display(atText))')")
            }
            c.query = .click(x: x, y: y)
            c.shown = "--at \(atText)"
        case (nil, nil):
            throw bad("--box X,Y,W,H or --at X,Y is required (\(Self.usage))")
        case (_?, _?):
            throw bad("--box and --at: give one (\(Self.usage))")
        }
        return c
    }

    /// Finds the object and writes the mask (nothing on any failure); 0.
    func run() throws -> Int32 {
        // A stopping signal (even one the shell had set to be ignored, as
        // for `&` in a script) ends it within a second, nothing written:
        // the search is one long library call that polls nothing.
        Interrupt.install()
        // --timeout: the photo's read and the search for the object, as a
        // render's reads are bounded (a stalled network file, a huge photo).
        let alarm = timeout.map { t in
            Alarm(after: t) {
                printError("wobble-run: cutout: not done within \(NumberText.plain(t)) s (--timeout): nothing written")
                TemporaryPaths.removeAll()
                ThisProcess.exitNow(1)
            }
        }
        defer { alarm?.cancel() }
        try CommandFiles.writeCutoutMask(photo: photo, query: query, shown: shown, to: target,
                                         name: output == nil ? .madeUp : .given, beforeWrite: { alarm?.cancel() })
        return 0
    }
}
