import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Temporary files and folders this process created and has not yet moved
/// into place or removed. A signal handler (or `main` on a fatal error)
/// removes them all, so no run leaves temporary files behind.
/// Each is held as (folder descriptor, name): it is found even if its
/// folder was renamed meanwhile.
public enum TemporaryPaths {
    /// A registered temporary entry.
    public struct Token: Hashable, Sendable { let id: Int }
    private struct Entry { var dir: Int32; var name: String }
    private static let entries = Mutex<(next: Int, map: [Int: Entry])>((0, [:]))

    /// Registers `name` in the folder `dir` (the descriptor is duplicated).
    public static func add(dir: Int32, name: String) -> Token {
        let copy = fcntl(dir, F_DUPFD_CLOEXEC, 0)
        return entries.withLock { e in
            e.next += 1
            e.map[e.next] = Entry(dir: copy, name: name)
            return Token(id: e.next)
        }
    }

    /// Forgets an entry (it was renamed into place or removed).
    public static func remove(_ token: Token) {
        let entry = entries.withLock { $0.map.removeValue(forKey: token.id) }
        if let entry, entry.dir >= 0 { close(entry.dir) }
    }

    /// Removes every registered entry from disk (recursively) and forgets them.
    public static func removeAll() {
        let all = entries.withLock { e in
            defer { e.map.removeAll() }
            return Array(e.map.values)
        }
        for entry in all where entry.dir >= 0 {
            Posix.removeTree(entry.dir, entry.name)
            close(entry.dir)
        }
    }
}

/// While an output is being moved into place (renames that must not be cut
/// in the middle: a folder's frames), a signal handler that wants to exit
/// waits for it (`waitUntilClosed`) before it removes temporary files.
public enum CommitWindow {
    private static let open = Atomic<Int>(0)
    private static let refusing = Atomic<Bool>(false)

    /// From now on, once a stopping signal has arrived (`Signals.received`),
    /// no output is moved into place: the command line's runs, whose last
    /// step before the move (a big frame's encode) polls nothing, so a
    /// Ctrl-C there wrote the file and exited 0.
    public static func refuseAfterStoppingSignal() {
        refusing.store(true, ordering: .sequentiallyConsistent)
    }

    /// Runs `body` with the window open; throws instead, running nothing,
    /// when it refuses (`refuseAfterStoppingSignal`).
    public static func run<T>(_ body: () throws -> T) throws -> T {
        open.add(1, ordering: .sequentiallyConsistent)
        defer { open.subtract(1, ordering: .sequentiallyConsistent) }
        if refusing.load(ordering: .sequentiallyConsistent), let s = Signals.received {
            throw MediaError("stopped by signal \(s) before the output was moved into place")
        }
        return try body()
    }

    /// Waits until no commit runs, at most `timeout` seconds.
    public static func waitUntilClosed(timeout: Double) {
        var left = Int(timeout * 100)
        while open.load(ordering: .sequentiallyConsistent) > 0 && left > 0 {
            usleep(10_000)
            left -= 1
        }
    }
}

/// Names of temporary files: short (they fit NAME_MAX whatever the target's
/// name), hidden, and saying which process owns them, so that a later run
/// can remove what a killed one left (`removeLeftovers`) and never touch a
/// live run's files:
/// `.wobble-tmp-<machine>-<pid>-<start>-<n>`, where `<machine>` is a hash
/// of the boot id and the PID namespace (a file of another machine or
/// container sharing the folder is never judged by our PIDs) and `<start>`
/// the process's start time (a reused PID is told apart).
public enum TemporaryName {
    static let prefix = ".wobble-tmp-"
    private static let counter = Atomic<Int>(0)

    /// This machine and PID namespace, as 8 hex digits.
    static let machine: String = {
        var h: UInt32 = 0x811C_9DC5
        let boot = (try? readSmallFile("/proc/sys/kernel/random/boot_id")) ?? []
        let ns = PathBytes.bytes((try? Posix.readlink("/proc/self/ns/pid")) ?? "")
        for b in boot + [0] + ns { h = (h ^ UInt32(b)) &* 0x0100_0193 }
        return String(h, radix: 16)
    }()

