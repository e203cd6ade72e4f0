import WobbleCore
import WobbleEngine
import WobbleSystem

/// The studio core's edit commands: saving, undo, adds, handle drags, selection, the inspector and renaming, quitting with unsaved edits.
extension StudioCore {
    /// Does one of the edit commands (`StudioCommand.Area.edit`); true when the studio quits now.
    func performEdit(_ command: StudioCommand) -> Bool {
        switch command {
        case .quit(let closing):
            return askQuit(closing: closing)
        case .answerQuit(let a):
            switch quitGuard.answer(a) {
            case .quit: return true
            case .saveAndQuit:
                if save() { return true }
                quitGuard.asking = false
            case .back:
                say("back to editing")
            }
        case .backToEditing:
            if quitGuard.asking { quitGuard.asking = false; say("back to editing") }
        case .save:
            save()
        case .undo:
            editor.undoLast()
        case .redo:
            editor.redoNext()
        case .add(let p):
            if let added = editor.add(at: p) { inspector.select(added, quiet: true) }
        case .grab(let p, let radius):
            guard let hit = grabbable(at: p, radius: radius) else { break }
            if let kind = hit.origin?.kind, kind != inspector.selected { inspector.select(kind) }
            editor.beginDrag(hit.origin, handle: hit.handle)
        case .dragTo(let p):
            editor.moveDrag(to: p)
        case .dragEnd:
            editor.endDrag()
        case .select(let p, let radius):
            if let m = inspector.selectRegion(at: p, radius: radius, frame: currentIndex) { say(m) }
        case .selectNext(let d):
            if let m = inspector.selectNext(d, frame: currentIndex) { say(m) }
        case .focusRow(let d):
            inspector.focus(by: d)
        case .stepParameter(let n):
            inspector.step(n)
        case .setParameter(let key, let value):
            if !inspector.set(parameter: key, to: value) { fail("no parameter '\(key)' (\(InspectorRow.specs.map(\.key).joined(separator: ", ")))") }
        case .setMotion(let name):
            if let m = inspector.motions.kind(named: name) { inspector.setMotion(m) } else { fail("no motion '\(name)' (\(inspector.motions.namesText))") }
        case .setPin(let p):
            inspector.setPin(p)
        case .startRename:
            inspector.startRenaming()
        case .type(let t):
            if inspector.isRenaming { inspector.type(t); dirty = true }
        case .renameBackspace:
            inspector.backspace()
        case .renameCaret(let d):
            inspector.moveCaret(by: d)
        case .commitRename:
            inspector.commitRenaming()
        case .cancelRename:
            inspector.cancelRenaming()
        case .rename(let name):
            inspector.rename(to: name)
        case .inspectorPress(let row, let choice, let fraction):
            inspector.press(row: row, choice: choice, fraction: fraction)
        case .inspectorSlide(let f):
            if inspector.isScrubbing { inspector.slide(to: f); dirty = true }
        case .inspectorRelease:
            inspector.release()
        default:
            break  // another area's (`perform` dispatches by `StudioCommand.area`)
        }
        return false
    }

    /// Writes the edits into the scene; true when it wrote them.
    @discardableResult
    func save() -> Bool {
        dirty = true
        guard editor.save(sceneName: sceneName) else { return false }
        // The saved scene's run says how it went on stderr too, even when
        // an edit's run said the same before.
        lastPrintedError = nil
        // The files written (the scene, its masks) are not a change to
        // reload for; the saved scene runs off the caller's thread.
        watch.reset(extra: session.inputs + session.savedMasks)
        requestRun()
        return true
    }

    /// `Esc` or the window's close: quits at once without unsaved edits;
    /// with them, asks first (true: quit now).
    func askQuit(closing: Bool) -> Bool {
        // The scene file is gone: the edits go beside it, and the studio quits.
        if session.hasUnsavedEdits, session.sceneFileIsGone, !quitGuard.asking {
            if editor.keepUnsaved(sceneName: sceneName) != nil { return true }
        }
        guard let question = quitGuard.ask(unsavedEdits: editor.editedNames, closing: closing) else {
            return true
        }
        fail(question)
        if verbose { printError("studio: asking before quitting (unsaved edits)") }
        return false
    }

    /// The handle a press at `p` grabs (within `radius`), when a drag may
    /// begin there: a clip, the handles shown, no take being recorded.
    package func grabbable(at p: Point, radius: Double) -> (origin: SketchOrigin?, handle: Int)? {
        guard session.clip != nil, handles, !recorder.isRecording else { return nil }
        return editor.handleHit(at: p, radius: radius, frame: currentIndex)
    }

    /// `Delete` with a region selected (and no tick): the region is
    /// deleted (`SketchEditor.delete`), not while its cutout is computed.
    /// False when none is selected.
    func deleteSelectedRegion() -> Bool {
        guard let kind = inspector.selected else { return false }
        guard !cutouts.isComputing else {
            editor.status("a cutout is being computed: Delete when it is done", true)
            return true
        }
        if editor.delete(kind) { inspector.select(nil, quiet: true) }
        return true
    }
}
