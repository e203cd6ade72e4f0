import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file: modification time, size, inode
/// (editors that save by renaming change the inode).
public struct FileStamp: Hashable, Sendable {
    public var seconds: Int
    public var nanoseconds: Int
    public var size: Int64
    public var inode: UInt64

    /// The stamp of the regular file at `path` (its exact bytes, see
    /// `PathBytes`), nil when there is none.
    public init?(_ path: String) {
        var st = stat()
        guard PathBytes.withCString(path, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        seconds = Int(st.st_mtim.tv_sec)
        nanoseconds = Int(st.st_mtim.tv_nsec)
        size = Int64(st.st_size)
        inode = UInt64(st.st_ino)
    }
}

/// Watches a scene's inputs: the scene, every `.lua`, `.csv`, `.png`,
/// `.jpg`, `.jpeg` file under its folder (hidden entries skipped, at most 4
/// folders deep, 5000 files), and the extra paths the session names (the
/// image and traces wherever they are).
///
/// Where the system has inotify, the folders are watched (the scene's tree
/// and the folders of the extra paths): `poll` is one non-blocking read when
/// nothing happened, and a change is reported once the events about inputs
/// have been quiet for `quiet` seconds, no input is still open for writing
/// (a write in place or a copy is finished: closed, or renamed over), and
/// the stamps of the touched files differ from the baseline. A lost event
/// (the queue overflowed) or a folder created, removed or moved makes the
/// next report compare a full scan. Where inotify is missing, or runs out of
/// watches, or `WOBBLE_WATCH=poll` is set, the inputs are polled: a change
/// is reported once the files have stopped changing for one poll (two equal
/// scans in a row).
public final class InputWatch {
    public static let maxDepth = 4
    public static let maxFiles = 5000
    /// Events must have been quiet this long before a change is reported.
    public static let quiet = 0.02
    /// An input opened for writing and never closed (a link, a writer that
    /// keeps it open) counts as finished after this long without events.
    public static let openLimit = 1.0

    /// What is watched besides the scene and the extra paths: with `true`
    /// (the default, `--watch`) every input file of the scene's folder
    /// tree; with `false` (the studio) nothing else: only what the scene
    /// read (its image, traces, modules, named by the run), so that a
    /// render or a screenshot saved beside it changes nothing.
    public let watchesTree: Bool

    /// How the inputs are watched.
    public enum Mode: Sendable, Equatable {
        /// inotify where it works, else polling (`WOBBLE_WATCH=poll` forces polling).
        case automatic
        /// Stat every input on each poll.
        case polling
    }

    public let scenePath: String
    /// File names (in the scene's folder tree) that are not inputs: the
    /// takes the studio writes itself.
    public var ignore: (String) -> Bool = { _ in false }
    /// Verbose: the one line saying why the watch fell back to polling.
    public var log: ((String) -> Void)?
    private var baseline: [String: FileStamp] = [:]
    private var pending: [String: FileStamp]?
    private let folder: String
    private var events: Events?

    /// Full scans of the inputs so far (for tests: event-driven, a poll
    /// when nothing happened does none).
    private(set) var scans = 0
    /// The folders watched (for tests: a reset leaks none).
    var watchCount: Int { events?.count ?? 0 }

    /// For tests: the watches inotify grants before `ENOSPC`.
    var watchLimit: Int? {
        get { events?.limit }
        set { events?.limit = newValue }
    }

    /// Whether the watch is event-driven (inotify) rather than polling.
    public var isEventDriven: Bool { events != nil }

    /// How often the caller should call `poll`: often when event-driven (a
    /// poll is one non-blocking read), every 50 ms when polling (a poll
    /// walks the folder tree).
    public var pollInterval: Double { events != nil ? 0.01 : 0.05 }

    public init(scenePath: String, mode: Mode = .automatic, tree: Bool = true) {
        watchesTree = tree
        self.scenePath = InputWatch.absolute(scenePath)
        let f = (self.scenePath as NSString).deletingLastPathComponent
        folder = f.isEmpty ? "/" : f
        if mode == .automatic, ProcessInfo.processInfo.environment["WOBBLE_WATCH"] != "poll" {
            events = Events()
        }
    }

