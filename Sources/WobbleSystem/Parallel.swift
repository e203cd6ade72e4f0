#if canImport(Glibc)
import Glibc
#endif

/// Work split into a fixed number of chunks, run at once where threads can
/// be started: the one way the tool spreads a computation over cores.
///
/// Chunk 0 runs on the calling thread, each other chunk on a thread of its
/// own. A thread that cannot be started (a cgroup's `pids.max`, `ulimit -u`,
/// no memory for its stack) leaves its chunk to the calling thread, which
/// runs it after its own: the work is done either way, and never waits for
/// a thread that will not come (libdispatch's pool retries a refused thread
/// forever, which hung a render under a small `pids.max`). What a chunk
/// computes must not depend on which thread runs it.
public enum Parallel {
    /// Runs `body(0) ... body(chunks - 1)` and returns when all have run.
    public static func run(_ chunks: Int, _ body: (Int) -> Void) {
        guard chunks > 1 else {
            if chunks == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let job = Job(body)
            var started: [pthread_t] = []
            var leftOver: [Int] = []
            for c in 1 ..< chunks {
                if let thread = SystemThread.start({ job.body(c) }) {
                    started.append(thread)
                } else {
                    leftOver.append(c)
                }
            }
            body(0)
            for c in leftOver { body(c) }
            for t in started { pthread_join(t, nil) }
        }
    }

    private final class Job: @unchecked Sendable {
        let body: (Int) -> Void
        init(_ body: @escaping (Int) -> Void) { self.body = body }
    }
}

/// The one way the tool starts a thread of its own: an 8 MiB stack (what
/// the renderers' recursion and the Swift runtime need), `body` run on it.
/// Nil when the system refuses one (a cgroup's `pids.max`, `ulimit -u`, no
/// memory for its stack): the caller then does the work itself.
public enum SystemThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Starts `body` on a thread of its own that nobody joins (a pipe
    /// reader, a watchdog, a job whose end is signalled otherwise); false
    /// when the system refuses a thread, and `body` has not run.
    @discardableResult
    public static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let t = start(body) else { return false }
        pthread_detach(t)
        return true
    }

    /// Runs `work` on a thread with the full stack and waits for it (for a
    /// caller on a small foreign stack, such as a C library's thread); on
    /// the caller's thread when no thread can be started.
    public static func onFullStack<T>(_ work: () -> T) -> T {
        withoutActuallyEscaping(work) { work in
            let slot = ResultSlot(work)
            guard let t = start({ slot.value = slot.work() }) else { return work() }
            pthread_join(t, nil)
            return slot.value ?? work()
        }
    }

    /// Whether the calling thread is the one `identity` was taken on.
    public static func isCurrent(_ identity: Identity) -> Bool {
        pthread_equal(pthread_self(), identity.thread) != 0
    }

    /// Which thread this is (`current`), to tell later whether code runs on it.
    public struct Identity: @unchecked Sendable {
        let thread: pthread_t
        public static var current: Identity { Identity(thread: pthread_self()) }
    }

    static func start(_ body: @escaping () -> Void) -> pthread_t? {
        let context = Unmanaged.passRetained(Body(body))
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        let r = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context.toOpaque())
        pthread_attr_destroy(&attributes)
        guard r == 0 else {
            context.release()
            return nil
        }
        return thread
    }
}

/// A result handed back from a thread that is joined before it is read.
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
    let work: () -> T
    init(_ work: @escaping () -> T) { self.work = work }
}
