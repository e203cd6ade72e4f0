import WobbleScript

/// Carrying pending sketch edits into a scene text that another program
/// saved meanwhile. A call is found again by its identity — its own text
/// (argument and the name it is assigned to) — never by its position
/// alone: a comment added, another line changed, another sketch edited,
/// lines inserted, deleted or swapped, the local renamed: the edit goes to
/// its own call. A call that is gone, or now in the text more than once,
/// has no counterpart, and an edit of it is never written anywhere.
public enum SourceMerge {
    /// Where a call of one text is in another.
    public enum Found: Equatable, Sendable {
        /// The same call, its own text unchanged (index in the other text).
        case same(Int)
        /// The same call (its argument unchanged, the only one with that
        /// argument in both texts), assigned to another name now.
        case renamed(Int)
        /// The same call by its name (or by its place, for an unnamed call
        /// in a text with as many calls), its argument changed there.
        case changed(Int)
        /// No call of the other text is this one.
        case deleted
        /// The call is in the other text more often than in this one: which
        /// copy is the edited one cannot be told.
        case duplicated

        /// The index in the other text, nil when the call is not found.
        public var index: Int? {
            switch self {
            case .same(let j), .renamed(let j), .changed(let j): return j
            case .deleted, .duplicated: return nil
            }
        }
    }

    /// Every call of `a` (by index in `a.calls`) found in `b`.
    ///
    /// In order of trust: the same text (the k-th of the calls with that
    /// text is the k-th in `b`, when both have as many; more in `b` is a
    /// duplicate); the same argument under another name (that argument
    /// once in each text); the same declared name (once in each text); an
    /// unnamed call at the same place in a text with as many calls, when
    /// the call there is unnamed and matched by nothing else. A call of `b`
    /// is the counterpart of one call of `a` at most.
    public static func match(_ a: SketchSource, _ b: SketchSource) -> [Found] {
        var found = [Found](repeating: .deleted, count: a.calls.count)
        var taken = Set<Int>()
        let idA = a.calls.map { a.identity($0) }, idB = b.calls.map { b.identity($0) }
        // 1. The same text.
        var occurrencesA: [[UInt8]: [Int]] = [:], occurrencesB: [[UInt8]: [Int]] = [:]
        for (i, id) in idA.enumerated() { occurrencesA[id, default: []].append(i) }
        for (j, id) in idB.enumerated() { occurrencesB[id, default: []].append(j) }
        for (id, inA) in occurrencesA {
            let inB = occurrencesB[id] ?? []
            if inB.count == inA.count {
                for (i, j) in zip(inA, inB) { found[i] = .same(j); taken.insert(j) }
            } else if inB.count > inA.count {
                for i in inA { found[i] = .duplicated }
            } else if !inB.isEmpty {
                // Fewer copies than before: which one went cannot be told.
                for j in inB { taken.insert(j) }
            }
        }
        // 2. The same argument, another name.
        func argument(_ s: SketchSource, _ c: SketchSource.Call) -> [UInt8] { Array(s.text[c.argumentSpan]) }
        var argsA: [[UInt8]: [Int]] = [:], argsB: [[UInt8]: [Int]] = [:]
        for (i, c) in a.calls.enumerated() { argsA[argument(a, c), default: []].append(i) }
        for (j, c) in b.calls.enumerated() { argsB[argument(b, c), default: []].append(j) }
        for i in a.calls.indices where found[i] == .deleted {
            let arg = argument(a, a.calls[i])
            guard argsA[arg]?.count == 1, let inB = argsB[arg], inB.count == 1, !taken.contains(inB[0]) else { continue }
            found[i] = .renamed(inB[0])
            taken.insert(inB[0])
        }
        // 3. The same name, another argument.
        func declared(_ s: SketchSource) -> [String: [Int]] {
            var out: [String: [Int]] = [:]
            for (i, c) in s.calls.enumerated() { if let n = c.declaration?.name { out[n, default: []].append(i) } }
            return out
        }
        let namesA = declared(a), namesB = declared(b)
        for i in a.calls.indices where found[i] == .deleted {
            guard let name = a.calls[i].declaration?.name, namesA[name]?.count == 1 else { continue }
            let inB = namesB[name] ?? []
            if inB.count > 1 { found[i] = .duplicated; continue }
            guard inB.count == 1, !taken.contains(inB[0]) else { continue }
            found[i] = .changed(inB[0])
            taken.insert(inB[0])
        }
        // 4. An unnamed call changed in place.
        if a.calls.count == b.calls.count {
            for i in a.calls.indices where found[i] == .deleted && !taken.contains(i) {
                guard a.calls[i].declaration == nil, b.calls[i].declaration == nil, occurrencesA[idB[i]] == nil else { continue }
                found[i] = .changed(i)
                taken.insert(i)
            }
        }
        return found
    }

    /// `call` of `run` (the text the last run read) in `target`, through
    /// `base` (the text the edits were made on): the call itself when its
    /// text is the same in all three (or only its name changed between
    /// them, and `allowRename`: the studio does not rename it), else why not.
    public static func counterpart(of call: SketchSource.Call, in run: SketchSource, through base: SketchSource,
                                   to target: SketchSource, allowRename: Bool = true,
                                   baseIsOwnSave: Bool = false) -> Result<SketchSource.Call, Problem> {
        guard let i = run.index(of: call) else { return .failure(.deleted) }
        let inBase: Int
        switch match(run, base)[i] {
        case .same(let j): inBase = j
        case .renamed(let j):
            guard allowRename || baseIsOwnSave else { return .failure(.renamed) }
            inBase = j
        // `base` is what this session itself saved over `run`: the call's
        // argument changed there by its own edit.
        case .changed(let j) where baseIsOwnSave: inBase = j
        case .changed: return .failure(.changed)
        case .deleted: return .failure(.deleted)
        case .duplicated: return .failure(.duplicated)
        }
        switch match(base, target)[inBase] {
        case .same(let j): return .success(target.calls[j])
        case .renamed(let j): return allowRename ? .success(target.calls[j]) : .failure(.renamed)
        case .changed: return .failure(.changed)
        case .deleted: return .failure(.deleted)
        case .duplicated: return .failure(.duplicated)
        }
    }

    /// Why an edited call has no counterpart in the file.
    public enum Problem: Error, Equatable, Sendable {
        case changed, renamed, deleted, duplicated

        /// What happened to the call on disk, after its name: `body
        /// (scene.lua:3) was deleted on disk`.
        public var phrase: String {
            switch self {
            case .changed: return "was changed on disk as well"
            case .renamed: return "was renamed on disk as well"
            case .deleted: return "was deleted on disk"
            case .duplicated: return "is in the file more than once now (copied on disk)"
            }
        }
    }
}