    deinit {
        events?.close()
    }

    /// `path` absolute and normalised, its bytes kept (`ScenePaths.absolute`).
    public static func absolute(_ path: String) -> String {
        ScenePaths.absolute(path)
    }

    /// Takes the current state of the inputs as the baseline.
    public func reset(extra: [String]) {
        let extra = withScene(extra)
        pending = nil
        guard let ev = events else {
            baseline = scan(extra: extra)
            return
        }
        ev.clear()
        ev.extras = Set(extra.map(InputWatch.absolute))
        // Each folder is watched before it is listed: what changes from then
        // on is compared with this baseline at the next report.
        for p in ev.extras { watchExtraFolder(ev, p) }
        baseline = scan(extra: extra, events: ev)
        if ev.exhausted { fallBack(InputWatch.noWatches) }
    }

    /// Takes the current state of the inputs as the baseline, like `reset`,
    /// except for the inputs `keep` selects: they keep their stamps from the
    /// old baseline, so an edit to one of them made meanwhile (while a
    /// render that writes files beside them ran) is reported by the next
    /// poll, while the files the render wrote are not.
    public func reset(extra: [String], keeping keep: (String) -> Bool) {
        let before = baseline
        reset(extra: extra)
        var edited: [String] = []
        for p in Set(before.keys).union(baseline.keys) where keep(p) && before[p] != baseline[p] {
            baseline[p] = before[p]
            edited.append(p)
        }
        // Polling compares every scan with the baseline; inotify only the
        // files touched since: mark these touched.
        guard !edited.isEmpty, let ev = events else { return }
        for p in edited { ev.touch(p, writing: false) }
        ev.lastEvent = 0
    }

    /// The number of inputs in the baseline.
    public var inputCount: Int { baseline.count }

    /// Polls once. Returns the changed file names (short, for a message)
    /// once a change has settled, else nil. The new state becomes the
    /// baseline.
    public func poll(extra: [String]) -> [String]? {
        let extra = withScene(extra)
        guard let ev = events else { return pollByScanning(extra: extra) }
        let extras = Set(extra.map(InputWatch.absolute))
        if extras != ev.extras {
            // Inputs named or no longer named are compared like any other
            // change (as a scan would see them).
            for p in extras.symmetricDifference(ev.extras) { ev.touch(p, writing: false) }
            ev.extras = extras
            ev.lastEvent = 0
            ev.unwatchFolders(except: Set(extras.map(InputWatch.folder(of:))))
            for p in extras { watchExtraFolder(ev, p) }
            if events == nil { return pollByScanning(extra: extra) }
        }
        ev.retryMissing()
        ev.drain { [unowned self] dir, name, mask in self.handle(ev, dir, name, mask) }
        if ev.exhausted { fallBack(InputWatch.noWatches); return pollByScanning(extra: extra) }
        guard ev.dirty else { return nil }
        let now = monotonic()
        if now - ev.lastEvent < InputWatch.quiet { return nil }
        if ev.writing.contains(where: { now - $0.value < InputWatch.openLimit }) { return nil }
        ev.writing.removeAll()
        var state: [String: FileStamp]
        if ev.rescan {
            ev.clearTreeWatches()
            ev.clearTouched()
            state = scan(extra: extra, events: ev)
            for p in extras { watchExtraFolder(ev, p) }
            // Out of watches: polling from the next call; this change is still reported.
            if ev.exhausted { fallBack(InputWatch.noWatches) }
        } else {
            state = baseline
            for p in ev.touched {
                if isInput(p, extras: extras), let s = FileStamp(p) {
                    if state[p] == nil, state.count >= InputWatch.maxFiles { continue }
                    state[p] = s
                } else {
                    state[p] = nil
                }
            }
        }
        ev.clearTouched()
        let changed = Set(baseline.keys).union(state.keys).filter { baseline[$0] != state[$0] }.sorted()
        baseline = state
        return changed.isEmpty ? nil : changed.map { ($0 as NSString).lastPathComponent }
    }

