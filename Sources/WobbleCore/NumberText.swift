/// Numbers as the tool writes them in messages, help and JSON.
public enum NumberText {
    /// A whole number without a decimal point (`30`), else Swift's shortest
    /// form that reads back exactly (`0.01`, `29.97`).
    public static func plain(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// A virtual time: whole milliseconds, no float noise (0.30000000000000004 → 0.3).
    public static func seconds(_ t: Double) -> String { plain((t * 1000).rounded() / 1000) }

    /// A frame rate in a message: at most three decimals, as a time
    /// (2/3 → 0.667; 29.97 and 30 as they are). `--json` keeps more.
    public static func rate(_ fps: Double) -> String { seconds(fps) }
}
