import WobbleEngine
import WobbleSystem
import Foundation

/// `--watch`: render, then render again whenever an input changes, until
/// SIGINT/SIGTERM (exit 128 + signal). The inputs are what the studio
/// watches (`InputWatch`: inotify, else polling; file names need not be
/// UTF-8): the scene file, every `.lua`, `.csv`, `.png`, `.jpg` and `.jpeg`
/// file under the scene's folder (hidden entries skipped, at most 4 folders
/// deep and 5000 files), `--image`, and the files the last render named
/// (the image, traces, modules, wherever they are: the run's report says
/// them, also when it failed); with `--assemble DIR`
/// the frame files of DIR. A change is reported once its writes have
/// settled. A failed render prints its error and watching goes on; the
/// previous output stays intact (the sinks only replace it on success).
///
/// Files the render itself writes (PNG frames inside the scene's folder)
/// must not trigger another render: the state after each render is the new
/// baseline, except that scripts and traces (`.lua`, `.csv`, never written
/// by a render) edited while it ran keep their state from before it, so
/// such an edit still causes the next render. The `-o` target is never an
/// input.
enum WatchLoop {
    static func run(_ options: RenderCommand) -> Int32 {
        let watch: InputWatch
        let what: String
        if let dir = options.render.assemble {
            // The frames folder's tree: a scene that is never there names it.
            watch = InputWatch(scenePath: ScenePaths.join(dir, ".wobble-assemble"))
            what = "'\(dir)'"
        } else {
            let scene = options.scene ?? ""
            watch = InputWatch(scenePath: scene)
            what = ScenePaths.name(scene)
        }
        if let o = options.output, !o.contains("%") {
            let output = ScenePaths.name(ScenePaths.absolute(o))
            watch.ignore = { $0 == output }
        }
        let scene = options.render.assemble == nil ? watch.scenePath : nil
        // The files the last run read (its report's: also when it failed).
        var read: [String] = []
        func inputs() -> [String] { (options.image.map { [$0] } ?? []) + read }
        func isScript(_ path: String) -> Bool {
            let ext = ScenePaths.name(path).split(separator: ".").last?.lowercased()
            return path == scene || ext == "lua" || ext == "csv"
        }
        func say(_ line: String) { if !options.quiet { printError(line) } }

        watch.reset(extra: inputs())
        read = options.runReporting().inputs
        if let s = Signals.received { return 128 + s }
        watch.reset(extra: inputs(), keeping: isScript)
        let others = watch.inputCount - (scene.flatMap(FileStamp.init) == nil ? 0 : 1)
        say("watching \(what) and \(others) file\(others == 1 ? "" : "s"); Ctrl-C stops")
        while true {
            if let s = Signals.sleep(watch.pollInterval) { return 128 + s }
            guard let changed = watch.poll(extra: inputs()), let first = changed.first else { continue }
            say("\(first)\(changed.count == 1 ? "" : " and \(changed.count - 1) more") changed: rendering again")
            let (status, seen) = options.runReporting()
            read = seen
            if let s = Signals.received { return 128 + s }
            if status == 0 { say("rendered at \(clock())") }
            watch.reset(extra: inputs(), keeping: isScript)
        }
    }

    /// The local time of day, `HH:MM:SS`.
    static func clock() -> String {
        let t = localTimeOfDay()
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(t.hour)):\(two(t.minute)):\(two(t.second))"
    }
}
