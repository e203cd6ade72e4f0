import WobbleCore
import WobbleSystem

/// Where rendered frames go. Frames arrive in increasing timeline index
/// (not necessarily starting at 0: `--frames A-B`). Nothing is visible at
/// the target until `finish()` succeeds (a failed run replaces nothing).
public protocol FrameSink: AnyObject {
    /// Writes (or queues) one frame; `index` is its timeline index.
    func write(_ frame: RGBAImage, index: Int) throws
    /// Writes one frame known to equal the frame written before it outside
    /// `changed` (output pixel boxes; nil: not known, the whole frame may
    /// differ). Sinks that diff frames look only there; the bytes written
    /// are the same as `write(_:index:)`'s. By default: `write(_:index:)`.
    func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws
    /// Completes the output and moves it into place atomically.
    func finish() throws
    /// Drops everything written so far (temporary files removed); the
    /// target stays exactly as it was. Idempotent; safe after a failure.
    func abort()
    /// The bytes the output holds once `finish()` succeeded (a folder of
    /// frames: all its frame files), for `--json`; nil before.
    var bytesWritten: Int? { get }
}


extension FrameSink {
    public func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws {
        try write(frame, index: index)
    }
}