    /// The start time of process `pid` (clock ticks after boot), or nil
    /// when there is no such process, or it has ended: a process killed
    /// (SIGKILL) whose parent has not yet collected it is a zombie (state
    /// `Z`, or `X` while it goes) whose `/proc` entry stays, but it writes
    /// nothing any more, so its temporary files and folders are leftovers.
    static func startTime(_ pid: Int32) -> UInt64? {
        guard let bytes = try? readSmallFile("/proc/\(pid)/stat"),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // Fields after "(comm)": state is field 3, starttime field 22.
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        if let state = fields.first?.first, state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    static let ownStart: String = String(startTime(getpid()) ?? 0, radix: 16)

    /// A fresh name for this process.
    public static func make() -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        return "\(prefix)\(machine)-\(getpid())-\(ownStart)-\(n)"
    }

    /// Whether `name` is a temporary file of a process of this machine
    /// that no longer runs (so it can be removed).
    public static func isLeftover(_ name: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == machine, let pid = Int32(parts[1]), pid > 0,
              let start = UInt64(parts[2], radix: 16), UInt64(parts[3]) != nil else { return false }
        if pid == getpid() { return false }
        guard let running = startTime(pid) else {
            // No such process, or a zombie (`startTime`); a /proc that
            // cannot be read: only a PID that is gone.
            return isZombie(pid) || (kill(pid, 0) != 0 && errno == ESRCH)
        }
        return running != start
    }

    /// Whether process `pid` has ended but was not yet collected by its parent.
    static func isZombie(_ pid: Int32) -> Bool {
        guard let bytes = try? readSmallFile("/proc/\(pid)/stat"),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")),
              let state = bytes[(close + 1)...].split(separator: UInt8(ascii: " ")).first?.first else { return false }
        return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X")
    }

    /// Removes the leftovers of dead processes in the folder `dir`.
    public static func removeLeftovers(in dir: Int32, shown: String) {
        guard let names = try? Posix.list(dir, shown: shown) else { return }
        for name in names where isLeftover(name) {
            // A folder commit cut short by the kill is undone first; a
            // journal this tool did not write is never acted on, and its
            // folder is left as it is.
            if let why = CommitJournal.recover(home: dir, temporaryName: name) {
                printError("wobble-run: warning: '\(shown.isEmpty || shown == "." ? "" : shown.hasSuffix("/") ? shown : shown + "/")\(name)/\(CommitJournal.name)' was left alone: it is not a commit journal wobble-run wrote (\(why)); remove the folder if nothing of yours is in it")
                continue
            }
            Posix.removeTree(dir, name)
        }
    }

    private static func readSmallFile(_ path: String) throws -> [UInt8] {
        try Posix.readFile(path).filter { $0 != UInt8(ascii: "\n") }
    }
}

/// Where an output path leads, decided once before anything is written
/// (the policy of `-o`):
///
/// - `-`, a pipe, a terminal or a character device (`/dev/null`), also
///   through links (`/dev/stdout`): written in place, never replaced.
/// - a regular file, or a link that resolves to one: a temporary file
///   beside the file is renamed over it; a link stays a link.
/// - nothing yet: created in its (existing) folder.
/// - refused with a clear error: a folder, a block device, a link that
///   does not resolve (dangling or a loop), a write-protected file, and
///   standard output when it was closed when the tool started.
///
/// That policy is for a path the user named (`-o`, or the script's
/// `output()`, which the path policy resolved inside the scene's folder).
/// A name this program made up itself (`OutputName.madeUp`, `.fresh`: a
/// sound slice beside frames, a mask, a take, an export's
/// `<scene>-telegram.webm`, a still, `<scene>.unsaved.lua`, a scratch
/// file) is never followed: see `OutputName`.
public enum OutputTarget: Equatable {
    /// Written in place through this descriptor.
    case stream(fd: Int32)
    /// Replaced atomically: the file `name` in the folder `folder`.
    case file(folder: String, name: String)

