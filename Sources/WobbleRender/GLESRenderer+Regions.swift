// The moving regions of a GLES frame: which regions move a pixel, their
// geometry textures (made on first use, kept within a budget), and how they
// are drawn over the still image (direct, or summed where boxes meet).
internal import CGLES
import Foundation
import WobbleCore

extension GLESRenderer {
    /// The regions of `frame` that move a pixel, with their geometry.
    func moving(_ frame: FrameState, now: Int) throws -> [(geometry: GeometryTexture, region: RegionFrame)] {
        var draws: [(geometry: GeometryTexture, region: RegionFrame)] = []
        for region in frame.regions {
            // As the reference: no peak or no swing, no offset, and the
            // pixel goes to the next region (decided here, exactly).
            guard region.movesPixels, let geometry = try geometry(for: region.shape, pin: region.pin, frame: now) else { continue }
            draws.append((geometry, region))
        }
        return draws
    }

    /// Draws the moving regions over the still image in `target`: directly,
    /// or, for a smaller output, into `full`'s frame at the image's size and
    /// from there area-averaged over each region's box (`target`'s
    /// framebuffer is bound again afterwards). With `boxes` (output pixels,
    /// `FrameDamage`), the frame at the image's size is made afresh only
    /// over their footprints, all the area filter reads there.
    func drawMoving(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], frame: FrameState,
                    into target: Placement, boxes: [PixelRect]? = nil) throws {
        guard let full, !draws.isEmpty else {
            try drawRegions(draws, overlap: frame.overlap, into: target, using: gl)
            return
        }
        full.beginFrame(full.ownPlacement)
        full.setEdges(frame.edges)
        if let boxes {
            for b in boxes { full.blitStill(FrameDamage.footprint(of: b, mapping: mapping)) }
        } else {
            full.blitStill()
        }
        try drawRegions(draws, overlap: frame.overlap, into: full.ownPlacement, using: full)
        gl.beginFrame(target)
        try gl.downscale(from: full.targetTexture, boxes: draws.map { outputBox($0.geometry) }, into: target)
    }

    /// The output pixels covering a geometry's box (the box itself unless
    /// the regions are drawn at the image's size).
    func outputBox(_ g: GeometryTexture) -> (x0: Int, y0: Int, x1: Int, y1: Int) {
        guard full != nil else { return (g.x0, g.y0, g.x0 + g.width, g.y0 + g.height) }
        let m = mapping
        return (max(0, Int(Double(g.x0) / m.scaleX)), max(0, Int(Double(g.y0) / m.scaleY)),
                min(m.outputWidth, Int((Double(g.x0 + g.width) / m.scaleX).rounded(.up))),
                min(m.outputHeight, Int((Double(g.y0 + g.height) / m.scaleY).rounded(.up))))
    }

    /// Draws the moving regions over the still image in `target` with the
    /// passes of `gl`.
    func drawRegions(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], overlap: OverlapMode,
                     into target: Placement, using gl: Resources) throws {
        // Cutouts are drawn over the other regions, each with its own
        // offset (as CPURenderer: the first cutout that moves a pixel
        // draws it); the other regions sum or win among themselves.
        let plain = draws.filter { $0.region.cutout == nil }
        var direct = plain
        if overlap == .sum {
            // Regions whose box meets another's are summed; the others
            // are drawn directly (alone on their pixels, that is the sum).
            let meets = GLESRenderer.meetingOthers(plain.map(\.geometry))
            let summed = plain.indices.filter { meets[$0] }.map { plain[$0] }
            direct = plain.indices.filter { !meets[$0] }.map { plain[$0] }
            if !summed.isEmpty { try gl.drawSummed(summed, into: target) }
        }
        // First wins: drawn last to first.
        for d in direct.reversed() { try gl.drawRegion(d.geometry, region: d.region, into: target) }
        for d in draws.reversed() where d.region.cutout != nil { try gl.drawRegion(d.geometry, region: d.region, into: target) }
    }

    /// For each box, whether it meets another one (then summing needs the
    /// offset pass there).
    private static func meetingOthers(_ boxes: [GeometryTexture]) -> [Bool] {
        var meets = [Bool](repeating: false, count: boxes.count)
        for (k, a) in boxes.enumerated() {
            for l in (k + 1) ..< boxes.count {
                let b = boxes[l]
                if a.x0 < b.x0 + b.width && b.x0 < a.x0 + a.width && a.y0 < b.y0 + b.height && b.y0 < a.y0 + a.height {
                    meets[k] = true
                    meets[l] = true
                }
            }
        }
        return meets
    }

    /// A plain full-image copy pass: the source drawn over the whole output
    /// by a texture-sampling shader (`Shaders/copy.frag`), into the same FBO,
    /// read back the same way as `render`. The baseline of
    /// `Scripts/bench-render.sh`; `render` itself starts each frame from a

    /// The geometry texture of `shape` (with `pin`'s coordinate), computed
    /// and uploaded on first use.
    func geometry(for shape: RegionShape, pin: PinSide?, frame: Int) throws -> GeometryTexture? {
        let key = GeometryKey(shape: shape, pin: pin)
        if let cached = geometries[key] {
            geometries[key] = (cached.geometry, frame)
            return cached.geometry
        }
        try DisplacementProfile.requireMemory(shape, mapping: wobbleMapping)
        let profile = DisplacementProfile(shape: shape, mapping: wobbleMapping, pin: pin)
        let texture = profile.isEmpty ? nil : try GeometryTexture(profile, context: context)
        geometries[key] = (texture, frame)
        geometryBytes += texture?.byteCount ?? 0
        return texture
    }

    /// Drops least recently used geometry while over the budget, never one
    /// used by frame `now`. Called with the context not current: the
    /// textures delete themselves in their own `withCurrent`.
    func evictGeometries(keeping now: Int) {
        guard geometryBytes > GLESRenderer.geometryBudget else { return }
        for (key, entry) in geometries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            guard geometryBytes > GLESRenderer.geometryBudget, entry.lastUsed < now else { break }
            geometryBytes -= entry.geometry?.byteCount ?? 0
            geometries[key] = nil
        }
    }
}
