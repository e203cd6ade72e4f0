import WobbleStudioCore

/// One input event of the window, as a surface hands it to the studio
/// (the SDL window translates its events into these; tests script them).
enum StudioInput: Equatable {
    case quit
    case key(StudioKey, shift: Bool, ctrl: Bool)
    case mouseDown(x: Int, y: Int)
    case mouseMove(x: Int, y: Int)
    case mouseUp(x: Int, y: Int)
    /// The wheel turned by `steps` notches (positive: away from the user)
    /// with the mouse at `(x, y)`.
    case wheel(x: Int, y: Int, steps: Double)
    /// A pan starts: the middle button pressed, or the left one with
    /// `Space` held (`space`); it ends with that button's release.
    case panStart(x: Int, y: Int, space: Bool)
    case panEnd(x: Int, y: Int)
    /// A Ctrl+click or a right click: selects the region there (no poke, no drag).
    case select(x: Int, y: Int)
    /// A left press with `Shift` (`object`) or `Alt` held: a stroke on the
    /// selected region's cutout (or, with `Shift` and no drag, a click that
    /// adds a region around the object there); it goes on with `mouseMove`
    /// and ends with `mouseUp`.
    case strokeStart(x: Int, y: Int, object: Bool)
    /// Text typed (SDL's text input: the characters, after the keyboard layout).
    case text(String)
    /// A game controller's accelerometer, in g (SDL's axes: x right, y up).
    case accel(x: Double, y: Double, z: Double)
    /// The window needs drawing again (exposed).
    case redraw
    /// The window was resized (by a window manager or another program) to
    /// this size in window pixels.
    case resized(width: Int, height: Int)
    /// The window no longer exists (another program destroyed it).
    case windowGone
}

/// One close of the window is one request to quit. SDL tells a close
/// (the window manager's close button, `WM_DELETE_WINDOW`) twice: the
/// window's close event, then a quit event because it was the last window,
/// both in the same batch of events. Counted as two, the first would ask
/// "close again quits without saving" and the second would answer it,
/// quitting without saving. (`StudioWindow.initialise` also asks SDL not to
/// send that quit event; this holds where an SDL ignores the hint.)
struct CloseRequests {
    private var closedInBatch = false

    /// A new batch of events begins (`StudioWindow.events`).
    mutating func newBatch() { closedInBatch = false }

    /// The `.quit` an event stands for: a window's close (`windowClose`)
    /// always; SDL's quit event only when no window's close came before it
    /// in this batch (else nil: the same request).
    mutating func quit(windowClose: Bool) -> StudioInput? {
        if windowClose {
            closedInBatch = true
            return .quit
        }
        return closedInBatch ? nil : .quit
    }
}
