import Foundation
import WobbleCore
import WobbleEngine
import WobbleSystem

/// Exports from the window: `E` renders the scene's output in the
/// background, in-process (the engine's `ExportJob`: exactly what
/// `wobble-run SCENE.lua` run in the scene's folder writes — the saved
/// scene, with the options the studio was given, its `--timeout` too; the
/// window goes on answering, the status line shows the frames done);
/// `Shift+E` does the same fitted to a platform (`start(preset:)`, the
/// command line's `--preset`) and says the result against the platform's
/// limits, or writes the scene as a live web page (`<scene>.html`, as
/// `-o x.html`); `P` writes the frame shown as `<scene>-still-N.png` beside the
/// scene (the first free N; the headless frame at the scene's size). It
/// says what it did through `status`.
package final class Exporter {
    private let options: SessionOptions
    /// The scene's folder: what the exports write goes there.
    package let folder: AbsolutePath
    /// Shows a status line (true: an error).
    package var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }
    private var job: (export: ExportJob, started: Double, shown: Int, note: String, preset: Preset?)?

    package init(options: SessionOptions) {
        self.options = options
        folder = AbsolutePath(options.scenePath).folder
    }

    package var isExporting: Bool { job != nil }

    /// Waits up to `seconds` for the export under way to end (true when it
    /// has, or none runs); `poll` then takes its outcome.
    package func waitForExport(upTo seconds: Double) -> Bool { job?.export.wait(seconds: seconds) ?? true }
    /// The file the last export wrote (nil: none yet, or it failed) and
    /// how many exports ended so far.
    package private(set) var lastOutput: String?
    package private(set) var ended = 0

    /// What the export renders: the scene as saved, with the scene-run
    /// options the studio was given; a name the engine makes up
    /// (`<scene>.gif`, `<scene>-telegram.webm`) goes beside the scene, as
    /// `cd FOLDER && wobble-run SCENE.lua` puts it.
    /// With `webPage`, `<scene>.html` beside the scene (whatever the
    /// script's `output(...)` says).
    package func renderOptions(preset: Preset?, webPage: Bool = false) -> RenderOptions {
        var o = RenderOptions()
        o.scene = options.scenePath
        o.image = options.imagePath
        o.fps = options.fps
        o.seed = options.seed
        o.timeout = options.timeout
        o.backend = options.backend
        o.allowIO = options.allowIO
        o.scriptArguments = options.arguments
        o.motions = options.motions
        o.outputFolder = folder.string
        o.preset = preset
        if webPage {
            o.format = .html
            o.output = folder.appending(ScenePaths.baseName(options.scenePath) + ".html").string
            o.outputMadeUp = true
        }
        return o
    }

    /// What the status line calls the export: the scene, or `telegram`.
    private func named(_ preset: Preset?) -> String { preset?.name ?? ScenePaths.name(options.scenePath) }

    /// Starts the export (one at a time), at clock time `now`; with
    /// `preset`, fitted to that platform; with `webPage`, the web page.
    package func start(now: Double, unsavedEdits: Bool, preset: Preset? = nil, webPage: Bool = false) {
        guard job == nil else { status("exporting already (E again when it is done)", false); return }
        // Said with every line of the export: the file is the scene as saved.
        let note = unsavedEdits ? " as saved (the unsaved edits are not in it)" : ""
        job = (ExportJob(options: renderOptions(preset: preset, webPage: webPage)), now, -1, note, preset)
        status("exporting \(named(preset))\(webPage ? " as a web page" : "")\(note)...", false)
    }

    /// Looks whether the export ended (each turn of the window's loop);
    /// shows its progress each second meanwhile when `showProgress`.
    package func poll(now: Double, showProgress: Bool = true) {
        guard var j = job else { return }
        guard let outcome = j.export.outcome else {
            let s = Int(now - j.started)
            if s != j.shown, showProgress {
                j.shown = s
                job = j
                let (done, total) = j.export.progress
                let frames = total > 0 ? ", frame \(done)/\(total)" : ""
                status("exporting \(named(j.preset))\(j.note): \(s) s\(frames) (the window goes on answering)", false)
            }
            return
        }
        job = nil
        ended += 1
        lastOutput = outcome.error == nil ? outcome.output : nil
        let seconds = fmt1(now - j.started)
        if let error = outcome.error {
            status("export failed: \(error)", true)
        } else if let first = outcome.warnings.first {
            // A warning is never shown as a success.
            let more = outcome.warnings.count > 1 ? " (+\(outcome.warnings.count - 1) more)" : ""
            status("exported\(j.note) in \(seconds) s, but warning: \(first)" + more, true)
        } else if let p = j.preset {
            let line = Exporter.againstLimits(p, outcome)
            status(line.text + "\(j.note), in \(seconds) s", !line.fits)
        } else {
            status("exported\(j.note) in \(seconds) s" + (outcome.summary.map { ": \($0)" } ?? ""), false)
        }
        if let path = outcome.output { printError("studio: wrote \(path)") }
    }

    /// A preset export's result against the platform's limits:
    /// `telegram: 241 KB of 256 KB, 512x345, 3.0 s of 3 s -> x.webm` (ASCII: the studio font has no other), and
    /// whether every limit holds.
    package static func againstLimits(_ p: Preset, _ o: ExportJob.Outcome) -> (text: String, fits: Bool) {
        let bytes = o.bytes ?? 0
        var parts = ["\(PresetRun.kb(bytes)) of \(PresetRun.kb(p.byteLimit))"]
        var fits = bytes <= p.byteLimit
        if let w = o.width, let h = o.height { parts.append("\(w)x\(h)") }
        if let s = o.seconds {
            parts.append(fmt1(s) + " s" + (p.maxDuration.map { " of \(fmt($0)) s" } ?? ""))
            if let limit = p.maxDuration, s > limit + 1e-9 { fits = false }
        }
        let file = o.output.map { " -> \(ScenePaths.name($0))" } ?? ""
        return ("\(p.name): " + parts.joined(separator: ", ") + file, fits)
    }

    /// How long an export stopped by quitting has to end (it stops at its
    /// next frame, removing what it was writing).
    package static let stopGrace = 5.0

    /// Stops an export in flight (the studio quits): it is cancelled and
    /// waited for, so that the file it was writing is removed before the
    /// studio exits.
    package func cancel() {
        guard let j = job else { return }
        job = nil
        j.export.cancel("the studio quit")
        let ended = j.export.wait(seconds: Exporter.stopGrace)
        if !ended { TemporaryPaths.removeAll() }
        printError("studio: the export in flight was stopped" + (ended ? "" : " (it did not end within \(Int(Exporter.stopGrace)) s; its temporary files were removed)"))
    }

    /// Writes `state` (the frame shown) as a PNG beside the scene: the
    /// headless frame at the scene's own size. Returns the path.
    @discardableResult
    package func writeStill(_ state: FrameState, image: RGBAImage) -> String? {
        do {
            let frame = try StillFrame.render(state, image: image, backend: options.backend)
            let path = ScenePaths.firstFree(beside: options.scenePath, tag: "still", ext: "png")
            try AtomicFile.write(try StillFrame.png(frame), to: path, name: .fresh)
            status("wrote \(path)", false)
            printError("studio: wrote \(path)")
            return path
        } catch {
            status("still not written: \(error)", true)
            return nil
        }
    }
}
