import Foundation
import WobbleSystem

/// The pack's state folder, `.wobble-pack/` in the pack's folder: the
/// journal (`PackJournal`), the state lock that serialises short changes
/// to it (`lock`), and one lock file per slice being rendered
/// (`slice-I-of-N`), which says who renders it.
///
/// Who may render into one folder at once (`claim`): the slices of one
/// pack (the same manifest, the same N, each slice once) side by side —
/// that is what a job array is. Any other pack, or the same slice twice,
/// waits until the one rendering has finished (a line on stderr says so),
/// so two packs never mix their rows, outputs or journal entries. The
/// locks die with their process (`flock`): a pack killed by SIGKILL never
/// blocks the next.
package enum PackState {
    /// The state folder of the pack whose folder is `folder`, created
    /// (0755) when missing.
    package static func folder(of folder: String) throws -> String {
        let dir = ScenePaths.join(folder, ".wobble-pack")
        if Posix.kind(dir, follow: false) != .directory {
            let fd = try Posix.open(folder, O_RDONLY | O_DIRECTORY, shown: folder)
            defer { Posix.closeQuietly(fd) }
            do {
                try Posix.mkdir(fd, ".wobble-pack", 0o755, shown: dir)
            } catch let e as PosixError where e.code == EEXIST {
                // made by a slice at the same moment
            }
            guard Posix.kind(dir, follow: false) == .directory else { throw RunError("'\(dir)' is not a folder") }
        }
        return dir
    }

    /// Runs `body` holding the state lock of the state folder `dir`.
    package static func withLock<T>(_ dir: String, _ body: () throws -> T) throws -> T {
        let lock = try FileLock.acquire(ScenePaths.join(dir, "lock"), .exclusive, wait: true)
        return try withExtendedLifetime(lock) { try body() }
    }

    /// The right to render `slice` of the pack `identity` (a hash of the
    /// manifest) into the state folder `dir`, held while the value lives.
    /// Waits (polling `stopped`, which ends the wait with `Interrupted`)
    /// while another pack, or this slice, is being rendered there;
    /// `waiting` hears once what it waits for.
    package static func claim(_ dir: String, slice: PackSlice, identity: String, stopped: () -> Int32?,
                              waiting: (String) -> Void) throws -> FileLock {
        let mine = "slice-\(slice.index)-of-\(slice.count)"
        var told = false
        while true {
            if let s = stopped() { throw Interrupted(signal: s) }
            let held: FileLock? = try withLock(dir) {
                guard let lock = try FileLock.acquire(ScenePaths.join(dir, mine), .exclusive, wait: false) else { return nil }
                // Every other slice rendered now must be of this pack and this N.
                let fd = try Posix.open(dir, O_RDONLY | O_DIRECTORY, shown: dir)
                let names: [String]
                do {
                    defer { Posix.closeQuietly(fd) }
                    names = try Posix.list(fd, shown: dir)
                }
                for name in names where name.hasPrefix("slice-") && name != mine {
                    guard let text = FileLock.holderText(ScenePaths.join(dir, name)) else { continue }
                    let fields = text.split(separator: " ")
                    if fields.count < 2 || fields[0] != Substring(identity) || !name.hasSuffix("-of-\(slice.count)") {
                        return nil
                    }
                }
                try lock.write("\(identity) \(ThisProcess.id)\n")
                return lock
            }
            if let held { return held }
            if !told {
                waiting("another pack (or this slice of this pack) is being rendered into this folder: waiting for it to finish")
                told = true
            }
            _ = Signals.sleep(0.2)
        }
    }
}