    private func pollByScanning(extra: [String]) -> [String]? {
        let now = scan(extra: extra)
        if let p = pending {
            if p == now {
                pending = nil
                let changed = Set(baseline.keys).union(now.keys).filter { baseline[$0] != now[$0] }.sorted()
                baseline = now
                return changed.isEmpty ? nil : changed.map { ($0 as NSString).lastPathComponent }
            }
            pending = now
            return nil
        }
        if now != baseline { pending = now }
        return nil
    }

    /// Without the tree, the scene is watched as an extra path (its
    /// folder alone, not walked).
    private func withScene(_ extra: [String]) -> [String] {
        watchesTree || extra.contains(scenePath) ? extra : extra + [scenePath]
    }

    // MARK: inotify

    static func folder(of path: String) -> String {
        let d = (path as NSString).deletingLastPathComponent
        return d.isEmpty ? "/" : d
    }

    private func watchExtraFolder(_ ev: Events, _ path: String) {
        ev.add(InputWatch.folder(of: path), depth: nil)
        if ev.exhausted { fallBack(InputWatch.noWatches) }
    }

    static let noWatches = "inotify ran out of watches (fs.inotify.max_user_watches)"

    private func fallBack(_ why: String) {
        guard let ev = events else { return }
        ev.close()
        events = nil
        pending = nil
        log?("studio: \(why); polling the inputs every 50 ms")
    }

    private func handle(_ ev: Events, _ dir: Events.Folder?, _ name: String?, _ mask: UInt32) {
        if mask & Events.overflow != 0 { ev.rescan = true; ev.lastEvent = monotonic(); return }
        guard let dir else { return }
        if mask & (Events.deleteSelf | Events.moveSelf | Events.ignored) != 0 {
            if mask & Events.ignored != 0 {
                ev.forget(dir.wd)
                if dir.depth == nil { ev.watchLater(dir.path) }
            }
            if dir.depth != nil { ev.rescan = true; ev.lastEvent = monotonic() }
            return
        }
        guard let name else { return }
        let path = dir.path == "/" ? "/" + name : dir.path + "/" + name
        if mask & Events.isDir != 0 {
            // A folder in the tree created, removed or moved: its files
            // come and go with it.
            if let depth = dir.depth, depth < InputWatch.maxDepth, !name.hasPrefix("."), !ignore(name) {
                if mask & (Events.create | Events.movedTo) != 0 { ev.add(path, depth: depth + 1, recursive: { [unowned self] in self.subfolders($0) }) }
                ev.rescan = true
                ev.lastEvent = monotonic()
            }
            return
        }
        let relevant = path == scenePath || ev.extras.contains(path)
            || (dir.depth != nil && isTreeName(name))
        guard relevant else { return }
        ev.lastEvent = monotonic()
        if mask & (Events.modify | Events.create) != 0 {
            ev.touch(path, writing: true)
        } else {
            ev.touch(path, writing: false)
            if mask & (Events.closeWrite | Events.delete | Events.movedFrom | Events.movedTo) != 0 { ev.writing[path] = nil }
        }
    }

    private func isTreeName(_ name: String) -> Bool {
        !name.hasPrefix(".") && !ignore(name)
            && InputWatch.extensions.contains((name as NSString).pathExtension.lowercased())
    }

