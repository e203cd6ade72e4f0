import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `--watch`: render, then render again whenever an input changes, until
/// SIGINT/SIGTERM (exit 128 + signal).
///
/// Inputs are polled every 200 ms (modification time, size and inode, so
/// editors that save by renaming are seen too): the scene file, every
/// `.lua`, `.csv`, `.png`, `.jpg` and `.jpeg` file under the scene's folder
/// (hidden entries skipped, at most 4 folders deep and 5000 files),
/// `--image`, and the files the last render named (the image, traces,
/// modules, wherever they are). With `--assemble DIR` the frame files of DIR are watched.
/// After a change it waits 100 ms for writes to settle, then renders again.
/// A failed render prints its error and watching goes on; the previous
/// output stays intact (the sinks only replace it on success).
///
/// Files the render itself writes (PNG frames or a GIF inside the scene's
/// folder) must not trigger another render: the state after each render is
/// the new baseline, except that scripts and traces (`.lua`, `.csv`, never
/// written by a render) edited while it ran are compared with their state
/// before it, so such an edit still causes the next render.
struct Watcher {
    let options: Options

    /// Poll interval and settle time, in milliseconds.
    static let pollMilliseconds = 200
    static let settleMilliseconds = 100
    static let maxDepth = 4
    static let maxFiles = 5000

    /// What identifies one version of a file.
    struct Stamp: Equatable {
        var seconds: Int
        var nanoseconds: Int
        var size: Int64
        var inode: UInt64
    }

    func run() -> Int32 {
        var baseline = scan()
        _ = runReporting(options)
        if let s = Interrupt.signal { return 128 + s }
        baseline = merge(before: baseline, after: scan())
        let others = baseline.keys.filter { $0 != sceneKey }.count
        let what = options.assemble.map { "'\($0)'" } ?? (options.scene.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "")
        say("watching \(what) and \(others) file\(others == 1 ? "" : "s"); Ctrl-C stops")
        while true {
            if let s = sleep(Watcher.pollMilliseconds) { return 128 + s }
            var now = scan()
            guard now != baseline else { continue }
            // Let an editor or a copy finish writing.
            repeat {
                if let s = sleep(Watcher.settleMilliseconds) { return 128 + s }
                let again = scan()
                if again == now { break }
                now = again
            } while true
            say("\(describeChanges(from: baseline, to: now)): rendering again")
            let status = runReporting(options)
            if let s = Interrupt.signal { return 128 + s }
            if status == 0 && !options.quiet { say("rendered at \(Watcher.clock())") }
            baseline = merge(before: now, after: scan())
        }
    }

    /// Sleeps `ms` milliseconds in short steps; returns the signal number
    /// as soon as SIGINT/SIGTERM has arrived.
    func sleep(_ ms: Int) -> Int32? {
        var left = ms
        while left > 0 {
            if let s = Interrupt.signal { return s }
            let step = min(left, 50)
            usleep(UInt32(step) * 1000)
            left -= step
        }
        return Interrupt.signal
    }

    func say(_ line: String) {
        if !options.quiet { printError(line) }
    }

    static func clock() -> String {
        var t = time(nil)
        var tmv = tm()
        localtime_r(&t, &tmv)
        return String(format: "%02d:%02d:%02d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec)
    }

    // MARK: - What is watched

    var sceneKey: String? { options.scene.map(Watcher.absolute) }

    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The watched files and their stamps (a missing file is simply absent).
    func scan() -> [String: Stamp] {
        var result: [String: Stamp] = [:]
        func add(_ path: String) {
            if let s = Watcher.stamp(path) { result[path] = s }
        }
        let outputs = excludedPaths()
        if let dir = options.assemble {
            walk(Watcher.absolute(dir), depth: 0, maxDepth: 0, extensions: ["png"], excluded: outputs, into: &result)
            return result
        }
        if let scene = sceneKey {
            add(scene)
            let folder = (scene as NSString).deletingLastPathComponent
            walk(folder.isEmpty ? "/" : folder, depth: 0, maxDepth: Watcher.maxDepth,
                 extensions: ["lua", "csv", "png", "jpg", "jpeg"], excluded: outputs, into: &result)
        }
        if let image = options.image { add(Watcher.absolute(image)) }
        for input in Runner.lastInputs { add(Watcher.absolute(input)) }
        return result
    }

    /// The `-o` target (a file, or a folder of frames and what is in it)
    /// is never an input. (A printf pattern's frames, and the script's own
    /// `output(...)`, are left to the post-render baseline.)
    func excludedPaths() -> [String] {
        guard let o = options.output, !o.contains("%") else { return [] }
        return [Watcher.absolute(o)]
    }

    func walk(_ dir: String, depth: Int, maxDepth: Int, extensions: Set<String>, excluded: [String],
              into result: inout [String: Stamp]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names.sorted() where !name.hasPrefix(".") {
            if result.count >= Watcher.maxFiles { return }
            let path = dir == "/" ? "/" + name : dir + "/" + name
            if excluded.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) { continue }
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let kind = st.st_mode & S_IFMT
            if kind == S_IFDIR {
                if depth < maxDepth {
                    walk(path, depth: depth + 1, maxDepth: maxDepth, extensions: extensions, excluded: excluded, into: &result)
                }
            } else if kind == S_IFREG || kind == S_IFLNK {
                let ext = (name as NSString).pathExtension.lowercased()
                if extensions.contains(ext), let s = Watcher.stamp(path) { result[path] = s }
            }
        }
    }

    static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Stamp(seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec),
                     size: Int64(st.st_size), inode: UInt64(st.st_ino))
    }

    /// The baseline after a render: `after`, except that scripts and traces
    /// keep their state from `before` (a render never writes them, so a
    /// difference is an edit made while it ran and must trigger a render).
    func merge(before: [String: Stamp], after: [String: Stamp]) -> [String: Stamp] {
        var result = after
        for path in Set(before.keys).union(after.keys) {
            let ext = (path as NSString).pathExtension.lowercased()
            guard ext == "lua" || ext == "csv" || path == sceneKey else { continue }
            result[path] = before[path]
        }
        return result
    }

    /// `scene.lua changed`, `a.csv and 2 more changed`, `x.png removed`.
    func describeChanges(from old: [String: Stamp], to new: [String: Stamp]) -> String {
        let changed = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
        guard let first = changed.first else { return "changed" }
        let name = (first as NSString).lastPathComponent
        let verb = new[first] == nil ? "removed" : old[first] == nil ? "added" : "changed"
        return changed.count == 1 ? "\(name) \(verb)" : "\(name) and \(changed.count - 1) more changed"
    }
}
