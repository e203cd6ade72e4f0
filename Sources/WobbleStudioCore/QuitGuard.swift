/// Quitting with unsaved edits: the first `Esc` (or window close) asks in
/// the window; then `Esc` or close again quits without saving, `Ctrl+S`
/// saves and quits, any other key (or a click) goes back to editing.
/// (The keys are the window's key map; here the answers.)
package struct QuitGuard {
    /// The question is on screen.
    package var asking = false

    /// What the question was answered with (a front end maps its keys:
    /// the window's `Esc` quits, `Ctrl+S` saves and quits, any other key
    /// goes back).
    package enum Answer: String, Codable { case quit, saveAndQuit, back }

    /// `Esc` or close with unsaved edits of the sketches `names`: nil to
    /// quit now (none, or the second time), else the question to show
    /// (asked from now on), naming them (three at most, then a count).
    package mutating func ask(unsavedEdits names: [String], closing: Bool) -> String? {
        let n = names.count
        guard n > 0, !asking else { return nil }
        asking = true
        let shown = names.prefix(3).joined(separator: ", ") + (n > 3 ? " and \(n - 3) more" : "")
        return "\(n) unsaved edit\(n == 1 ? "" : "s") (\(shown)): \(closing ? "close" : "Esc") again quits without saving, "
            + "Ctrl+S saves and quits, any other key goes back"
    }

    /// The question was answered (it is then off screen).
    package mutating func answer(_ a: Answer) -> Answer {
        asking = false
        return a
    }
}