    /// Decides where `path` leads. `what` starts messages (`output 'x'`).
    /// `name` says who chose the path (`OutputName`).
    public static func resolve(_ path: String, what: String, name: OutputName = .given) throws -> OutputTarget {
        func refuse(_ why: String) -> MediaError { MediaError("\(what): \(why)") }
        if name != .given { return try madeUp(path, what: what, fresh: name == .fresh) }
        if path == "-" { return .stream(fd: try openStdout(what)) }
        guard let lst = try Posix.linkStatus(path) else { return try newFile(path, what: what) }
        var place = path
        var kind = FileKind(lst)
        var st = lst
        if kind == .link {
            func unresolved(_ code: Int32) -> MediaError {
                let why = code == ELOOP ? "links in a loop" : code == ENOENT || code == ENOTDIR ? "dangling" : String(cString: strerror(code))
                return refuse("a symbolic link that does not resolve (\(why)); not replaced")
            }
            // The kernel follows the link (also /proc's links to pipes,
            // which realpath cannot spell).
            let target: Glibc.stat
            do {
                guard let t = try Posix.fileStatus(path) else { throw unresolved(ENOENT) }
                target = t
            } catch let e as PosixError {
                throw unresolved(e.code)
            }
            st = target
            kind = FileKind(target)
            if kind == .regular {
                do { place = try Posix.realpath(path) } catch let e as PosixError { throw unresolved(e.code) }
            }
        }
        switch kind {
        case .regular:
            if st.st_mode & 0o222 == 0 {
                throw refuse("the file is write-protected (mode \(String(st.st_mode & 0o7777, radix: 8))); not replaced")
            }
            return try newFile(place, what: what)
        case .directory:
            throw refuse("is a folder, not a file")
        case .blockDevice:
            throw refuse("is a block device; not written")
        case .fifo, .characterDevice, .socket:
            if Posix.stdoutWasClosed && namesStdout(path) { throw refuse("standard output is closed") }
            return .stream(fd: try Posix.open(path, O_WRONLY, shown: path))
        case .link, .other:
            throw refuse("not a file, folder, pipe or device; not replaced")
        }
    }

    /// A name this program chose (`OutputName`): the last component is
    /// looked at, never followed. Nothing there, a regular file (not
    /// write-protected) or a symbolic link of any kind (to a file, a
    /// folder, a device, dangling, a loop): the new file is renamed over
    /// the name, so a link is replaced and what it points to is never
    /// opened. Refused with one line, never opened (no write into a
    /// device, no wait on a pipe nobody reads): a folder, a FIFO, a socket,
    /// a device. `fresh`: anything at all there is refused.
    private static func madeUp(_ path: String, what: String, fresh: Bool) throws -> OutputTarget {
        func refuse(_ why: String) -> MediaError { MediaError("\(what): \(why)") }
        guard let st = try Posix.linkStatus(path) else { return try newFile(path, what: what) }
        let kind = FileKind(st)
        if fresh { throw refuse("already exists; not replaced") }
        switch kind {
        case .regular:
            if st.st_mode & 0o222 == 0 {
                throw refuse("the file is write-protected (mode \(String(st.st_mode & 0o7777, radix: 8))); not replaced")
            }
            return try newFile(path, what: what)
        case .link:
            return try newFile(path, what: what)
        case .directory, .fifo, .socket, .characterDevice, .blockDevice, .other:
            throw refuse(OutputName.notAFile(kind))
        }
    }

    /// Whether `path` is, or links (through any chain) to, descriptor 1:
    /// `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, …
    public static func namesStdout(_ path: String) -> Bool {
        let names: Set<String> = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/thread-self/fd/1", "/proc/\(getpid())/fd/1"]
        var p = path
        for _ in 0..<40 {
            if names.contains(p) { return true }
            guard Posix.kind(p, follow: false) == .link, let text = try? Posix.readlink(p) else { return false }
            p = text.hasPrefix("/") ? text : split(p).0 + "/" + text
        }
        return false
    }

    private static func openStdout(_ what: String) throws -> Int32 {
        if Posix.stdoutWasClosed { throw MediaError("\(what): standard output is closed") }
        do {
            return try Posix.call("dup", "stdout") { fcntl(1, F_DUPFD_CLOEXEC, 0) }
        } catch {
            throw MediaError("\(what): standard output is closed")
        }
    }

    /// A file (new or to be replaced) at `path`, whose folder must exist.
    private static func newFile(_ path: String, what: String) throws -> OutputTarget {
        let (folder, name) = split(path)
        guard !name.isEmpty, name != ".", name != ".." else { throw MediaError("\(what): not a file name") }
        guard Posix.kind(folder) == .directory else {
            throw MediaError("\(what): folder '\(folder)' does not exist")
        }
        return .file(folder: folder, name: name)
    }

