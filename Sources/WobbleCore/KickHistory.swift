/// A model's kicks at one moment of the timeline, sharing storage with the
/// moments before it.
///
/// The timeline records the scene's state at every moment something
/// happened. A spring keeps every kick since it last came to rest, so a
/// model kicked N times at N moments would hold 1, 2, …, N kicks in its N
/// recorded states: N²/2 kicks in memory (8000 impulses cost a gigabyte).
/// A history is instead the first kicks of one append-only log: a kick
/// appended to the newest history extends the log in place, and every
/// recorded state keeps its own count of it, so the timeline holds each kick once. A
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
        /// The first `count` kicks of the log.
        case shared(Log, count: Int)
    }

    private let storage: Storage

    public init(_ kicks: [Impulse]) {
        switch kicks.count {
        case 0: storage = .none
        case 1: storage = .one(kicks[0])
        default: storage = .shared(Log(kicks), count: kicks.count)
        }
    }

    public init(arrayLiteral kicks: Impulse...) { self.init(kicks) }

    private init(_ storage: Storage) { self.storage = storage }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .shared(_, let n): n
        }
    }

    public subscript(i: Int) -> Impulse {
        switch storage {
        case .none: preconditionFailure("KickHistory: index out of range")
        case .one(let k): k
        case .shared(let log, _): log.items[i]
        }
    }

    /// The kicks as an array (for the motion models' closed forms): the
    /// log itself, shared without a copy, when this history is all of it.
    public var array: [Impulse] {
        switch storage {
        case .none: []
        case .one(let k): [k]
        case .shared(let log, let n): n == log.items.count ? log.items : Array(log.items.prefix(n))
        }
    }

    /// This history followed by `kick`: in place at the end of the log when
    /// this is the newest history of it, else in a new log.
    public func appending(_ kick: Impulse) -> KickHistory {
        switch storage {
        case .none:
            return KickHistory(.one(kick))
        case .one(let k):
            return KickHistory(.shared(Log([k, kick]), count: 2))
        case .shared(let log, let n):
            if n == log.items.count {
                log.items.append(kick)
                return KickHistory(.shared(log, count: n + 1))
            }
            return KickHistory(.shared(Log(Array(log.items.prefix(n)) + [kick]), count: n + 1))
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
        if case .shared(let la, let na) = a.storage, case .shared(let lb, let nb) = b.storage, la === lb, na == nb {
            return true
        }
        return a.count == b.count && a.elementsEqual(b)
    }
}
