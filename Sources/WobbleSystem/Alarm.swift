import Foundation

/// An action due a number of seconds from now on the monotonic clock (a
/// read's deadline, a watchdog), run on the alarm thread unless cancelled
/// first. One thread serves every alarm of the process; it starts with the
/// first. Where no thread can be started (a cgroup's `pids.max`) no alarm
/// fires: the program's own checks of its time are what stop it then.
public final class Alarm: Sendable {
    private let id: Int

    /// Schedules `action` `seconds` from now.
    public init(after seconds: Double, _ action: @escaping @Sendable () -> Void) {
        id = AlarmThread.shared.add(due: monotonic() + max(0, seconds), action)
    }

    /// The action will not run (if it is running, it finishes).
    public func cancel() { AlarmThread.shared.remove(id) }
}

/// The thread that runs alarms when they are due.
private final class AlarmThread: @unchecked Sendable {
    static let shared = AlarmThread()

    private let condition = NSCondition()
    private var due: [Int: (time: Double, action: @Sendable () -> Void)] = [:]
    private var nextID = 0
    private var started = false

    func add(due time: Double, _ action: @escaping @Sendable () -> Void) -> Int {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        due[nextID] = (time, action)
        if !started { started = SystemThread.detach { AlarmThread.shared.serve() } }
        condition.broadcast()
        return nextID
    }

    func remove(_ id: Int) {
        condition.lock()
        due[id] = nil
        condition.unlock()
    }

    private func serve() {
        condition.lock()
        while true {
            let now = monotonic()
            if let (id, next) = due.min(by: { $0.value.time < $1.value.time }).map({ ($0.key, $0.value) }), next.time <= now {
                due[id] = nil
                condition.unlock()
                next.action()
                condition.lock()
                continue
            }
            let wait = due.values.map(\.time).min().map { $0 - now } ?? 3600
            // A relative timeout only: what is due is decided on `monotonic()`.
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(wait, 3600)))
        }
    }
}
