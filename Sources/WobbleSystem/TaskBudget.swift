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
        tightestCgroup(v1: "pids") { dir, path in
            guard let max = number(dir + "/pids.max"), let current = number(dir + "/pids.current") else { return nil }
            return (Swift.max(0, max - current), "pids.max \(max) of the cgroup \(path)")
        }
    }

    /// The least of `left` over this process's cgroup and its ancestors
    /// (cgroup v2, and v1's hierarchy of `controller`): `left` is given a
    /// cgroup's folder and path and says what is left there, and why.
    private static func tightestCgroup(v1 controller: String, _ left: (_ dir: String, _ path: String) -> (Int, String)?) -> (left: Int, limit: String)? {
        guard let text = try? Posix.readFile("/proc/self/cgroup") else { return nil }
        var best: (left: Int, limit: String)?
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            // "0::/a/b" (v2) or "8:pids:/a/b" (v1).
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let root: String
            if parts[0] == "0" && parts[1].isEmpty {
                root = "/sys/fs/cgroup"
            } else if parts[1].split(separator: ",").contains(Substring(controller)) {
                root = "/sys/fs/cgroup/" + controller
            } else {
                continue
            }
            var path = String(parts[2])
            while true {
                if let l = left(root + (path == "/" ? "" : path), path), best.map({ l.0 < $0.left }) ?? true {
                    best = l
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

    /// The memory this process may still use, in bytes, and what limits
    /// it: the least of the system's available memory (`MemAvailable`), a
    /// cgroup's memory limit less what the cgroup uses (its reclaimable
    /// file cache counted as free), and the address space left
    /// (`ulimit -v`); nil when none can be read.
    public static func memoryLeft() -> (left: Int, limit: String)? {
        var best: (left: Int, limit: String)?
        func consider(_ c: (left: Int, limit: String)?) {
            if let c, best.map({ c.left < $0.left }) ?? true { best = c }
        }
        if let text = try? Posix.readFile("/proc/meminfo") {
            for line in String(decoding: text, as: UTF8.self).split(separator: "\n") where line.hasPrefix("MemAvailable:") {
                if let kb = Int(line.dropFirst(13).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") {
                    consider((kb * 1024, "the system's available memory"))
                }
            }
        }
        consider(tightestCgroup(v1: "memory") { dir, path in
            // v2: memory.max, memory.current; v1: memory.limit_in_bytes, memory.usage_in_bytes.
            let v2 = number(dir + "/memory.max").map { ($0, number(dir + "/memory.current"), "memory.max") }
            let v1 = number(dir + "/memory.limit_in_bytes").map { ($0, number(dir + "/memory.usage_in_bytes"), "memory.limit_in_bytes") }
            guard let (max, current, name) = v2 ?? v1, let current, max < 1 << 60 else { return nil }
            let cache = statField(dir + "/memory.stat", v2 != nil ? "inactive_file" : "total_inactive_file") ?? 0
            return (Swift.max(0, max - current + cache), "\(name) \(max) of the cgroup \(path)")
        })
        consider(addressSpaceLeft().map { ($0.left, "ulimit -v \($0.limit >> 10)") })
        return best
    }

    /// Refuses work that needs about `need` bytes of memory where less is
    /// left (`memoryLeft`): `what` says what needs it, `hint` what needs less.
    public static func requireMemory(_ need: Int, for what: String, hint: String = "") throws {
        guard let m = memoryLeft(), m.left < need else { return }
        throw MediaError("\(what) needs about \(bytesShown(need)) of memory, and \(bytesShown(m.left)) are left (\(m.limit))\(hint)")
    }

    /// `n` bytes as a person reads them: `5.1 GiB`, `740 MiB`.
    public static func bytesShown(_ n: Int) -> String {
        n >= 1 << 30 ? String(format: "%.1f GiB", Double(n) / Double(1 << 30)) : "\(n >> 20) MiB"
    }

    /// The number after `key` in a `key value` file (`memory.stat`).
    private static func statField(_ path: String, _ key: String) -> Int? {
        guard let bytes = try? Posix.readFile(path) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 2, f[0] == key { return Int(f[1]) }
        }
        return nil
    }
}