    /// `a/b/c` → (`a/b`, `c`); `c` → (`.`, `c`); `/c` → (`/`, `c`).
    static func split(_ path: String) -> (String, String) {
        var p = path
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        guard let slash = p.lastIndex(of: "/") else { return (".", p) }
        let folder = String(p[..<slash])
        return (folder.isEmpty ? "/" : folder, String(p[p.index(after: slash)...]))
    }
}

/// Who chose an output path, which decides how a link there is treated.
public enum OutputName: Equatable, Sendable {
    /// Why a name wobble-run chose is not written when something other
    /// than a file (or a link) is there: one message for a folder, a FIFO,
    /// a socket, a device.
    public static func notAFile(_ kind: FileKind) -> String {
        "is \(kind.described), not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)"
    }

    /// The user named it (`-o`, the script's `output()` checked by the
    /// path policy): `OutputTarget`'s policy (a link to a file is followed
    /// and that file replaced; a pipe or device is written in place).
    case given
    /// This program made the name up (a sound slice, a default
    /// `<scene>.gif`, an export, a mask, a scratch file): a link there is
    /// replaced by the file, never followed; a FIFO, device, socket or
    /// folder there is refused, never opened.
    case madeUp
    /// As `madeUp`, and the name must be free (a still, a take, a mask
    /// beside another, `.unsaved.lua`, `new`'s scene): nothing is ever
    /// replaced, also when something appears there during the write (the
    /// rename does not replace).
    case fresh
}

/// A file written beside its target under a temporary name and renamed over
/// the target only by `commit()` (the one commit protocol: write beside,
/// verify, fsync, set the usual permissions, check the folder is still the
/// one we started in, rename, fsync the folder): an existing target stays
/// intact until the new one is complete, and every step is checked. The
/// final file gets the usual permissions (0666 & ~umask), not a temporary
/// file's. A pipe or device is written in place (`OutputTarget`).
public final class AtomicFile: ByteStream {
    /// The output as the user named it (messages name it).
    public let target: String
    /// True when the target is a pipe, terminal or device, written in place.
    public let isDirect: Bool
    private var fd: Int32
    private var folderFD: Int32 = -1
    private var folderID: (dev: UInt64, ino: UInt64) = (0, 0)
    private let folder: String
    private let name: String
    private let temporaryName: String
    private var token: TemporaryPaths.Token?
    private var done = false
    /// The rename must not replace anything (`OutputName.fresh`).
    private let noReplace: Bool
    /// Bytes that went through `write` (a pipe's whole output).
    private var written = 0
    /// The size of the output after a successful `commit()`: the file's
    /// size (whoever wrote it through `fileDescriptor`), or for a pipe or
    /// device what went through `write` plus `countDirect`.
    public private(set) var committedSize: Int?

    /// Prepares the output: opens a pipe or device, or creates the
    /// temporary file beside the target (after removing what killed runs
    /// left there). Throws `MediaError` for a refused target, `PosixError`
    /// when the system says no.
    public convenience init(target: String, name chosen: OutputName = .given, what: String? = nil) throws {
        switch try OutputTarget.resolve(target, what: what ?? "output '\(target)'", name: chosen) {
        case .stream(let fd):
            self.init(target: target, direct: fd)
        case .file(let folder, let name):
            try self.init(target: target, folder: folder, name: name, noReplace: chosen == .fresh)
        }
    }

    /// The file `name` in `folder` (as `OutputTarget.resolve` found them
    /// for `target`): creates the temporary file beside it. `noReplace`:
    /// the rename never replaces what is there (`OutputName.fresh`).
    public init(target: String, folder: String, name: String, noReplace: Bool = false) throws {
        self.target = target
        self.noReplace = noReplace
        isDirect = false
        self.folder = folder
        self.name = name
        temporaryName = TemporaryName.make()
        let dir = try Posix.open(folder, O_RDONLY | O_DIRECTORY, shown: folder)
        folderFD = dir
        let st = try Posix.fstat(dir, shown: folder)
        folderID = (UInt64(st.st_dev), UInt64(st.st_ino))
        TemporaryName.removeLeftovers(in: dir, shown: folder)
        do {
            fd = try Posix.openat(dir, temporaryName, O_RDWR | O_CREAT | O_EXCL, 0o600, shown: target)
        } catch {
            close(dir)
            folderFD = -1
            throw error
        }
        token = TemporaryPaths.add(dir: dir, name: temporaryName)
    }

