/// The one entry that renders for every front end: the command line (a
/// render, `--check`, `--watch`, `--assemble`), the window's and the
/// page's exports (`ExportJob`) and a pack's rows and shards. It chooses
/// the run from the options alone: `--assemble` (`options.assemble`) joins
/// PNG frames (`Assembler`), a preset fits a platform (`PresetRun`), else a
/// plain run of the scene (`Runner`). A front end never picks one itself,
/// so the same options give the same bytes whoever asks.
package enum RenderEntry {
    /// What a run produced.
    package struct Result {
        /// The `--check` line (`ok: N frames, S s at F fps, W×H`).
        package var okLine: String
        /// A scene's run (plain or preset); nil for `--assemble`.
        package var summary: Runner.Summary?
        /// The files the scene named and the image it used (`Runner.Summary.inputs`).
        package var inputs: [String] { summary?.inputs ?? [] }
    }

    /// Runs `options`; `report` collects the warnings, the JSON fields and
    /// the inputs read (also when the run fails).
    package static func run(_ options: RenderOptions, report: RunReport) throws -> Result {
        if let dir = options.assemble {
            var assembler = Assembler(options: options, directory: dir)
            assembler.report = report
            return Result(okLine: try assembler.run(), summary: nil)
        }
        let summary = try render(options, report: report)
        return Result(okLine: summary.okLine, summary: summary)
    }

    /// A scene's run: `--preset`'s search when the options name a preset,
    /// else a plain run. For the callers that render scenes only (an
    /// export, a pack's row): `options.assemble` is not looked at.
    package static func render(_ options: RenderOptions, report: RunReport) throws -> Runner.Summary {
        if let preset = options.preset { return try PresetRun(options: options, preset: preset).run(report: report) }
        return try Runner(options: options).run(report: report)
    }
}
