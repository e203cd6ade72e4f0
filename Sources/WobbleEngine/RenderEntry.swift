/// The one entry that renders a scene for every front end that renders
/// whole clips (the command line, a pack's rows): a `--preset` run when
/// the options name a preset, else a plain run.
package enum RenderEntry {
    package static func run(_ options: RenderOptions, report: RunReport) throws -> Runner.Summary {
        if let preset = options.preset { return try PresetRun(options: options, preset: preset).run(report: report) }
        return try Runner(options: options).run(report: report)
    }
}
