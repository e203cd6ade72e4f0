#if canImport(Glibc)
import Glibc
#endif

/// The plan of a PNG folder commit (`PNGSequenceSink`), written and
/// flushed into the temporary folder before the first rename, so that a
/// later run can undo a commit that a SIGKILL or a crash cut in the middle
/// (`recover`, called by `TemporaryName.removeLeftovers` for a dead run's
/// temporary folder). Each rename of the commit is atomic, and the new
/// frame files are told apart from the old ones by their inode numbers, so
/// the state after any prefix of the steps can be undone, and undoing is
/// idempotent. A commit that finished removes its journal before it
/// removes the old frames.
///
/// Text, one entry a line, names as hex bytes (any byte may be in a name):
/// `wobble-commit 1`, `T <target>` (the target folder's name beside the
/// temporary folder, empty when the target holds it), then
/// `R <inode> <name> <aside>` (a frame replaced), `A <inode> <name>` (a
/// frame added), `S <name> <aside>` (a stale frame moved aside).
package enum CommitJournal {
    package static let name = ".journal"

    package enum Entry: Equatable {
        /// The new file (`inode`) replaces `name`; the old one ends in the
        /// temporary folder as `name` (exchange) or `aside` (fallback).
        case replace(name: String, inode: UInt64, aside: String)
        /// The new file (`inode`) is moved in as `name`.
        case add(name: String, inode: UInt64)
        /// The stale `name` is moved into the temporary folder as `aside`.
        case stale(name: String, aside: String)
    }

    static func hex(_ s: String) -> String {
        let d = Array("0123456789abcdef")
        return String(PathBytes.bytes(s).flatMap { [d[Int($0 >> 4)], d[Int($0 & 15)]] })
    }

    static func unhex<S: StringProtocol>(_ s: S) -> String? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var i = 0
        while i < u.count {
            guard let hi = UInt8(String(UnicodeScalar(u[i])), radix: 16), let lo = UInt8(String(UnicodeScalar(u[i + 1])), radix: 16) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        return PathBytes.string(bytes)
    }

    /// Writes the journal into the temporary folder `temp` and flushes it
    /// and the folder to the disk.
    package static func write(_ entries: [Entry], target: String, into temp: Int32, shown: String) throws {
        var text = "wobble-commit 1\nT \(hex(target))\n"
        for e in entries {
            switch e {
            case .replace(let n, let ino, let a): text += "R \(ino) \(hex(n)) \(hex(a))\n"
            case .add(let n, let ino): text += "A \(ino) \(hex(n))\n"
            case .stale(let n, let a): text += "S \(hex(n)) \(hex(a))\n"
            }
        }
        let fd = try Posix.openat(temp, name, O_WRONLY | O_CREAT | O_EXCL, 0o600, shown: shown)
        do {
            try Posix.write(fd, Array(text.utf8), shown: shown)
            try Posix.fsync(fd, shown: shown)
        } catch {
            close(fd)
            throw error
        }
        try Posix.close(fd, shown: shown)
        try Posix.fsync(temp, shown: shown)
    }

    /// What a temporary folder's journal says.
    package enum Reading: Equatable {
        /// No journal, or one cut short while being written (it does not
        /// end with a newline): no rename happened yet, nothing to undo.
        case nothing
        /// A complete plan, every name checked.
        case plan(target: String, entries: [Entry])
        /// Not a journal this tool wrote: never acted on (why).
        case refused(String)
    }

    /// Whether `name` is one entry of one folder: not empty, not `.` or
    /// `..`, no `/` and no NUL. The commit only ever writes such names (a
    /// frame's name, `.old-N`, the target folder's name beside the
    /// temporary folder), so any other name was not written by it, and
    /// following one (`d/victim` through a planted link, `../../victim`)
    /// would rename a file outside the folder.
    static func isPlainName(_ name: String) -> Bool {
        let b = PathBytes.bytes(name)
        return !b.isEmpty && b != [0x2E] && b != [0x2E, 0x2E] && !b.contains(0x2F) && !b.contains(0)
    }

    /// Whether `name` is a name the commit gives an old file it moves into
    /// the temporary folder (`.old-N`, or `.old`).
    static func isAsideName(_ name: String) -> Bool {
        guard name.hasPrefix(".old") else { return false }
        let rest = name.dropFirst(4)
        return rest.isEmpty || (rest.hasPrefix("-") && rest.count > 1 && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
    }

    /// Reads the journal of the temporary folder `temp`. Refused: a
    /// journal (or temporary folder) that another user owns, one that is
    /// not a regular file, and any line or name the commit does not write.
    package static func read(_ temp: Int32) -> Reading {
        guard let st = try? Posix.linkStatus(at: temp, name, shown: name) else { return .nothing }
        guard FileKind(st) == .regular else { return .refused("it is not a regular file") }
        guard st.st_uid == geteuid() else { return .refused("another user owns it") }
        if let t = try? Posix.fstat(temp, shown: name), t.st_uid != geteuid() {
            return .refused("another user owns its folder")
        }
        guard let fd = try? Posix.openat(temp, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, shown: name) else { return .refused("it cannot be read") }
        defer { close(fd) }
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while let n = try? buf.withUnsafeMutableBytes({ try Posix.read(fd, into: $0, shown: name) }), n > 0 {
            data += buf[0..<n]
            if data.count > 64 << 20 { return .refused("it is too long") }
        }
        // Written with one write before the first rename: a journal that
        // does not end its last line was cut short, so nothing was renamed.
        guard data.last == UInt8(ascii: "\n") else { return .nothing }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 2, lines[0] == "wobble-commit 1", lines[1].hasPrefix("T "),
              let target = unhex(lines[1].dropFirst(2)) else { return .refused("its header is not the commit's") }
        guard target.isEmpty || isPlainName(target) else { return .refused("its target is not a plain name") }
        var entries: [Entry] = []
        func plain(_ n: String?) -> String? { n.flatMap { isPlainName($0) ? $0 : nil } }
        func aside(_ n: String?) -> String? { n.flatMap { isAsideName($0) ? $0 : nil } }
        for line in lines.dropFirst(2) {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            switch (f.first, f.count) {
            case ("R"?, 4):
                guard let ino = UInt64(f[1]), let n = plain(unhex(f[2])), let a = aside(unhex(f[3])) else {
                    return .refused("a line names something other than a plain name in its folder")
                }
                entries.append(.replace(name: n, inode: ino, aside: a))
            case ("A"?, 3):
                guard let ino = UInt64(f[1]), let n = plain(unhex(f[2])) else {
                    return .refused("a line names something other than a plain name in its folder")
                }
                entries.append(.add(name: n, inode: ino))
            case ("S"?, 3):
                guard let n = plain(unhex(f[1])), let a = aside(unhex(f[2])) else {
                    return .refused("a line names something other than a plain name in its folder")
                }
                entries.append(.stale(name: n, aside: a))
            default:
                return .refused("a line is not one the commit writes")
            }
        }
        return .plan(target: target, entries: entries)
    }

    /// Undoes the cut-short commit of the temporary folder `temporaryName`
    /// in `home` (nothing when it has no journal). Best effort, in reverse
    /// order of the commit. Every step is a rename between the two
    /// folders' descriptors of a plain name (`isPlainName`), so no link is
    /// followed and nothing outside the two folders is touched. Returns
    /// why a journal was refused (never acted on; the caller leaves the
    /// folder as it is and says so), nil otherwise.
    package static func recover(home: Int32, temporaryName: String) -> String? {
        guard let temp = try? Posix.openat(home, temporaryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, shown: temporaryName) else { return nil }
        defer { close(temp) }
        let target: String, entries: [Entry]
        switch read(temp) {
        case .nothing: return nil
        case .refused(let why): return why
        case .plan(let t, let e): (target, entries) = (t, e)
        }
        let dir: Int32
        if target.isEmpty {
            dir = home
        } else {
            guard let d = try? Posix.openat(home, target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, shown: target) else { return nil }
            dir = d
        }
        defer { if dir != home { close(dir) } }
        func inode(_ d: Int32, _ n: String) -> UInt64? {
            (try? Posix.linkStatus(at: d, n, shown: n))?.map { UInt64($0.st_ino) } ?? nil
        }
        for entry in entries.reversed() {
            switch entry {
            case .replace(let n, let ino, let a):
                if inode(dir, n) == ino {
                    if inode(temp, n) != nil {
                        try? Posix.rename(temp, n, dir, n, flags: Posix.renameExchange, shown: n)
                    } else if inode(temp, a) != nil {
                        try? Posix.rename(dir, n, temp, n, flags: Posix.renameNoReplace, shown: n)
                        try? Posix.rename(temp, a, dir, n, flags: Posix.renameNoReplace, shown: n)
                    }
                } else if inode(dir, n) == nil, inode(temp, a) != nil {
                    try? Posix.rename(temp, a, dir, n, flags: Posix.renameNoReplace, shown: n)
                }
            case .add(let n, let ino):
                if inode(dir, n) == ino {
                    try? Posix.rename(dir, n, temp, n, flags: Posix.renameNoReplace, shown: n)
                }
            case .stale(let n, let a):
                if inode(dir, n) == nil, inode(temp, a) != nil {
                    try? Posix.rename(temp, a, dir, n, flags: Posix.renameNoReplace, shown: n)
                }
            }
        }
        try? Posix.fsync(dir, shown: target)
        try? Posix.unlink(temp, name, shown: name)
        return nil
    }
}
