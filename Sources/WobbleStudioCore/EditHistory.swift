import WobbleEngine
import WobbleScript

/// Undo and redo of the studio's sketch edits, across saves. Each step is
/// kept as the edits then and the sketches of the text they were made on
/// (by call): a step restored after a save (the file now holds other
/// values) becomes edits that give those sketches again, so the next save
/// writes them back. A save that added regions, or wrote the scene's own
/// edits (`loop()`, a baked block, kicks deleted), is a wall: stepping back
/// past it would need the added lines taken out of the file.
package struct EditHistory {
    package struct Step: Equatable {
        package var edits: SketchEdits
        /// The sketch each call's own text made when the step was taken.
        package var base: [Int: SketchState]
        /// A save undo cannot step back past (it stops here): what to say.
        package var wall: String?
    }
    package private(set) var undoSteps: [Step] = []
    package private(set) var redoSteps: [Step] = []

    /// Records the state before a change (drops what could be redone).
    package mutating func record(_ edits: SketchEdits, base: [Int: SketchState]) {
        undoSteps.append(Step(edits: edits, base: base))
        redoSteps.removeAll()
    }

    /// Records a save that stepping back cannot undo, and what to say then.
    package mutating func recordWall(_ message: String) {
        undoSteps.append(Step(edits: SketchEdits(), base: [:], wall: message))
        redoSteps.removeAll()
    }

    package var canUndo: Bool { !undoSteps.isEmpty }
    package var canRedo: Bool { !redoSteps.isEmpty }

    /// The step before now (the current state is kept for redo); a wall
    /// stays and is returned as it is.
    package mutating func undo(current: SketchEdits, base: [Int: SketchState]) -> Step? {
        guard let last = undoSteps.last else { return nil }
        if last.wall != nil { return last }
        undoSteps.removeLast()
        redoSteps.append(Step(edits: current, base: base))
        return last
    }

    package mutating func redo(current: SketchEdits, base: [Int: SketchState]) -> Step? {
        guard let next = redoSteps.popLast() else { return nil }
        undoSteps.append(Step(edits: current, base: base))
        return next
    }

    /// Another program saved the scene: every step follows its calls to
    /// their new places, and a call that step had as the text made it
    /// before that save is taken as the new text makes it (stepping back
    /// undoes the studio's edits, not the other program's change).
    package mutating func follow(_ moved: LiveSession.CallsMoved) {
        func follow(_ step: Step) -> Step {
            guard step.wall == nil else { return step }
            var out = step
            out.edits.calls = [:]
            // An edit of a call that is gone (or copied) goes with it: never
            // onto the call that has its number now.
            for (n, s) in step.edits.calls { if let m = moved.ordinals[n] { out.edits.calls[m] = s } }
            out.edits.deleted = Set(step.edits.deleted.compactMap { moved.ordinals[$0] })
            var back: [Int: Int] = [:]
            for (n, m) in moved.ordinals { back[m] = n }
            out.base = [:]
            for (m, now) in moved.newBase {
                if let n = back[m], let was = step.base[n], was != moved.oldBase[n] {
                    out.base[m] = was
                } else {
                    out.base[m] = now
                }
            }
            return out
        }
        undoSteps = undoSteps.map(follow)
        redoSteps = redoSteps.map(follow)
    }

    /// The edits that give `step`'s sketches on a text whose calls make
    /// `now`: its own edits, plus each call whose text changed since (a
    /// save, a merge) set back to what the step's text made. nil when the
    /// calls are not the same ones (another number of them).
    package static func resolve(_ step: Step, now: [Int: SketchState]) -> SketchEdits? {
        guard step.base.count == now.count || step.base.isEmpty else { return nil }
        var edits = step.edits
        for (n, was) in step.base where edits.calls[n] == nil && now[n] != was {
            edits.calls[n] = was
        }
        // An edit equal to what the text makes now is no edit.
        for (n, s) in edits.calls where now[n] == s { edits.calls[n] = nil }
        return edits
    }
}
