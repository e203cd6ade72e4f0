/// Quitting with unsaved edits: the first `Esc` (or window close) asks in
/// the window; then `Esc` or close again quits without saving, `Ctrl+S`
/// saves and quits, any other key (or a click) goes back to editing.
struct QuitGuard {
    /// The question is on screen.
    var asking = false

    enum Answer { case quit, saveAndQuit, back }

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
