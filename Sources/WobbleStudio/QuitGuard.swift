/// Quitting with unsaved edits: the first `Esc` (or window close) asks in
/// the window; then `Esc` or close again quits without saving, `Ctrl+S`
/// saves and quits, any other key (or a click) goes back to editing.
struct QuitGuard {
    /// The question is on screen.
    var asking = false

    enum Answer { case quit, saveAndQuit, back }

    /// `Esc` or close with `n` unsaved edits: nil to quit now (none, or the
    /// second time), else the question to show (asked from now on).
    mutating func ask(unsavedEdits n: Int, closing: Bool) -> String? {
        guard n > 0, !asking else { return nil }
        asking = true
        return "\(n) unsaved edit\(n == 1 ? "" : "s"): \(closing ? "close" : "Esc") again quits without saving, "
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
