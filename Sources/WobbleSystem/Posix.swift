internal import CWobbleSys
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on which path (as the user named it),
/// and the system's reason. Reads `write 'out.gif': No space left on device`.
public struct PosixError: Error, Equatable, CustomStringConvertible {
    /// The C function (`open`, `write`, `rename`, …).
    public let call: String
    /// The path the user knows (a target, not its temporary name).
    public let path: String
    /// `errno`.
    public let code: Int32

    public init(_ call: String, _ path: String, _ code: Int32) {
        self.call = call
        self.path = path
        self.code = code
    }

    public var description: String {
        "\(call) '\(PathBytes.display(path, controls: true))': \(String(cString: strerror(code)))"
    }
}

/// The one place WobbleMedia calls the file system (in the style of
/// swift-nio's `Posix` and `syscall(where:)`): every call is checked,
/// EINTR is retried, a failure throws `PosixError` naming the call and the
/// path, and paths go down as their exact bytes (`PathBytes`), so names
/// that are not UTF-8 work. `shown` is the path for messages (the output
/// the user named rather than its temporary file); it defaults to `path`.
public enum Posix {
    /// Runs `body` until it does not fail with EINTR; -1 throws.
    @discardableResult
    static func call<T: BinaryInteger>(_ name: String, _ shown: String, _ body: () -> T) throws -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = errno
            if e == EINTR { continue }
            throw PosixError(name, shown, e)
        }
    }

    /// `body` with `path`'s bytes; a path with a NUL byte is EINVAL.
    @discardableResult
    static func withPath<T: BinaryInteger>(_ name: String, _ path: String, _ shown: String?,
                                           _ body: (UnsafePointer<CChar>) -> T) throws -> T {
        guard let r = try PathBytes.withCString(path, { p in try call(name, shown ?? path) { body(p) } }) else {
            throw PosixError(name, shown ?? path, EINVAL)
        }
        return r
    }

    /// A pipe, both ends close-on-exec from the start (a child spawned
    /// meanwhile must not inherit them).
    public static func pipe(shown: String) throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try call("pipe", shown) { wobble_pipe_cloexec(&fds) }
        return (fds[0], fds[1])
    }

    /// An anonymous file in memory (`memfd_create`), close-on-exec:
    /// seekable, on no disk, gone when its last descriptor closes.
    public static func memoryFile(shown: String) throws -> Int32 {
        try call("memfd_create", shown) { wobble_memfd("wobble") }
    }

    /// `open(2)`, close-on-exec.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0, shown: String? = nil) throws -> Int32 {
        try withPath("open", path, shown) { Glibc.open($0, flags | O_CLOEXEC, mode) }
    }

    /// `openat(2)` relative to the folder `dir`, close-on-exec.
    public static func openat(_ dir: Int32, _ name: String, _ flags: Int32, _ mode: mode_t = 0, shown: String) throws -> Int32 {
        try withPath("open", name, shown) { Glibc.openat(dir, $0, flags | O_CLOEXEC, mode) }
    }

    /// `close(2)`. EINTR is not retried: on Linux the descriptor is gone.
    public static func close(_ fd: Int32, shown: String) throws {
        if Glibc.close(fd) != 0 && errno != EINTR { throw PosixError("close", shown, errno) }
    }

    /// `close(2)` for cleanup, where a failure changes nothing (the
    /// descriptor is gone either way): a read-only file, a pipe end, a
    /// descriptor given up after an error.
    public static func closeQuietly(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// The system's reason for `errno` value `code` (`strerror`): "No such
    /// file or directory".
    public static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Whether descriptor `fd` is a terminal (`isatty`).
    public static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// Whether `path` is a regular file this process may execute.
    public static func isExecutableFile(_ path: String) -> Bool {
        kind(path) == .regular && PathBytes.withCString(path, { access($0, X_OK) == 0 }) == true
    }

    /// Opens a TCP connection to the IPv4 address `host` (dotted, e.g.
    /// `127.0.0.1`) at `port` and closes it at once, sending nothing: wakes
    /// a server waiting on its listening socket. False when it could not
    /// connect (nothing listens there any more, or `host` is not an IPv4
    /// address).
    @discardableResult
    public static func knock(host: String, port: Int) -> Bool {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        guard port > 0, port < 65536, inet_pton(AF_INET, host, &addr.sin_addr) == 1 else { return false }
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return r == 0
    }

    /// The TCP connections this process holds to its own port `localPort`,
    /// by their peer (`ADDRESS:PORT`, IPv4): for connections a library
    /// accepted and does not name by descriptor, found by asking each open
    /// descriptor for its two addresses (one pass for all of them). The
    /// descriptors stay their owner's (never closed here).
    public static func connectedSockets(localPort: Int) -> [String: Int32] {
        guard let dir = opendir("/proc/self/fd") else { return [:] }
        defer { closedir(dir) }
        let own = dirfd(dir)
        var found: [String: Int32] = [:]
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let fd = Int32(name), fd != own else { continue }
            var local = sockaddr_in(), remote = sockaddr_in()
            var n = socklen_t(MemoryLayout<sockaddr_in>.size), m = n
            let named = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &n) }
            }
            guard named == 0, local.sin_family == sa_family_t(AF_INET), Int(UInt16(bigEndian: local.sin_port)) == localPort else { continue }
            let peered = withUnsafeMutablePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &m) }
            }
            guard peered == 0, remote.sin_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &remote.sin_addr, &text, socklen_t(text.count)) != nil else { continue }
            let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found["\(address):\(UInt16(bigEndian: remote.sin_port))"] = fd
        }
        return found
    }

    /// The descriptor of the connection from `peer` (IPv4, dotted) port
    /// `peerPort` to this process's port `localPort` (`connectedSockets`);
    /// nil when none is open.
    public static func connectedSocket(peer: String, peerPort: Int, localPort: Int) -> Int32? {
        connectedSockets(localPort: localPort)["\(peer):\(peerPort)"]
    }

    /// Shuts the connection on socket `fd` down both ways (`shutdown(2)`):
    /// whoever waits on it wakes at once to its end; the descriptor stays
    /// open for its owner to close.
    public static func hangUp(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Whether the bytes waiting unread on socket `fd` hold an HTTP
    /// request's whole head (up to its empty line; the first 16 KiB
    /// looked at, nothing taken off the socket).
    public static func holdsWholeHead(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard n >= 4 else { return false }
        for i in 0 ... n - 4 where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return true
        }
        return false
    }

    /// The bytes written to TCP socket `fd` that its peer has not yet
    /// acknowledged (Linux's SIOCOUTQ: unsent plus in flight); nil when
    /// the system cannot say.
    public static func unacknowledgedBytes(_ fd: Int32) -> Int? {
        var n: Int32 = 0
        return ioctl(fd, UInt(TIOCOUTQ), &n) == 0 ? Int(n) : nil
    }

    /// Shuts only the writing half of socket `fd` (the peer reads the end
    /// of the stream after what was sent; it may still send).
    public static func endWrites(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Shuts only the reading half of socket `fd`: whoever waits to read
    /// from it wakes at once to the end of its stream; what is written to
    /// it still goes to the peer.
    public static func endReads(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RD))
    }

    /// Waits up to `seconds` for bytes (or the end) to read on `fd`; true
    /// when a read would not wait.
    public static func waitReadable(_ fd: Int32, seconds: Double) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&p, 1, Int32(max(0, seconds) * 1000))
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }

    /// `recv(2)` once from socket `fd`: the number of bytes read, 0 at the
    /// end, -1 on an error (EINTR retried).
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        while true {
            let n = recv(fd, base, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            return n
        }
    }

    /// Waits up to `seconds` for the peer of the socket `fd` to hang up
    /// (POLLRDHUP, POLLHUP or POLLERR); true when it has.
    public static func waitForHangUp(_ fd: Int32, seconds: Double) -> Bool {
        let rdhup: Int16 = 0x2000   // POLLRDHUP (Linux; C hides it behind _GNU_SOURCE)
        var p = pollfd(fd: fd, events: rdhup, revents: 0)
        let n = poll(&p, 1, Int32(seconds * 1000))
        return n > 0 && p.revents & (rdhup | Int16(POLLHUP | POLLERR)) != 0
    }

    /// `write(2)` until every byte is written (short writes continue).
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, shown: String) throws {
        guard let base = bytes.baseAddress else { return }
        var off = 0
        while off < bytes.count {
            let n = try call("write", shown) { Glibc.write(fd, base + off, bytes.count - off) }
            guard n > 0 else { throw PosixError("write", shown, EIO) }
            off += n
        }
    }

    public static func write(_ fd: Int32, _ bytes: [UInt8], shown: String) throws {
        try bytes.withUnsafeBytes { try write(fd, $0, shown: shown) }
    }

    /// `read(2)` once: the number of bytes read, 0 at the end.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, shown: String) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        return try call("read", shown) { Glibc.read(fd, base, buffer.count) }
    }

    /// `pread(2)` until `buffer` is full or the file ends: the bytes read.
    public static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, shown: String) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var got = 0
        while got < buffer.count {
            let n = try call("read", shown) { Glibc.pread(fd, base + got, buffer.count - got, off_t(offset + got)) }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// `fsync(2)`: the data and the metadata are on the disk.
    public static func fsync(_ fd: Int32, shown: String) throws {
        try call("fsync", shown) { Glibc.fsync(fd) }
    }

    /// `fchmod(2)`.
    public static func fchmod(_ fd: Int32, _ mode: mode_t, shown: String) throws {
        try call("fchmod", shown) { Glibc.fchmod(fd, mode) }
    }

    /// `fstat(2)`.
    public static func fstat(_ fd: Int32, shown: String) throws -> Glibc.stat {
        var st = Glibc.stat()
        try call("fstat", shown) { Glibc.fstat(fd, &st) }
        return st
    }

    /// The bytes an unprivileged writer may still put on the file system
    /// of `fd` (`fstatvfs(2)`), nil when it cannot be told.
    public static func freeBytes(_ fd: Int32) -> Int? {
        var v = Glibc.statvfs()
        guard Glibc.fstatvfs(fd, &v) == 0 else { return nil }
        return Int(v.f_bavail).multipliedReportingOverflow(by: Int(v.f_frsize)).partialValue
    }

    /// `stat(2)` (follows links), or nil when nothing is there (ENOENT,
    /// ENOTDIR: a path through a file); other errors throw.
    public static func fileStatus(_ path: String, shown: String? = nil) throws -> Glibc.stat? {
        var st = Glibc.stat()
        do {
            try withPath("stat", path, shown) { fstatat(AT_FDCWD, $0, &st, 0) }
        } catch let e as PosixError where e.code == ENOENT || e.code == ENOTDIR {
            return nil
        }
        return st
    }

    /// `stat(2)`, or `lstat(2)` without `follow`; every failure throws
    /// (ENOENT and ENOTDIR too, for callers that tell them apart).
    public static func status(_ path: String, follow: Bool, shown: String? = nil) throws -> Glibc.stat {
        var st = Glibc.stat()
        try withPath(follow ? "stat" : "lstat", path, shown) { fstatat(AT_FDCWD, $0, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) }
        return st
    }

    /// `lstat(2)` (does not follow a last link), nil as for `stat`.
    public static func linkStatus(_ path: String, shown: String? = nil) throws -> Glibc.stat? {
        var st = Glibc.stat()
        do {
            try withPath("lstat", path, shown) { fstatat(AT_FDCWD, $0, &st, AT_SYMLINK_NOFOLLOW) }
        } catch let e as PosixError where e.code == ENOENT || e.code == ENOTDIR {
            return nil
        }
        return st
    }

    /// `fstatat(2)` of `name` in `dir`, not following a link; nil when absent.
    public static func linkStatus(at dir: Int32, _ name: String, shown: String) throws -> Glibc.stat? {
        var st = Glibc.stat()
        do {
            try withPath("lstat", name, shown) { Glibc.fstatat(dir, $0, &st, AT_SYMLINK_NOFOLLOW) }
        } catch let e as PosixError where e.code == ENOENT {
            return nil
        }
        return st
    }

    /// The kind of file at `path` without throwing (nil: nothing there or
    /// not reachable), following links unless `follow` is false.
    public static func kind(_ path: String, follow: Bool = true) -> FileKind? {
        guard let st = try? (follow ? fileStatus(path) : linkStatus(path)) else { return nil }
        return FileKind(st)
    }

    /// `renameat2(2)`: `from` in `fromDir` to `to` in `toDir`; `flags` 0,
    /// `RENAME_NOREPLACE` or `RENAME_EXCHANGE`.
    public static func rename(_ fromDir: Int32, _ from: String, _ toDir: Int32, _ to: String,
                              flags: UInt32 = 0, shown: String) throws {
        let f = try cBytes(from, "rename", shown), t = try cBytes(to, "rename", shown)
        _ = try f.withUnsafeBufferPointer { fp in
            try t.withUnsafeBufferPointer { tp in
                try call("rename", shown) {
                    flags == 0 ? Glibc.renameat(fromDir, fp.baseAddress!, toDir, tp.baseAddress!)
                               : wobble_renameat2(fromDir, fp.baseAddress!, toDir, tp.baseAddress!, flags)
                }
            }
        }
    }

    /// The NUL-terminated bytes of a path; EINVAL for a NUL inside.
    static func cBytes(_ path: String, _ name: String, _ shown: String) throws -> [CChar] {
        let b = PathBytes.bytes(path)
        if b.contains(0) { throw PosixError(name, shown, EINVAL) }
        return b.map { CChar(bitPattern: $0) } + [0]
    }

    /// `unlinkat(2)`; `directory` removes an (empty) folder.
    public static func unlink(_ dir: Int32, _ name: String, directory: Bool = false, shown: String) throws {
        try withPath(directory ? "rmdir" : "unlink", name, shown) { Glibc.unlinkat(dir, $0, directory ? AT_REMOVEDIR : 0) }
    }

    /// `mkdirat(2)`.
    public static func mkdir(_ dir: Int32, _ name: String, _ mode: mode_t, shown: String) throws {
        try withPath("mkdir", name, shown) { Glibc.mkdirat(dir, $0, mode) }
    }

    /// `readlink(2)`: the text of a symbolic link.
    public static func readlink(_ path: String, shown: String? = nil) throws -> String {
        var buf = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = try buf.withUnsafeMutableBufferPointer { b in
            try withPath("readlink", path, shown) { p in
                b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { Glibc.readlink(p, $0, b.count - 1) }
            }
        }
        return PathBytes.string(buf[0..<n])
    }

    /// `realpath(3)`: the canonical path, every link resolved.
    public static func realpath(_ path: String, shown: String? = nil) throws -> String {
        var out: String?
        _ = try withPath("realpath", path, shown) { p -> Int32 in
            guard let r = Glibc.realpath(p, nil) else { return -1 }
            defer { free(r) }
            out = PathBytes.string(UnsafeBufferPointer(start: UnsafeRawPointer(r).assumingMemoryBound(to: UInt8.self), count: strlen(r)))
            return 0
        }
        return out ?? path
    }

    /// `getcwd(3)`: the current folder as a `PathBytes` string (a folder
    /// whose name is not UTF-8 survives, unlike
    /// `FileManager.currentDirectoryPath`); nil when it cannot be read.
    public static func currentDirectory() -> String? {
        var size = Int(PATH_MAX) + 1
        while size <= 1 << 20 {
            var buf = [UInt8](repeating: 0, count: size)
            let ok = buf.withUnsafeMutableBufferPointer { b in
                b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { Glibc.getcwd($0, b.count) } != nil
            }
            if ok { return PathBytes.string(buf.prefix(while: { $0 != 0 })) }
            guard errno == ERANGE else { return nil }
            size *= 2
        }
        return nil
    }

    /// The whole content of the file at `path` (its exact bytes): open,
    /// read to the end, close; the one file reader of the tool. More than
    /// `limit` bytes throws `FileTooLarge` (a regular file is refused by its
    /// size before anything is read; a pipe or a device once it passes the
    /// limit). Other failures throw `PosixError` naming `shown`.
    ///
    /// With `inside` (a canonical folder): only a regular file that, as
    /// opened, lies inside that folder — checked on the open descriptor, so
    /// a link swapped between a check by name and the open cannot lead
    /// outside (`OutsideFolder`); opened without waiting (a FIFO put there
    /// meanwhile is refused, not waited on).
    public static func readFile(_ path: String, shown: String? = nil, limit: Int = Int.max, inside folder: String? = nil) throws -> [UInt8] {
        let name = shown ?? path
        let (fd, st) = try openToRead(path, shown: name, limit: limit, inside: folder)
        defer { closeQuietly(fd) }
        let regular = FileKind(st) == .regular
        // Regular files: read exactly their size (plus one byte, to see
        // growth); pipes and devices: in chunks, doubling, up to the limit.
        var bytes: [UInt8] = []
        var capacity = regular ? Int(st.st_size) + 1 : 1 << 16
        while true {
            if bytes.count == capacity {
                guard capacity <= limit else { throw FileTooLarge(path: name, limit: limit) }
                capacity = capacity > limit / 2 ? limit &+ 1 : capacity * 2
            }
            let start = bytes.count, want = capacity - start
            bytes.append(contentsOf: repeatElement(0, count: want))
            let got: Int
            do {
                got = try bytes.withUnsafeMutableBytes { try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[start...]), shown: name) }
            } catch {
                bytes.removeLast(want)
                throw error
            }
            bytes.removeLast(want - got)
            if got == 0 { return bytes }
        }
    }

    /// `readFile`'s open and checks: the descriptor and its status.
    private static func openToRead(_ path: String, shown name: String, limit: Int, inside folder: String?) throws -> (Int32, stat) {
        let fd = try open(path, folder == nil ? O_RDONLY : O_RDONLY | O_NONBLOCK, shown: name)
        do {
            let st = try fstat(fd, shown: name)
            let regular = FileKind(st) == .regular
            if let folder {
                let opened = try readlink("/proc/self/fd/\(fd)", shown: name)
                let prefix = folder.hasSuffix("/") ? folder : folder + "/"
                guard regular, opened.hasPrefix(prefix) else { throw OutsideFolder(path: name) }
            }
            if regular && Int(st.st_size) > limit { throw FileTooLarge(path: name, limit: limit) }
            return (fd, st)
        } catch {
            closeQuietly(fd)
            throw error
        }
    }

    /// A regular file inside the canonical folder `folder`, as `readFile`
    /// with `inside` checks it (on the open descriptor), in pieces of at
    /// most `chunk` bytes, so that a large file costs one piece of memory:
    /// `opened` hears its size (as opened) first and says whether to read
    /// on; then `each` hears the pieces, exactly that many bytes in all
    /// (fewer when the file shrank meanwhile), until it says false.
    public static func readFile(_ path: String, shown: String? = nil, limit: Int = Int.max, inside folder: String, chunk: Int,
                                opened: (Int) throws -> Bool, each: (UnsafeRawBufferPointer) throws -> Bool) throws {
        let name = shown ?? path
        let (fd, st) = try openToRead(path, shown: name, limit: limit, inside: folder)
        defer { closeQuietly(fd) }
        let size = Int(st.st_size)
        guard try opened(size) else { return }
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunk, size)))
        var left = size
        while left > 0 {
            let got = try buffer.withUnsafeMutableBytes { try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<min(left, $0.count)]), shown: name) }
            if got == 0 { return }
            left -= got
            guard try buffer.withUnsafeBytes({ try each(UnsafeRawBufferPointer(rebasing: $0[..<got])) }) else { return }
        }
    }

    /// The names in the folder `dir` (an open descriptor), without `.` and `..`.
    public static func list(_ dir: Int32, shown: String) throws -> [String] {
        let copy = try call("dup", shown) { fcntl(dir, F_DUPFD_CLOEXEC, 0) }
        guard let d = fdopendir(copy) else {
            let e = errno
            Glibc.close(copy)
            throw PosixError("opendir", shown, e)
        }
        defer { closedir(d) }
        rewinddir(d)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(d) else {
                if errno != 0 { throw PosixError("readdir", shown, errno) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { p in
                p.withMemoryRebound(to: UInt8.self, capacity: 256) { PathBytes.string(UnsafeBufferPointer(start: $0, count: strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)))) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `name` in `dir` and, for a folder, everything in it; never
    /// follows a link; best effort (for cleaning up temporary files).
    public static func removeTree(_ dir: Int32, _ name: String) {
        guard let st = try? linkStatus(at: dir, name, shown: name) else { return }
        if FileKind(st) == .directory {
            if let fd = try? openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, shown: name) {
                for entry in (try? list(fd, shown: name)) ?? [] { removeTree(fd, entry) }
                Glibc.close(fd)
            }
            try? unlink(dir, name, directory: true, shown: name)
        } else {
            try? unlink(dir, name, shown: name)
        }
    }

    /// Standard descriptors (bit 0: stdin, 1: stdout, 2: stderr) that were
    /// closed when the tool started; `protectStandardDescriptors` put
    /// /dev/null there so no file the tool opens can become "stdout".
    private static let closedAtStart = Atomic<Int>(0)

    /// Opens /dev/null on any of descriptors 0, 1, 2 that is closed (as
    /// daemons and setuid programs do), remembering which were: output to
    /// a closed stdout is then an error, not a write into a random file.
    public static func protectStandardDescriptors() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let n = Glibc.open("/dev/null", O_RDWR)
            if n >= 0 && n != fd {
                dup2(n, fd)
                Glibc.close(n)
            }
            closedAtStart.bitwiseOr(1 << Int(fd), ordering: .relaxed)
        }
    }

    /// Whether standard output was closed when the tool started.
    public static var stdoutWasClosed: Bool { closedAtStart.load(ordering: .relaxed) & 2 != 0 }

    /// `renameat2` flags (from <linux/fs.h>).
    public static let renameNoReplace: UInt32 = 1
    public static let renameExchange: UInt32 = 2

    /// The process's umask, read once: from /proc/self/status (reading it
    /// with umask(2) means setting it, which races with other threads
    /// creating files), else with umask(2) at first use.
    public static let umask: mode_t = {
        if let field = statusField("Umask"), let m = mode_t(field, radix: 8) { return m }
        let m = Glibc.umask(0o022)
        Glibc.umask(m)
        return m
    }()

    /// The value of field `name` of /proc/self/status (`Umask`, `VmSize`, …),
    /// trimmed (`"4096 kB"`), or nil when it cannot be read.
    public static func statusField(_ name: String) -> String? {
        guard let bytes = try? readFile("/proc/self/status") else { return nil }
        let prefix = name + ":"
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            return line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// A file larger than a reader's limit (`Posix.readFile`).
/// A file that, as opened, is not a regular file inside the folder a
/// reader was confined to (`Posix.readFile(_:inside:)`).
public struct OutsideFolder: Error, Equatable {
    /// The path as the user named it.
    public let path: String
    public init(path: String) { self.path = path }
}

public struct FileTooLarge: Error, Equatable {
    /// The path as the user named it.
    public let path: String
    /// The most bytes the reader takes.
    public let limit: Int
}

/// What a path is.
public enum FileKind: Equatable, Sendable {
    case regular, directory, link, fifo, characterDevice, blockDevice, socket, other

    public init(_ st: Glibc.stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .link
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        default: self = .other
        }
    }

    /// In a message: `a FIFO`, `a character device`, ...
    public var described: String {
        switch self {
        case .regular: return "a file"
        case .directory: return "a folder"
        case .link: return "a symbolic link"
        case .fifo: return "a FIFO"
        case .characterDevice: return "a character device"
        case .blockDevice: return "a block device"
        case .socket: return "a socket"
        case .other: return "not a file"
        }
    }

    /// A pipe, terminal, device or socket: written in place, never replaced.
    public var isStream: Bool { [.fifo, .characterDevice, .blockDevice, .socket].contains(self) }
}
