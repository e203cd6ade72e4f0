import Foundation
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleRender
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// Exports from the window: `E` renders the scene's output with the
/// headless tool in the background (exactly what `wobble-run SCENE.lua`
/// run in the scene's folder writes: the saved scene, with the options the
/// studio was given; the
/// window goes on answering, the status line shows the progress), `P`
/// writes the frame shown as `<scene>-still-N.png` beside the scene (the
/// first free N; the headless frame at the scene's size). It says what it
/// did through `status`.
final class Exporter {
    private let options: SessionOptions
    /// The headless tool (`wobble-run`), nil when it cannot be found.
    private let tool: String?
    /// Shows a status line (true: an error).
    var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }
    private var job: (child: ChildProcess, log: String, started: Double, shown: Int, note: String)?

    init(options: SessionOptions, tool: String?) {
        self.options = options
        self.tool = tool ?? Exporter.findTool()
    }

    var isExporting: Bool { job != nil }

    /// The headless tool beside this executable (an install and a build put
    /// both in one folder), else on PATH.
    static func findTool() -> String? {
        if let me = try? Posix.readlink("/proc/self/exe"), let slash = me.lastIndex(of: "/") {
            let beside = String(me[..<slash]) + "/wobble-run"
            if Posix.kind(beside) == .regular, PathBytes.withCString(beside, { access($0, X_OK) == 0 }) == true { return beside }
        }
        return ChildProcess.findExecutable("wobble-run")
    }

    /// The command line of the export: the scene and the scene-run options
    /// the studio was given, paths absolute (it runs in the scene's folder).
    var arguments: [String] {
        var a = [ScenePaths.absolute(options.scenePath), "--backend", options.backend.rawValue, "--seed", String(options.seed)]
        if let i = options.imagePath { a += ["--image", ScenePaths.absolute(i)] }
        if let f = options.fps { a += ["--fps", String(f)] }
        if options.allowIO { a.append("--allow-io") }
        if !options.arguments.isEmpty { a += ["--"] + options.arguments }
        return a
    }

    /// Starts the export (one at a time), at clock time `now`.
    func start(now: Double, unsavedEdits: Bool) {
        guard job == nil else { status("exporting already (E again when it is done)", false); return }
        guard let tool else { status("cannot export: the 'wobble-run' tool is not beside the studio nor on PATH", true); return }
        let log = ScenePaths.join(NSTemporaryDirectory(), "wobble-export-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log")
        do {
            let null = try Posix.open("/dev/null", O_RDWR)
            defer { Glibc.close(null) }
            let err = try Posix.open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            defer { Glibc.close(err) }
            // In the scene's folder: the output lands beside the scene, as
            // `cd FOLDER && wobble-run SCENE.lua` puts it.
            let folder = ScenePaths.folder(ScenePaths.absolute(options.scenePath))
            let shell = ["-c", "cd -- \"$0\" && exec \"$@\"", folder, tool] + arguments
            // Said with every line of the export: the file is the scene as saved.
            let note = unsavedEdits ? " as saved (the unsaved edits are not in it)" : ""
            job = (try ChildProcess("/bin/sh", shell, stdin: null, stdout: null, stderr: err), log, now, -1, note)
            status("exporting \(ScenePaths.name(options.scenePath))\(note)...", false)
        } catch {
            try? Posix.unlink(AT_FDCWD, log, shown: log)
            status("cannot export: \(error)", true)
        }
    }

    /// Looks whether the export ended (each turn of the window's loop);
    /// shows its progress each second meanwhile when `showProgress`.
    func poll(now: Double, showProgress: Bool = true) {
        guard var j = job else { return }
        guard j.child.waitExited(timeout: 0) else {
            let s = Int(now - j.started)
            if s != j.shown, showProgress {
                j.shown = s
                job = j
                status("exporting \(ScenePaths.name(options.scenePath))\(j.note): \(s) s (the window goes on answering)", false)
            }
            return
        }
        job = nil
        let result = j.child.wait()
        let text = (try? Posix.readFile(j.log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        try? Posix.unlink(AT_FDCWD, j.log, shown: j.log)
        let lines = text.split(separator: "\n").map(String.init).filter { !$0.contains("\r") }
        // A warning is never shown as a success.
        let warnings = lines.filter { $0.hasPrefix("wobble-run: warning: ") }.map { String($0.dropFirst("wobble-run: ".count)) }
        if result == .exited(0), let first = warnings.first {
            status("exported\(j.note) in \(fmt1(now - j.started)) s, but \(first)" + (warnings.count > 1 ? " (+\(warnings.count - 1) more)" : ""), true)
        } else if result == .exited(0) {
            status("exported\(j.note) in \(fmt1(now - j.started)) s" + (lines.last.map { ": \($0)" } ?? ""), false)
        } else {
            status("export failed: \(lines.first { $0.hasPrefix("wobble-run") } ?? lines.last ?? "\(result)")", true)
        }
    }

    /// How long an export stopped by quitting has to clean up after SIGTERM.
    static let stopGrace = 5.0

    /// Stops an export in flight (the studio quits): SIGTERM, so that the
    /// tool removes the file it was writing, SIGKILL only past a deadline.
    func cancel() {
        guard let j = job else { return }
        job = nil
        let ended = j.child.terminate(grace: Exporter.stopGrace)
        try? Posix.unlink(AT_FDCWD, j.log, shown: j.log)
        let killed = ended == .signalled(SIGKILL)
        printError("studio: the export in flight was stopped" + (killed ? " (killed: it did not end within \(Int(Exporter.stopGrace)) s of SIGTERM)" : ""))
    }

    /// Writes `state` (the frame shown) as a PNG beside the scene: the
    /// headless frame at the scene's own size. Returns the path.
    @discardableResult
    func writeStill(_ state: FrameState, image: RGBAImage) -> String? {
        do {
            let r = try FrameRenderers.make(options.backend, source: image, outputWidth: image.width, outputHeight: image.height)
            let frame = try Compositor.frame(state, renderer: r, extra: [])
            let path = ScenePaths.firstFree(beside: options.scenePath, tag: "still", ext: "png")
            try AtomicFile.write(try ImageIO.encodePNG(frame), to: path)
            status("wrote \(path)", false)
            printError("studio: wrote \(path)")
            return path
        } catch {
            status("still not written: \(error)", true)
            return nil
        }
    }
}
