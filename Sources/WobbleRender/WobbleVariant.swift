// Which `Shaders/wobble.frag` program a region's draw uses.
internal import CGLES
import Foundation
import WobbleCore

/// The compile-time switches of one `Shaders/wobble.frag` program: a
/// pinned profile (only for how far its samples reach: the shader text is
/// the same), offsets only (the sum's first pass), the overlay blended
/// in, mirror sampling (else clamped), sampling known to stay inside the
/// source texture (`Resources.samplesInside`), and an opaque source texture
/// (the filtered alpha is then 1 within rounding: the branch for a filtered
/// alpha under half a level is dead). A switch fixed when compiling
/// takes the branch its uniform would, so the values are the same; the
/// fragments skip the tests and the other branch's code.
struct WobbleVariant: Hashable {
    var pinned: Bool
    var offsetOnly: Bool
    var overlay: Bool
    var mirror: Bool
    var interior: Bool
    var opaque: Bool
    /// Overlay and mirror left to their uniforms (`Resources.fixedSwitches`
    /// off).
    var uniforms = false
    /// A cutout region: its object over its plate (`CUTOUT`; defined only
    /// when on).
    var cutout = false

    var defines: [(name: String, value: Int)] {
        let switches = [("OFFSET_ONLY", offsetOnly), ("INTERIOR", interior), ("OPAQUE", opaque)]
            + (uniforms ? [] : [("OVERLAY", overlay), ("MIRROR", mirror)]) + (cutout ? [("CUTOUT", true)] : [])
        return switches.map { ($0.0, $0.1 ? 1 : 0) }
    }
}
