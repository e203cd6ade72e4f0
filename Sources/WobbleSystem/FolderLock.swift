import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (`flock(2)`) on a folder, held while a change
/// that must not interleave with another process's runs: moving a render's
/// frames into a folder (check, journal, renames, stale removal), or a
/// studio's read-compare-write-rename of a scene.
///
/// Two runs that commit into one folder take turns: the second waits for
/// the first to finish, then checks and commits against what the first
/// left, so the folder always holds one whole run's frames. The lock lives
/// with the open descriptor: a run killed while holding it (even by
/// SIGKILL) releases it as it dies, and never blocks the next one.
///
/// Folders are locked rather than files, because a file replaced by a
/// rename is a new inode: a lock on the old one would not exclude a process
/// that opens the new one.
public enum FolderLock {
    /// Runs `body` while holding the lock on the folder `path`, waiting
    /// for another process that holds it. `shown` names the folder in
    /// errors.
    ///
    /// - Throws: `PosixError` when the folder cannot be opened or locked
    ///   (a file system without locks is not an error: `body` runs
    ///   unlocked, as before locks existed), or what `body` throws.
    public static func withLock<T>(_ path: String, shown: String, _ body: () throws -> T) throws -> T {
        try withLock(candidates: [path], shown: shown, body)
    }

    /// Runs `body` holding the lock on the folder that holds `file`.
    public static func withLock<T>(folderOf file: String, _ body: () throws -> T) throws -> T {
        try withLock(OutputTarget.split(file).0, shown: file, body)
    }

    /// As `withLock(_:shown:_:)` on the first of `candidates` that can be
    /// opened (a folder we may enter but not read cannot be locked: a
    /// commit into `/srv/drop/frames` whose `/srv/drop` is 0711 locks
    /// `frames` itself). Every process picks the same one for the same
    /// folders and permissions.
    public static func withLock<T>(candidates: [String], shown: String, _ body: () throws -> T) throws -> T {
        var opened: Int32 = -1
        var firstError: Error?
        for path in candidates {
            do {
                opened = try Posix.open(path, O_RDONLY | O_DIRECTORY, shown: shown)
                break
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        guard opened >= 0 else { throw firstError ?? PosixError("open", shown, ENOENT) }
        let fd = opened
        defer { close(fd) }
        do {
            try Posix.call("flock", shown) { flock(fd, LOCK_EX) }
        } catch let e as PosixError where e.code == ENOLCK || e.code == EOPNOTSUPP || e.code == ENOSYS {
            // No advisory locks on this file system: nothing to wait for.
        }
        return try body()
    }
}
