/// Quitting with unsaved edits: the first `Esc` (or window close) asks in
/// the window; then `Esc` or close again quits without saving, `Ctrl+S`
/// saves and quits, any other key (or a click) goes back to editing.
struct QuitGuard {
    /// The question is on screen.
    var asking = false

    enum Answer { case quit, saveAndQuit, back }

    /// `Esc` or close with unsaved edits of the sketches `names`: nil to
    /// quit now (none, or the second time), else the question to show
    /// (asked from now on), naming them (three at most, then a count).
    mutating func ask(unsavedEdits names: [String], closing: Bool) -> String? {
        let n = names.count
        guard n > 0, !asking else { return nil }
        asking = true
        let shown = names.prefix(3).joined(separator: ", ") + (n > 3 ? " and \(n - 3) more" : "")
        return "\(n) unsaved edit\(n == 1 ? "" : "s") (\(shown)): \(closing ? "close" : "Esc") again quits without saving, "
            + "Ctrl+S saves and quits, any other key goes back"
    }

    /// The answer a key gives (the question is then off screen).
    mutating func answer(_ key: StudioKey, ctrl: Bool) -> Answer {
        asking = false
        switch key {
        case .escape: return .quit
        case .s where ctrl: return .saveAndQuit
        default: return .back
        }
    }
}
