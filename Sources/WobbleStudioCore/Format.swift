import Foundation

/// A number as a status line shows it: whole numbers without a point, else `%g`.
package func fmt(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%g", v) }
/// One decimal (`12.5`).
package func fmt1(_ v: Double) -> String { String(format: "%.1f", v) }
/// Three decimals (`0.067`): times to the millisecond.
package func fmt3(_ v: Double) -> String { String(format: "%.3f", v) }