    private init(target: String, direct fd: Int32) {
        self.target = target
        noReplace = false
        self.fd = fd
        isDirect = true
        folder = ""
        name = ""
        temporaryName = ""
    }

    deinit {
        if !done { abort() }
        if folderFD >= 0 { close(folderFD) }
    }

    /// Writes `bytes` as the whole new content of `path` by the commit
    /// protocol above (`beforeRename` as in `commit`): the one way a file is
    /// written in one piece (PNG files, takes, saved scenes, presets).
    ///
    /// `name` says who chose `path` (`OutputName`): every file this
    /// program names itself is written with `.madeUp` or `.fresh`, so a
    /// link planted under that name is replaced, never written through.
    public static func write(_ bytes: [UInt8], to path: String, name: OutputName = .given, what: String? = nil,
                             beforeRename: (() throws -> Void)? = nil) throws {
        let file = try AtomicFile(target: path, name: name, what: what)
        do {
            try file.write(bytes)
            try file.commit(beforeRename: beforeRename)
        } catch {
            file.abort()
            throw error
        }
    }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try Posix.write(fd, bytes, shown: target)
        written += bytes.count
    }

    /// Counts bytes another writer put straight into a pipe or device
    /// target through `fileDescriptor`.
    public func countDirect(_ n: Int) { written += n }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// The output as the user named it (`ByteStream`).
    public var shown: String { target }

    /// The temporary file, which a writer that seeks (ffmpeg) may fill
    /// itself; nil for a pipe or device.
    public var seekableDescriptor: Int32? { isDirect || done ? nil : fd }

    /// `commit(verify:beforeRename:)` with neither (`ByteStream`).
    public func commit() throws { try commit(verify: nil, beforeRename: nil) }

    /// The open file descriptor (the temporary file, or the pipe/device),
    /// for readers that check what was written. The caller must not close it.
    public var fileDescriptor: Int32 { fd }

    /// Checks the file is complete (`verify` reads it through the
    /// descriptor), flushes it to the disk, sets the usual permissions and
    /// renames it over the target. `beforeRename` runs last, just before
    /// the rename (a save re-reads its target there: did another program
    /// change it meanwhile?). On failure the temporary file is removed and
    /// the target is untouched.
    public func commit(verify: ((Int32) throws -> Void)? = nil, beforeRename: (() throws -> Void)? = nil) throws {
        guard !done else { return }
        do {
            if isDirect {
                done = true
                let fd = self.fd
                self.fd = -1
                try Posix.close(fd, shown: target)
                committedSize = written
                return
            }
            try verify?(fd)
            try Posix.fsync(fd, shown: target)
            let size = Int(try Posix.fstat(fd, shown: target).st_size)
            try Posix.fchmod(fd, 0o666 & ~Posix.umask, shown: target)
            let fd = self.fd
            self.fd = -1
            try Posix.close(fd, shown: target)
            // The folder must still be where it was: a folder moved or
            // removed during the render does not get the output.
            guard let now = try Posix.fileStatus(folder), UInt64(now.st_dev) == folderID.dev, UInt64(now.st_ino) == folderID.ino else {
                throw MediaError("output '\(target)': the folder '\(folder)' was moved or removed during the render")
            }
            try beforeRename?()
            try CommitWindow.run {
                do {
                    try Posix.rename(folderFD, temporaryName, folderFD, name, flags: noReplace ? Posix.renameNoReplace : 0, shown: target)
                } catch let e as PosixError where e.code == EEXIST && noReplace {
                    throw MediaError("output '\(target)': appeared meanwhile; not replaced")
                }
                done = true
            }
            if let token { TemporaryPaths.remove(token) }
            token = nil
            committedSize = size
            // The rename itself on the disk; folders on some file systems
            // cannot be synced (EINVAL), which is not an error.
            do { try Posix.fsync(folderFD, shown: folder) } catch let e as PosixError where e.code == EINVAL || e.code == EROFS {}
        } catch {
            abort()
            throw error
        }
    }

    /// Closes and removes the temporary file; the target is untouched.
    public func abort() {
        guard !done else { return }
        done = true
        if fd >= 0 { close(fd); fd = -1 }
        if isDirect { return }
        try? Posix.unlink(folderFD, temporaryName, shown: target)
        if let token { TemporaryPaths.remove(token) }
        token = nil
    }
}
