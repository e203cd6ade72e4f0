import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Temporary paths this process created and has not yet moved into place or
/// removed. A signal handler (or `main` on a fatal error) removes them all,
/// so no run leaves temporary files behind (SPEC §6).
public enum TemporaryPaths {
    private static let paths = Mutex<Set<String>>([])

    /// Registers a temporary file or folder.
    public static func add(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    /// Forgets a path (it was renamed into place or removed).
    public static func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }
    /// Removes every registered path from disk (recursively) and forgets them.
    public static func removeAll() {
        let all = paths.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        for p in all { try? FileManager.default.removeItem(atPath: p) }
    }
}

/// A file written beside its target under a temporary name and renamed over
/// the target only by `commit()`: an existing target stays intact until the
/// new one is complete. The final file gets the usual permissions
/// (0666 & ~umask), not a temporary file's.
public final class AtomicFile {
    public let target: String
    public let temporaryPath: String
    private var fd: Int32
    private var done = false

    /// Where `commit()` renames the finished file: `target`, or the file a
    /// symbolic link `target` points to (the link itself stays).
    private let place: String
    /// `target` is a pipe, terminal or device (`-o /dev/stdout`): written in
    /// place, as there is nothing to replace atomically.
    private let direct: Bool

    /// Creates the temporary file beside `target` (beside the file it links
    /// to, for a symbolic link), or opens a pipe or device for writing.
    public init(target: String) throws {
        self.target = target
        var st = stat()
        if stat(target, &st) == 0, [S_IFIFO, S_IFCHR, S_IFSOCK].contains(st.st_mode & S_IFMT) {
            fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw MediaError("output '\(target)': cannot open it for writing: \(String(cString: strerror(errno)))")
            }
            temporaryPath = target
            place = target
            direct = true
            return
        }
        direct = false
        var resolved = target
        var lst = stat()
        if lstat(target, &lst) == 0, lst.st_mode & S_IFMT == S_IFLNK, let real = realpath(target, nil) {
            resolved = String(cString: real)
            free(real)
        }
        place = resolved
        let url = URL(fileURLWithPath: resolved)
        let dir = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw MediaError("output '\(target)': folder '\(dir)' does not exist")
        }
        let base = "\(dir)/.\(name).wobble-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        temporaryPath = base
        fd = open(base, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw MediaError("output '\(target)': cannot create a file there: \(String(cString: strerror(errno)))")
        }
        TemporaryPaths.add(base)
    }

    deinit { if !done { abort() } }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if let e = writeAll(fd, bytes) {
            throw MediaError("output '\(target)': write failed: \(String(cString: strerror(e)))")
        }
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// The open file descriptor, for C libraries that write themselves
    /// (giflib's `EGifOpenFileHandle`). The caller must not close it.
    public var fileDescriptor: Int32 { fd }

    /// Flushes, sets the usual permissions and renames over the target.
    public func commit() throws {
        guard !done else { return }
        if direct {
            done = true
            if fd >= 0 { close(fd); fd = -1 }
            return
        }
        if fd >= 0 {
            fsync(fd)
            close(fd)
            fd = -1
        }
        let mask = umask(0)
        umask(mask)
        chmod(temporaryPath, 0o666 & ~mask)
        guard rename(temporaryPath, place) == 0 else {
            let e = String(cString: strerror(errno))
            abort()
            throw MediaError("output '\(target)': cannot move the finished file into place: \(e)")
        }
        done = true
        TemporaryPaths.remove(temporaryPath)
    }

    /// Closes and removes the temporary file; the target is untouched.
    public func abort() {
        guard !done else { return }
        done = true
        if fd >= 0 { close(fd); fd = -1 }
        if direct { return }
        unlink(temporaryPath)
        TemporaryPaths.remove(temporaryPath)
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR; returns
/// the errno of a failed write, or nil.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var off = 0
    while off < bytes.count {
        let n = Glibc.write(fd, bytes.baseAddress! + off, bytes.count - off)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        off += n
    }
    return nil
}
