import Foundation

/// Results filled in by concurrent workers, one slot each.
final class ResultSlots<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [T]
    init(_ n: Int, initial: T) { slots = Array(repeating: initial, count: n) }
    func set(_ i: Int, _ v: T) { lock.lock(); slots[i] = v; lock.unlock() }
    func get(_ i: Int) -> T { lock.lock(); defer { lock.unlock() }; return slots[i] }
}
