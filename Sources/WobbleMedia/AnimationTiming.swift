import WobbleCore
import WobbleSystem

/// Frame timing and looping shared by the animated formats that are not
/// GIF (WebP, APNG).
public enum AnimationTiming {
    /// When frame `index` starts, in whole milliseconds:
    /// `round(1000 · index / fps)` (half away from zero). Frame k lasts
    /// `start(k + 1) - start(k)`: durations are whole milliseconds, like the
    /// GIF's centiseconds, and any run of frames lasts its exact length,
    /// rounded.
    public static func millisecond(index: Int, fps: Double) -> Int {
        Int(clamping: (1000 * Double(index) / fps).rounded(), to: 0...Int(Int32.max), rounding: .toNearestOrEven)
    }

    /// The duration of frame `index` in milliseconds.
    public static func duration(index: Int, fps: Double) -> Int {
        millisecond(index: index + 1, fps: fps) - millisecond(index: index, fps: fps)
    }

    /// `--loop` (as for GIF: 0 forever, -1 play once, N repeat N more
    /// times) as the number of plays WebP and APNG store (0: forever).
    public static func plays(loop: Int) -> Int {
        loop == 0 ? 0 : loop < 0 ? 1 : loop + 1
    }

    /// The highest `--loop` a WebP can store: its plays are a 16-bit
    /// number (65535 plays); APNG's are 32-bit, GIF's loop count 16-bit.
    public static let maxWebPLoop = 65534
}
