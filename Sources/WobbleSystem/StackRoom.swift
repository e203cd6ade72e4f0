internal import CWobbleSys
#if canImport(Glibc)
import Glibc
#endif

/// The stack a run has: a stack limit (`ulimit -s`) far below the usual
/// 8 MiB crashed the tool with SIGSEGV (32 KiB: Mesa's shader compiler on
/// the GLES path, the PNG encoder threads; 128 KiB: a scene nesting
/// `pcall` 180 deep), and glibc gives every thread a stack of that size.
///
/// `run` gives the tool the usual room whatever the limit: it raises the
/// soft limit as far as the hard one allows (the main thread's stack grows
/// up to it, and children such as ffmpeg inherit it), sets the stack size
/// of the threads started from then on (llvmpipe's, the encoders',
/// Dispatch's), and where the hard limit is still too small runs the tool
/// on a thread with a stack of its own. A child that must live with a
/// hard limit is checked before it starts (`requireForChild`).
public enum StackRoom {
    /// The stack the tool runs with: the usual default (Lua's 200 nested C
    /// calls take about 250 KiB, Mesa's compiler less).
    public static let needed = 8 << 20

    /// The soft and hard stack limits in bytes (nil: unlimited).
    public static func limits() -> (soft: Int?, hard: Int?) {
        var r = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &r) == 0 else { return (nil, nil) }
        func bytes(_ v: rlim_t) -> Int? { v == rlim_t.max ? nil : Int(clamping: v) }
        return (bytes(r.rlim_cur), bytes(r.rlim_max))
    }

    /// `ulimit -s N` as a person types it (KiB), or `unlimited`.
    static func shown(_ bytes: Int?) -> String { bytes.map { "ulimit -s \($0 >> 10)" } ?? "ulimit -s unlimited" }

    /// Runs `body` (the whole tool) with at least `needed` bytes of stack
    /// and returns its status. When no thread can be started for it under a
    /// hard limit that is too small, prints one line and returns 1.
    public static func run(_ body: @escaping () -> Int32) -> Int32 {
        let (soft, hard) = limits()
        guard let soft, soft < needed else { return body() }
        let raised = hard.map { min($0, needed) } ?? needed
        if raised > soft {
            var r = rlimit()
            if getrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &r) == 0 {
                r.rlim_cur = rlim_t(raised)
                _ = setrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &r)
            }
        }
        // Threads get their stack size from the limit read at start-up.
        _ = wobble_thread_default_stack(needed)
        if let now = limits().soft, now < needed {
            final class Call {
                let body: () -> Int32
                init(_ body: @escaping () -> Int32) { self.body = body }
            }
            let call = Unmanaged.passRetained(Call(body))
            defer { call.release() }
            var status: Int32 = 1
            let e = wobble_run_on_stack(needed, { context in
                Unmanaged<Call>.fromOpaque(context!).takeUnretainedValue().body()
            }, call.toOpaque(), &status)
            guard e == 0 else {
                printError("wobble-run: the stack limit (\(shown(now))) is too small to run in (it needs \(needed >> 10) KiB), and no thread with a stack of its own could be started (\(String(cString: strerror(e))))")
                return 1
            }
            return status
        }
        return body()
    }

    /// Refuses to start `what` (a program such as ffmpeg, which inherits
    /// the stack limit and crashes below it) when the limit children get
    /// is below `bytes`.
    public static func requireForChild(_ bytes: Int, for what: String) throws {
        guard let soft = limits().soft, soft < bytes else { return }
        throw MediaError("the stack limit (\(shown(soft))) is too small for \(what), which needs at least \(bytes >> 10) KiB (ulimit -s \(bytes >> 10) or more)")
    }
}
