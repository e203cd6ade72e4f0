#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (`flock(2)`) on a file that is never replaced (a lock
/// file), held for as long as the value lives: exclusive or shared, waited
/// for or only tried. The file also carries a short text its holder writes
/// (who holds it), which another process reads while the lock is held.
///
/// Like `FolderLock`, the lock lives with the open descriptor: a process
/// killed while holding it (even by SIGKILL) releases it as it dies.
/// Unlike `FolderLock`, the file is the lock's own (a folder's lock would
/// exclude a render's commit into that folder).
public final class FileLock {
    public enum Mode: Sendable { case shared, exclusive }

    private let fd: Int32
    /// The lock file.
    public let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Opens (creating, 0644) the lock file `path` and takes the lock:
    /// waiting for other holders when `wait`, else nil when another holds
    /// a lock that conflicts. A file system without locks gives the lock
    /// at once (nothing to exclude, as before locks existed).
    ///
    /// - Throws: `PosixError` when the file cannot be opened.
    public static func acquire(_ path: String, _ mode: Mode, wait: Bool) throws -> FileLock? {
        // A lock file's name is always one wobble-run chose: a link there
        // (planted in a shipped folder) is refused, never followed (its
        // text is replaced by the holder).
        let fd = try Posix.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644, shown: path)
        var op = mode == .shared ? LOCK_SH : LOCK_EX
        if !wait { op |= LOCK_NB }
        while flock(fd, op) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK {
                close(fd)
                return nil
            }
            if code == ENOLCK || code == EOPNOTSUPP || code == ENOSYS { break }
            close(fd)
            throw PosixError("flock", path, code)
        }
        return FileLock(fd: fd, path: path)
    }

    /// Replaces the file's text (who holds the lock).
    public func write(_ text: String) throws {
        guard ftruncate(fd, 0) == 0 else { throw PosixError("ftruncate", path, errno) }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw PosixError("write", path, errno) }
            done += n
        }
    }

    /// The text of the lock file `path` when another process holds its
    /// lock exclusively now; nil when nobody does (or it cannot be read).
    public static func holderText(_ path: String) -> String? {
        guard let fd = try? Posix.open(path, O_RDONLY | O_CLOEXEC, shown: path) else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        guard errno == EWOULDBLOCK else { return nil }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
