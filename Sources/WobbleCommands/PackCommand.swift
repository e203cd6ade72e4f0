import WobbleCore
import WobbleEngine
import WobbleSystem

/// `wobble-run pack MANIFEST [options]`: many clips from one manifest, in
/// one process (`PackRun`). Exit 0 when every row of the slice succeeded,
/// 1 when any failed (each named on its line, every row attempted), 2 for
/// bad usage, 128 + N on signal N (the rows finished so far are kept and
/// recorded: the next run goes on from there).
package struct PackCommand {
    package var pack = PackOptions()
    package var manifest: String?
    package var help = false

    package init() {}

    static let specs: [OptionSpec<PackCommand>] = [
        OptionSpec(names: ["-j", "--jobs"], value: "N", help: "rows rendered at once (default: one per core)") { o, v in
            o.pack.jobs = try OptionParser.integer(v, "--jobs", min: 1, max: 1024)
        },
        OptionSpec(names: ["--slice"], value: "I/N|auto|auto/N",
                   help: "render only the rows whose index is I mod N (0-based), for N processes or machines; auto reads a Slurm array's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (then give auto/N, N the Job's completions)") { o, v in
            o.pack.slice = try PackSlice.parse(v)
        },
        OptionSpec(names: ["--shard-frames"], value: "N",
                   help: "with --slice: a row whose clip has more than N frames (default 300) is split into frame ranges, one per slice, and assembled by the slice that finishes last; 0: never") { o, v in
            o.pack.shardFrames = try OptionParser.integer(v, "--shard-frames", min: 0, max: Limits.maxFrameIndex)
        },
        OptionSpec(names: ["--backend"], value: "auto|gles|cpu|reference", help: "renderer of every row (see wobble-run --help)") { o, v in
            guard let b = Backend(rawValue: v.lowercased()) else { throw UsageError("--backend: '\(v)' is not one of auto, gles, cpu, reference") }
            o.pack.backend = b
        },
        OptionSpec(names: ["--timeout"], value: "S", help: "stop a row's script that runs longer than S seconds of wall time (the row fails)") { o, v in
            o.pack.timeout = try OptionParser.number(v, "--timeout", min: 0, exclusiveMin: true, max: 1e9)
        },
        OptionSpec(names: ["--json"], value: nil, help: "print one JSON object per row as it ends (type row: output, status, bytes, frames, duration, warnings, error) and one of type summary at the end, on stdout") { o, _ in o.pack.json = true },
        OptionSpec(names: ["-q", "--quiet"], value: nil, help: "no progress line, no summary line when every row succeeded") { o, _ in o.pack.quiet = true },
        OptionSpec(names: ["--stop-at"], value: "STAGE", help: "test hook: stop the process at a stage", hidden: true) { o, v in
            o.pack.stopAt = try PackStop.parse(v)
        },
        OptionSpec(names: ["--hold-until"], value: "PATH", help: "test hook: hold the folder until PATH exists", hidden: true) { o, v in
            o.pack.holdUntil = v
        },
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { o, _ in o.help = true },
    ]

    /// `pack`'s row of the table.
    package static let subcommand = Subcommand(
        name: "pack",
        synopsis: ["pack MANIFEST [options]"],
        summary: "many clips, one per manifest row",
        about: """
        Renders every row of MANIFEST, a CSV file with the header
        scene,image,output[,preset,fps,width,frames,seed] (or JSON lines with
        those keys): one clip per row, paths relative to the manifest, each
        output a file inside the manifest's folder. Rows run side by side in
        one process; a finished row whose inputs did not change is not
        rendered again (the journal: .wobble-pack/ beside the manifest), so a
        pack stopped halfway goes on where it was when run again.

        """,
        options: specs.map(OptionRow.init),
        footer: """
        exit status: 0 every row succeeded, 1 a row failed (every row is still
        attempted; each failure is one line naming its row), 2 bad usage,
        128+N on signal N. See docs/packs.md.

        """,
        operands: .manifest,
        run: { PackCommand.main($0) })

    /// The words after `pack` as a command (a `UsageError` for bad usage).
    package static func parse(_ args: [String]) throws -> PackCommand {
        var o = PackCommand()
        try OptionParser.parse(args, specs: specs, into: &o, helpHint: "wobble-run pack --help") { o, a in
            if let m = o.manifest { throw UsageError("pack: one manifest only ('\(m)', '\(a)')") }
            o.manifest = a
        } rest: { o, words in
            if o.manifest == nil, let first = words.first { o.manifest = first }
        }
        if o.help { return o }
        guard let manifest = o.manifest else { throw UsageError("pack: no manifest given; usage: wobble-run pack MANIFEST [options]") }
        o.pack.manifest = manifest
        o.pack.version = RenderCommand.version
        return o
    }

    static func main(_ args: [String]) -> Int32 {
        let report = RunReport(json: false)
        do {
            let o = try parse(args)
            if o.help {
                print(subcommand.helpText, terminator: "")
                return 0
            }
            Interrupt.install()
            let summary = try PackRun(options: o.pack).run()
            let line = "pack: \(summary.selected) row\(summary.selected == 1 ? "" : "s")\(o.pack.slice.count > 1 ? " (slice \(o.pack.slice))" : ""): \(summary.written) written, \(summary.skipped) already done, \(summary.failed.count) failed, in \(NumberText.seconds(summary.seconds)) s"
            guard summary.failed.isEmpty else {
                throw RunError(line + " (" + summary.failed.joined(separator: ", ") + ")")
            }
            if !o.pack.quiet { printError("wobble-run: " + line) }
            return 0
        } catch {
            return Failure.report(error, report: report)
        }
    }
}
