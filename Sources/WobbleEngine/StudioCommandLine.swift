import WobbleCore

/// What `wobble-run edit` parses (the studio executable parses it; the
/// command line's table shows the same rows in its help, man page and
/// completions): the scene-run options a render takes too (the same rows,
/// limits and errors), and the studio's own.
package struct StudioCommandLine: SceneRunOptions {
    package var scene: String?
    package var image: String?
    package var fps: Double?
    package var seed = 0
    /// A live session re-runs the scene on every change: a runaway
    /// script must not hang the window.
    package var timeout: Double? = 10
    package var backend: Backend = .auto
    package var allowIO = false
    package var help = false
    package var verbose = false
    package var position: (Int, Int)?
    package var quitAfter: Double?
    package var arguments: [String] = []

    package init() {}

    /// The studio's option table.
    package static let specs: [OptionSpec<StudioCommandLine>] = [
        .image, .fps, .seed, .allowIO, .timeout, .backend,
        OptionSpec(names: ["-v", "--verbose"], value: nil, help: "say what the window does on stderr (frames presented)") { o, _ in o.verbose = true },
        .help,
        // Tests place the window.
        OptionSpec(names: ["--window-position"], value: "X,Y", help: "where the window goes", hidden: true) { o, v in
            let parts = v.split(separator: ",").compactMap { Int($0) }
            guard parts.count == 2 else { throw UsageError("--window-position: '\(v)' is not X,Y") }
            o.position = (parts[0], parts[1])
        },
        // Benchmarks.
        OptionSpec(names: ["--quit-after"], value: "S", help: "quit after S seconds", hidden: true) { o, v in
            o.quitAfter = try OptionParser.number(v, "--quit-after", min: 0, max: 86400)
        },
    ]
}
