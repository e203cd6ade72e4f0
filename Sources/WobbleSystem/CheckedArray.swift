#if canImport(Glibc)
import Glibc
#endif

// Memory whose size comes from the input (a sound's samples): Swift's own
// allocations trap when the system refuses them (`ulimit -v`, a full
// machine), so these go through `malloc`/`realloc`, and a refusal is an
// error the caller turns into one line.

/// The system refused memory: `bytes` more were asked for.
public struct MemoryRefused: Error, Equatable, Sendable, CustomStringConvertible {
    public let bytes: Int
    public init(bytes: Int) { self.bytes = bytes }
    public var description: String { "out of memory (\(MemoryRefused.shown(bytes)) more were refused)" }

    /// `317 MB`, `12 kB`, `40 bytes`.
    public static func shown(_ bytes: Int) -> String {
        if bytes >= 10_000_000 { return "\((bytes + 500_000) / 1_000_000) MB" }
        if bytes >= 10_000 { return "\((bytes + 500) / 1000) kB" }
        return "\(bytes) bytes"
    }
}

/// Room for memory about to be used by many small allocations (Swift
/// arrays, which trap when refused) whose total is known in advance.
public enum CheckedMemory {
    /// Whether `bytes` could be allocated now: they are, and released at
    /// once (large blocks are mapped and unmapped: the address space a
    /// limit such as `ulimit -v` counts).
    public static func ensureRoom(_ bytes: Int) throws {
        guard bytes > 0 else { return }
        guard let p = malloc(bytes) else { throw MemoryRefused(bytes: bytes) }
        free(p)
    }
}

/// Builds a `CheckedArray`: appends grow the storage with `realloc` (by
/// half again, so appending costs amortised O(1); glibc moves large blocks
/// by remapping pages, without a second copy), and a refused growth throws
/// `MemoryRefused`, leaving what was built.
public final class CheckedArrayBuilder<Element: BitwiseCopyable> {
    private var base: UnsafeMutablePointer<Element>?
    public private(set) var count = 0
    private var capacity = 0

    public init() {}

    deinit { free(base) }

    /// Room for `extra` more elements (without appending them).
    public func reserve(_ extra: Int) throws {
        let (needed, overflow) = count.addingReportingOverflow(max(0, extra))
        guard !overflow else { throw MemoryRefused(bytes: Int.max) }
        guard needed > capacity else { return }
        let grown = capacity > Int.max / 3 ? needed : max(needed, capacity + capacity / 2, 1024)
        // Refused: less headroom, then none (the last piece of a long
        // sound may still fit where half as much again does not).
        for n in [grown, max(needed, capacity + capacity / 16), needed] where n <= grown {
            do {
                try resize(to: n)
                return
            } catch is MemoryRefused where n > needed {
                continue
            }
        }
    }

    /// Appends `n` elements that `fill` writes (it is given exactly `n`
    /// uninitialised slots, which it must all write).
    public func append(_ n: Int, _ fill: (UnsafeMutableBufferPointer<Element>) throws -> Void) throws {
        guard n > 0 else { return }
        try reserve(n)
        guard let base else { return }
        try fill(UnsafeMutableBufferPointer(start: base + count, count: n))
        count += n
    }

    /// The elements so far, as an immutable array (the storage is handed
    /// over, trimmed to size; the builder is empty afterwards).
    public func finish() -> CheckedArray<Element> {
        if count < capacity, count > 0 { try? resize(to: count) }
        let a = CheckedArray(taking: base, count: count)
        base = nil
        count = 0
        capacity = 0
        return a
    }

    private func resize(to n: Int) throws {
        let (bytes, overflow) = n.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !overflow else { throw MemoryRefused(bytes: Int.max) }
        guard let p = realloc(base, max(1, bytes)) else {
            throw MemoryRefused(bytes: (n - capacity) * MemoryLayout<Element>.stride)
        }
        base = p.bindMemory(to: Element.self, capacity: n)
        capacity = n
    }
}

/// An immutable array whose storage was allocated through
/// `CheckedArrayBuilder` (or copied from a Swift array): shared by
/// reference, readable from any thread.
public final class CheckedArray<Element: BitwiseCopyable>: RandomAccessCollection, @unchecked Sendable {
    private let base: UnsafeMutablePointer<Element>?
    public let count: Int

    fileprivate init(taking base: UnsafeMutablePointer<Element>?, count: Int) {
        self.base = base
        self.count = count
    }

    /// A copy of `elements` (memory the program already holds: the copy
    /// is checked like any other).
    public static func copy(of elements: [Element]) throws -> CheckedArray {
        let b = CheckedArrayBuilder<Element>()
        try b.append(elements.count) { dst in _ = dst.initialize(from: elements) }
        return b.finish()
    }

    deinit { free(base) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(i: Int) -> Element {
        precondition(i >= 0 && i < count, "index out of range")
        return base![i]
    }

    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }
}

extension CheckedArray: Equatable where Element: Equatable {
    public static func == (a: CheckedArray, b: CheckedArray) -> Bool {
        if a === b { return true }
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.elementsEqual(y) } }
    }
}
