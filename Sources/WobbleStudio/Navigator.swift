import Foundation

/// Zooming and panning the picture: the wheel zooms around the mouse, a
/// middle-button drag or a drag with `Space` held pans, `F` fits the
/// picture into its area. `Space` still plays and pauses: it toggles when
/// pressed, and a drag while it is held pans and gives that toggle back
/// (the clip plays or stays paused as before the press). The view it keeps
/// is applied by `Layout`; this type only follows the input.
struct Navigator {
    /// How the picture sits (nil zoom: fitted, never enlarged).
    var view = PictureView()
    /// A pan in progress: where it started and the view then.
    private var pan: (x: Int, y: Int, from: PictureView)?
    /// The last key was Space (its play toggle may be given back by a pan).
    private var spaceToggled = false
    /// One wheel notch zooms by this factor.
    static let wheelFactor = 1.25

    var isPanning: Bool { pan != nil }

    /// Space pressed (it toggled play/pause).
    mutating func spacePressed() { spaceToggled = true }

    /// Another key pressed.
    mutating func otherKey() { spaceToggled = false }

    /// Starts a pan at `(x, y)`; true when the Space press's toggle must be
    /// given back (`space`: the pan is a drag with Space held).
    mutating func beginPan(_ x: Int, _ y: Int, layout: Layout, space: Bool) -> Bool {
        pan = (x, y, layout.placedView)
        defer { spaceToggled = false }
        return space && spaceToggled
    }

    /// The view as the pan has it with the mouse at `(x, y)`; nil when no pan runs.
    func panned(_ x: Int, _ y: Int, layout: Layout) -> PictureView? {
        guard let p = pan else { return nil }
        return layout.panned(from: p.from, by: x - p.x, y - p.y)
    }

    mutating func endPan() { pan = nil }

    /// The view after `steps` wheel notches at `(x, y)`.
    func wheel(_ steps: Double, at x: Int, _ y: Int, layout: Layout) -> PictureView {
        layout.zoomed(by: pow(Navigator.wheelFactor, Swift.max(-20, Swift.min(20, steps))), around: x, y)
    }
}
