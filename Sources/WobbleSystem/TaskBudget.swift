import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How many more threads or processes this process may start, where a
/// container or batch system limits them (a cgroup's `pids.max`).
///
/// Thread libraries do not fail well when they cannot start a thread: the
/// Dispatch pool retries forever (a render under `pids.max` 4–10 hung in
/// `_dispatch_temporary_resource_shortage`), and Mesa's llvmpipe starts one
/// thread per processor. So the tool reads the budget before it starts
/// them: a GLES render on a tight budget asks llvmpipe to draw on the
/// calling thread, and a budget too small for any render is a one-line
/// error instead of a hang.
public enum TaskBudget {
    /// The tightest limit over this process's cgroup and its ancestors
    /// (cgroup v2, and v1's `pids` hierarchy): the tasks that may still
    /// start and where the limit is set; nil when nothing limits them.
    public static func remaining() -> (left: Int, limit: String)? {
        guard let text = try? Posix.readFile("/proc/self/cgroup") else { return nil }
        var best: (left: Int, limit: String)?
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            // "0::/a/b" (v2) or "8:pids:/a/b" (v1).
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let root: String
            if parts[0] == "0" && parts[1].isEmpty {
                root = "/sys/fs/cgroup"
            } else if parts[1].split(separator: ",").contains("pids") {
                root = "/sys/fs/cgroup/pids"
            } else {
                continue
            }
            var path = String(parts[2])
            while true {
                let dir = root + (path == "/" ? "" : path)
                if let max = number(dir + "/pids.max"), let current = number(dir + "/pids.current") {
                    let left = Swift.max(0, max - current)
                    if best.map({ left < $0.left }) ?? true {
                        best = (left, "pids.max \(max) of the cgroup \(path)")
                    }
                }
                guard path != "/", let slash = path.lastIndex(of: "/") else { break }
                path = slash == path.startIndex ? "/" : String(path[..<slash])
            }
        }
        return best
    }

    /// A whole number in a one-line file (nil for "max", missing or bad).
    private static func number(_ path: String) -> Int? {
        guard let bytes = try? Posix.readFile(path) else { return nil }
        return Int(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Refuses a run that needs `need` more threads or processes where
    /// fewer may start: `what` says what needs them, `hint` what needs fewer.
    public static func require(_ need: Int, for what: String, hint: String = "") throws {
        guard let b = remaining(), b.left < need else { return }
        let tasks = b.left == 1 ? "thread or process" : "threads or processes"
        throw MediaError("only \(b.left) more \(tasks) may start here (\(b.limit)); \(what) needs \(need)\(hint)")
    }

    /// How many more files (descriptors) this process may open: the soft
    /// `ulimit -n` less those open now; nil when it cannot be read.
    public static func descriptorsLeft() -> (left: Int, limit: Int)? {
        var r = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &r) == 0, r.rlim_cur != rlim_t.max else { return nil }
        guard let dir = opendir("/proc/self/fd") else {
            // No descriptor left even to look: none left.
            return errno == EMFILE ? (0, Int(r.rlim_cur)) : nil
        }
        var open = -1  // the listing's own descriptor
        while let e = readdir(dir) {
            if e.pointee.d_name.0 != 0x2E { open += 1 }  // not "." or ".."
        }
        closedir(dir)
        let limit = Int(clamping: r.rlim_cur)
        return (Swift.max(0, limit - open), limit)
    }

    /// Refuses a run that needs `need` more descriptors where fewer may be
    /// opened (Dispatch traps when it cannot make its event descriptors;
    /// Mesa reports a missing display).
    public static func requireDescriptors(_ need: Int, for what: String) throws {
        guard let d = descriptorsLeft(), d.left < need else { return }
        throw MediaError("only \(d.left) more files may be opened here (ulimit -n \(d.limit)); \(what) needs \(need)")
    }

    /// The address space this process may still map, in bytes: the soft
    /// `ulimit -v` less what is mapped now; nil when there is no limit.
    public static func addressSpaceLeft() -> (left: Int, limit: Int)? {
        var r = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &r) == 0, r.rlim_cur != rlim_t.max else { return nil }
        let limit = Int(clamping: r.rlim_cur)
        guard let size = Posix.statusField("VmSize"), let kb = Int(size.split(separator: " ").first ?? "") else { return nil }
        return (Swift.max(0, limit - kb * 1024), limit)
    }
}
