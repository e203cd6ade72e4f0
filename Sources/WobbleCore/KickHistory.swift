/// A model's kicks at one moment of the timeline, sharing storage with the
/// moments before it.
///
/// The timeline records the scene's state at every moment something
/// happened. A spring keeps every kick since it last came to rest, so a
/// model kicked N times at N moments would hold 1, 2, …, N kicks in its N
/// recorded states: N²/2 kicks in memory (8000 impulses cost a gigabyte).
/// A history is instead a range of one append-only log: a kick appended to
/// the newest history extends the log in place, and every recorded state
/// keeps its own range of it, so the timeline holds each kick once. A
/// history of one kick (the classic model's) is stored inline.
///
/// The log is only appended to while the scene runs on one thread; a clip's
/// histories are read, never changed, once the script has returned.
public struct KickHistory: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The shared storage (append-only).
    final class Log: @unchecked Sendable {
        var items: [Impulse]
        init(_ items: [Impulse]) { self.items = items }
    }

    private enum Storage {
        case none
        case one(Impulse)
        case shared(Log, Range<Int>)
    }

    private let storage: Storage

    public init(_ kicks: [Impulse]) {
        switch kicks.count {
        case 0: storage = .none
        case 1: storage = .one(kicks[0])
        default: storage = .shared(Log(kicks), 0..<kicks.count)
        }
    }

    public init(arrayLiteral kicks: Impulse...) { self.init(kicks) }

    private init(_ storage: Storage) { self.storage = storage }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .shared(_, let r): r.count
        }
    }

    public subscript(i: Int) -> Impulse {
        switch storage {
        case .none: preconditionFailure("KickHistory: index out of range")
        case .one(let k): k
        case .shared(let log, let r): log.items[r.lowerBound + i]
        }
    }

    /// The kicks as an array (for the motion models' closed forms).
    public var array: [Impulse] {
        switch storage {
        case .none: []
        case .one(let k): [k]
        case .shared(let log, let r): Array(log.items[r])
        }
    }

    /// This history followed by `kick`: in place at the end of the log when
    /// this is the newest history of it, else in a new log.
    public func appending(_ kick: Impulse) -> KickHistory {
        switch storage {
        case .none:
            return KickHistory(.one(kick))
        case .one(let k):
            return KickHistory(.shared(Log([k, kick]), 0..<2))
        case .shared(let log, let r):
            if r.upperBound == log.items.count {
                log.items.append(kick)
                return KickHistory(.shared(log, r.lowerBound..<(r.upperBound + 1)))
            }
            return KickHistory(.shared(Log(Array(log.items[r]) + [kick]), 0..<(r.count + 1)))
        }
    }

    /// The history a motion model made of this one after `kick`
    /// (`MotionModel.adding`, which either keeps the kicks it was given and
    /// appends `kick`, or returns other kicks): kept as `appending` in the
    /// first case, stored anew in the second. Also returns how many kicks
    /// were newly stored (for the scene's memory budget).
    public func after(_ kick: Impulse, becoming kicks: [Impulse]) -> (history: KickHistory, stored: Int) {
        let n = count
        if kicks.count == n + 1, kicks[n] == kick, n == 0 || kicks[n - 1] == self[n - 1] {
            return (appending(kick), 1)
        }
        return (KickHistory(kicks), kicks.count)
    }

    public static func == (a: KickHistory, b: KickHistory) -> Bool {
        if case .shared(let la, let ra) = a.storage, case .shared(let lb, let rb) = b.storage, la === lb, ra == rb {
            return true
        }
        return a.count == b.count && a.elementsEqual(b)
    }
}
