/// A touch or shake performed live (the studio's pokes), applied to a scene
/// when its clock reaches the event's time, like a trace sample.
public struct PerformedEvent: Sendable, Equatable, Codable {
    /// What was performed.
    public enum Action: Sendable, Equatable, Codable {
        /// `touch(x0, y0, x1, y1)`: a drag in image pixels.
        case touch(from: Point, to: Point)
        /// `shake(ax, ay)`: an accelerometer sample in g, device axes (y up).
        /// Applied whether or not the script called `enableMotion()`.
        case shake(ax: Double, ay: Double)
    }

    /// Where `time` counts from.
    public enum Anchor: Sendable, Equatable, Codable {
        /// Scene time: the event happens at `time` while the script runs
        /// (or after it, extending the clip).
        case start
        /// Seconds after the script returned (a take recorded past the end
        /// of the scripted clip): applied by `Scene.finish()`.
        case end
    }

    public var time: Double
    public var anchor: Anchor
    public var action: Action

    public init(time: Double, anchor: Anchor = .start, action: Action) {
        self.time = time
        self.anchor = anchor
        self.action = action
    }
}

extension Scene {
    /// How long after the last performed event `finish()` keeps the clip
    /// going while models still move (a classic cycle at amplitude 1
    /// rests after about 8 s).
    public static let performedTail = 12.0
}