    /// Whether `path` is an input: the scene, an extra path, or a file with
    /// an input's extension in the tree (not hidden, not ignored).
    private func isInput(_ path: String, extras: Set<String>) -> Bool {
        if path == scenePath || extras.contains(path) { return true }
        guard path.hasPrefix(folder == "/" ? "/" : folder + "/") else { return false }
        let rest = path.dropFirst(folder == "/" ? 1 : folder.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count <= InputWatch.maxDepth + 1 else { return false }
        for c in rest.dropLast() where c.hasPrefix(".") || ignore(String(c)) { return false }
        return isTreeName(String(rest.last ?? ""))
    }

    /// The folders under `dir` the walk would enter (for a new subfolder).
    private func subfolders(_ dir: String) -> [String] {
        InputWatch.list(dir).compactMap { name in
            guard !name.hasPrefix("."), !ignore(name) else { return nil }
            let path = dir == "/" ? "/" + name : dir + "/" + name
            return InputWatch.kind(path) == S_IFDIR ? path : nil
        }
    }

    // MARK: Scanning

    static let extensions: Set<String> = ["lua", "csv", "png", "jpg", "jpeg"]

    /// The stamps of every input; with `events`, each folder of the tree is
    /// watched before it is listed.
    func scan(extra: [String]) -> [String: FileStamp] {
        scan(extra: extra, events: nil)
    }

    private func scan(extra: [String], events ev: Events?) -> [String: FileStamp] {
        scans += 1
        var result: [String: FileStamp] = [:]
        if let s = FileStamp(scenePath) { result[scenePath] = s }
        if watchesTree { walk(folder, depth: 0, into: &result, events: ev) }
        for e in extra {
            let p = InputWatch.absolute(e)
            if let s = FileStamp(p) { result[p] = s }
        }
        return result
    }

    private func walk(_ dir: String, depth: Int, into result: inout [String: FileStamp], events ev: Events?) {
        ev?.add(dir, depth: depth)
        let names = InputWatch.list(dir)
        for name in names.sorted() where !name.hasPrefix(".") {
            if result.count >= InputWatch.maxFiles { return }
            if ignore(name) { continue }
            let path = dir == "/" ? "/" + name : dir + "/" + name
            let kind = InputWatch.kind(path)
            if kind == S_IFDIR {
                if depth < InputWatch.maxDepth { walk(path, depth: depth + 1, into: &result, events: ev) }
            } else if kind == S_IFREG || kind == S_IFLNK {
                let ext = (name as NSString).pathExtension.lowercased()
                if InputWatch.extensions.contains(ext), let s = FileStamp(path) { result[path] = s }
            }
        }
    }

    /// `lstat`'s file type of `path` (its exact bytes), nil when none.
    static func kind(_ path: String) -> mode_t? {
        var st = stat()
        guard PathBytes.withCString(path, { lstat($0, &st) }) == 0 else { return nil }
        return st.st_mode & S_IFMT
    }

    /// The names in the folder `dir`, as `PathBytes` strings (names that
    /// are not UTF-8 survive); empty when it cannot be read.
    static func list(_ dir: String) -> [String] {
        guard let d = PathBytes.withCString(dir, { opendir($0) }) ?? nil else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { p in
                p.withMemoryRebound(to: UInt8.self, capacity: 256) {
                    PathBytes.string(UnsafeBufferPointer(start: $0, count: strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))))
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// The inotify descriptor, its watches and what the events since the last
/// report touched.
private final class Events {
    static let modify: UInt32 = 0x2, attrib: UInt32 = 0x4, closeWrite: UInt32 = 0x8
    static let movedFrom: UInt32 = 0x40, movedTo: UInt32 = 0x80, create: UInt32 = 0x100
    static let delete: UInt32 = 0x200, deleteSelf: UInt32 = 0x400, moveSelf: UInt32 = 0x800
    static let overflow: UInt32 = 0x4000, ignored: UInt32 = 0x8000
    static let onlyDir: UInt32 = 0x0100_0000, isDir: UInt32 = 0x4000_0000
    static let mask = modify | attrib | closeWrite | movedFrom | movedTo | create | delete | deleteSelf | moveSelf | onlyDir

    struct Folder {
        var wd: Int32
        var path: String
        /// Depth in the scene's tree; nil for a folder of extra paths only.
        var depth: Int?
    }

    private(set) var fd: Int32
    private var byWd: [Int32: Folder] = [:]
    private var byPath: [String: Int32] = [:]
    /// Extra paths whose folder could not be watched (yet).
    private var missing: Set<String> = []
    private var nextRetry = 0.0
    var extras: Set<String> = []
    var touched: Set<String> = []
    /// Inputs opened for writing and not closed yet, with their last event.
    var writing: [String: Double] = [:]
    var rescan = false
    var lastEvent = 0.0
    var exhausted = false
    var limit: Int?
    var dirty: Bool { rescan || !touched.isEmpty }
    private var buffer = [UInt8](repeating: 0, count: 65536)

    init?() {
        fd = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
        if fd < 0 { return nil }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        byWd.removeAll()
        byPath.removeAll()
    }

    /// Removes every watch and forgets what was touched.
    func clear() {
        for wd in byWd.keys { inotify_rm_watch(fd, wd) }
        byWd.removeAll()
        byPath.removeAll()
        missing.removeAll()
        drain()
        clearTouched()
    }

    func clearTreeWatches() {
        for (wd, f) in byWd where f.depth != nil {
            inotify_rm_watch(fd, wd)
            byWd[wd] = nil
            byPath[f.path] = nil
        }
    }

    /// Removes the watches of extra paths' folders (not in the tree) other than `keep`.
    func unwatchFolders(except keep: Set<String>) {
        for (wd, f) in byWd where f.depth == nil && !keep.contains(f.path) {
            inotify_rm_watch(fd, wd)
            byWd[wd] = nil
            byPath[f.path] = nil
        }
        missing = missing.intersection(keep)
    }

    func clearTouched() {
        touched.removeAll()
        writing.removeAll()
        rescan = false
    }

    func touch(_ path: String, writing w: Bool) {
        touched.insert(path)
        if w { writing[path] = monotonic() } else if writing[path] != nil { writing[path] = monotonic() }
    }

    var count: Int { byWd.count }

    func watchLater(_ dir: String) { missing.insert(dir) }

    func forget(_ wd: Int32) {
        if let f = byWd.removeValue(forKey: wd), byPath[f.path] == wd { byPath[f.path] = nil }
    }

    /// Watches `dir` (and, with `recursive`, the folders it lists, down to
    /// the tree's depth).
    func add(_ dir: String, depth: Int?, recursive: ((String) -> [String])? = nil) {
        guard fd >= 0, !exhausted else { return }
        if let wd = byPath[dir] {
            if let depth, byWd[wd]?.depth == nil { byWd[wd]?.depth = depth }
        } else {
            if let limit, byWd.count >= limit { exhausted = true; return }
            let wd = PathBytes.withCString(dir, { inotify_add_watch(fd, $0, Events.mask) }) ?? -1
            if wd < 0 {
                if errno == ENOSPC || errno == ENOMEM { exhausted = true }
                if depth == nil { missing.insert(dir) }
                return
            }
            // Two paths for one folder (a link) share the watch descriptor.
            if let old = byWd[wd] { byPath[old.path] = nil }
            byWd[wd] = Folder(wd: wd, path: dir, depth: depth)
            byPath[dir] = wd
            missing.remove(dir)
        }
        if let recursive, let depth, depth < InputWatch.maxDepth {
            for sub in recursive(dir) { add(sub, depth: depth + 1, recursive: recursive) }
        }
    }

    /// Tries again, now and then, to watch the folders of extra paths that
    /// did not exist; once one does, its extra paths count as touched.
    func retryMissing() {
        guard !missing.isEmpty else { return }
        let now = monotonic()
        guard now >= nextRetry else { return }
        nextRetry = now + 0.1
        for d in missing {
            add(d, depth: nil)
            if byPath[d] != nil {
                for p in extras where InputWatch.folder(of: p) == d { touch(p, writing: false) }
                lastEvent = now
            }
        }
    }

    /// Reads every queued event (non-blocking) and hands each to `body`:
    /// its folder (nil when the watch is gone), its name, its mask.
    func drain(_ body: ((Folder?, String?, UInt32) -> Void)? = nil) {
        guard fd >= 0 else { return }
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            guard let body else { continue }
            var events: [(Folder?, String?, UInt32)] = []
            buffer.withUnsafeBytes { raw in
                var off = 0
                while off + 16 <= n {
                    let wd = raw.loadUnaligned(fromByteOffset: off, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: off + 4, as: UInt32.self)
                    let len = Int(raw.loadUnaligned(fromByteOffset: off + 12, as: UInt32.self))
                    var name: String?
                    if len > 0 {
                        let bytes = raw[(off + 16)..<min(n, off + 16 + len)]
                        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
                        if end > bytes.startIndex { name = PathBytes.string(raw[bytes.startIndex..<end]) }
                    }
                    events.append((byWd[wd], name, mask))
                    off += 16 + len
                }
            }
            for (f, name, mask) in events { body(f, name, mask) }
        }
    }
}
