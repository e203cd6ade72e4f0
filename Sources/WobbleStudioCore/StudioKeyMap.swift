import WobbleCore

/// Keys the studio reacts to (a page sends their names: `"a"`, `"left"`, `"pageUp"`).
package enum StudioKey: String, Codable, Equatable, Sendable {
    case space, left, right, up, down, home, h, r, a, s, z, escape, backspace, other
    /// `F` fits the picture, `E` exports the scene's output, `P` writes the
    /// frame shown as a PNG, `F1` or `?` shows every key.
    case f, e, p, help
    case tab, minus, plus, enter, y, pageUp, pageDown
    /// `L` switches `loop()`, `B` bakes the take's pokes into the scene,
    /// `Delete` (or `Backspace`) deletes the selected tick, else the
    /// selected region, else forgets the pokes.
    case l, b, delete
    /// `M` mutes or unmutes the soundtrack.
    case m
    /// `C` cuts out the selected region.
    case c
    /// `O` starts a magnetic outline (clicks along an object's edge), and
    /// closes it.
    case o
}

/// The window's keys as the studio core's commands: which command a key
/// is, in each state the window can be in (the question before quitting,
/// a name being typed, the export chooser, the inspector, the rest). The
/// core knows commands, not keys; the keys' help (`HelpSheet`) lists these.
package enum StudioKeyMap {
    /// The answer a key gives to the question before quitting: `Esc`
    /// quits, `Ctrl+S` saves and quits, any other key goes back.
    package static func answer(_ key: StudioKey, ctrl: Bool) -> QuitGuard.Answer {
        switch key {
        case .escape: return .quit
        case .s where ctrl: return .saveAndQuit
        default: return .back
        }
    }

    /// A key while a name is typed: `Enter` keeps it, `Esc` leaves it,
    /// `Backspace` deletes, `Left`/`Right` move the caret (the characters
    /// come as text).
    package static func renaming(_ key: StudioKey) -> StudioCommand? {
        switch key {
        case .enter: return .commitRename
        case .escape: return .cancelRename
        case .backspace: return .renameBackspace
        case .left: return .renameCaret(by: -1)
        case .right: return .renameCaret(by: 1)
        default: return nil
        }
    }

    /// A key while the `Shift+E` chooser is open: `Up`/`Down` (or `Tab`)
    /// move, `Enter` exports, any other key closes it (nil: a key whose
    /// character comes as text, a digit choosing its row).
    package static func choosing(_ key: StudioKey) -> StudioCommand? {
        switch key {
        case .up: return .chooserMove(-1)
        case .down, .tab: return .chooserMove(1)
        case .enter: return .chooserChoose(nil)
        case .other: return nil
        default: return .chooserCancel
        }
    }

    /// Text typed: characters of a name being typed, a row number of the chooser.
    package static func commands(text: String, renaming: Bool, choosing: Bool) -> [StudioCommand] {
        var out: [StudioCommand] = []
        if renaming { out.append(.type(text)) }
        if choosing, let n = Int(text), n >= 1, n <= PresetChooser.choices.count { out.append(.chooserChoose(n - 1)) }
        return out
    }

    /// The inspector's keys (without `Ctrl`, not while recording): `Tab`
    /// the next region, `Up`/`Down` a row (with a region selected),
    /// `-`/`+` and `PageDown`/`PageUp` a step or ten, `Enter` renames.
    /// (`+` is Shift+`=` on many keyboards: Shift makes no difference.)
    package static func inspecting(_ key: StudioKey, shift: Bool, selected: Bool) -> StudioCommand? {
        switch key {
        case .tab: return .selectNext(shift ? -1 : 1)
        case .up where selected && !shift: return .focusRow(by: -1)
        case .down where selected && !shift: return .focusRow(by: 1)
        case .minus: return .stepParameter(-1)
        case .plus: return .stepParameter(1)
        case .pageDown: return .stepParameter(-10)
        case .pageUp: return .stepParameter(10)
        case .enter: return .startRename
        default: return nil
        }
    }

    /// `Shift` + an arrow: a shake of 1.5 g that way (y up).
    package static func shake(_ key: StudioKey) -> StudioCommand? {
        let g = 1.5
        switch key {
        case .left: return .shake(ax: -g, ay: 0)
        case .right: return .shake(ax: g, ay: 0)
        case .up: return .shake(ax: 0, ay: g)
        case .down: return .shake(ax: 0, ay: -g)
        default: return nil
        }
    }

    /// A key as the studio in its state now takes it (nil: nothing): the
    /// answer to the question before quitting, a name's editing, the
    /// export chooser's, the inspector's keys (without `Ctrl`, not while
    /// recording), `Shift`+arrows' shakes, then `command`. A front end
    /// looks at its own keys first (the window's `F` and `F1`, a page's
    /// transport); `addAt` says where `A` adds a region.
    package static func command(for key: StudioKey, shift: Bool, ctrl: Bool, in core: StudioCore, addAt: () -> Point) -> StudioCommand? {
        if core.isAskingToQuit { return .answerQuit(answer(key, ctrl: ctrl)) }
        if core.inspector.isRenaming { return renaming(key) }
        if core.chooser != nil { return choosing(key) }
        if !ctrl && !core.recorder.isRecording,
           let c = inspecting(key, shift: shift, selected: core.inspector.selected != nil) {
            return c
        }
        if shift, let c = shake(key) { return c }
        return command(key, shift: shift, ctrl: ctrl, addAt: addAt)
    }

    /// Every other key (`F`, zoom, and `F1`, the help, are the window's own).
    /// `addAt` says where `A` adds a region.
    package static func command(_ key: StudioKey, shift: Bool, ctrl: Bool, addAt: () -> Point) -> StudioCommand {
        switch key {
        case .escape: return .quit(closing: false)
        case .r: return .toggleRecording
        case .h: return .toggleHandles
        case .e where shift: return .openExportChooser
        case .e: return .export(preset: nil)
        case .p: return .writeStill
        case .s where ctrl: return .save
        case .z where ctrl: return shift ? .redo : .undo
        case .y where ctrl: return .redo
        case .a where !ctrl: return .add(at: addAt())
        case .space: return .togglePlay
        case .left: return .step(-1)
        case .right: return .step(1)
        case .home: return .home
        case .m where !ctrl: return .toggleMute
        case .l where !ctrl: return .toggleLoop
        case .c where !ctrl: return .cutOut
        case .o where !ctrl: return .outline
        case .b where !ctrl: return .bake
        case .delete, .backspace: return .deleteSelected
        default: return .unbound
        }
    }
}
