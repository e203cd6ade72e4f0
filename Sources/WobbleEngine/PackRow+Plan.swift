import Foundation
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// What one row of a pack renders: the render's options (paths resolved
/// against the manifest's folder), the key its journal entry goes under
/// (its output as written) and the hash of everything it was asked.
package struct PackRowPlan: Sendable {
    package var row: PackRow
    package var options: RenderOptions
    /// The output as the manifest gives it, from the pack's folder.
    package var key: String
    /// The output path to write (resolved against the pack's folder).
    package var output: String
    /// The output's canonical path (two rows may not share it).
    package var canonical: String
    package var recipe: UInt64

    /// Checks the row's fields and builds its render. `folder` is the
    /// manifest's folder; every output must stay inside it (after `..`
    /// and symbolic links), as a scene's `output(...)` must stay in the
    /// scene's folder.
    ///
    /// - Throws: `RunError` with the line that names what is wrong (the
    ///   caller puts the row's name before it).
    package init(_ row: PackRow, folder: String, base: RenderOptions, version: String) throws {
        self.row = row
        if let p = row.problem { throw RunError(p) }
        let f = row.fields
        guard let scene = f["scene"] else { throw RunError("no scene") }
        guard let output = f["output"] else { throw RunError("no output") }
        func place(_ p: String) -> String { p.hasPrefix("/") || folder == "." ? p : ScenePaths.join(folder, p) }
        var o = base
        o.scene = place(scene)
        o.image = f["image"].map(place)
        o.output = place(output)
        do {
            if let v = f["preset"] { o.preset = try Preset.named(v) }
            if let v = f["fps"] { o.fps = try OptionParser.number(v, "fps", min: Limits.minFPS, max: Limits.maxFPS) }
            if let v = f["width"] { o.width = try OptionParser.integer(v, "width", min: 1, max: Limits.maxImageSide) }
            if let v = f["frames"] { o.frames = try OptionParser.frameRange(v, "frames") }
            if let v = f["seed"] { o.seed = try OptionParser.integer(v, "seed", min: Int.min, max: Int.max) }
        } catch let e as UsageError {
            throw RunError(e.message)
        }
        // One file per row (a folder of frames has no single content to check).
        let target = o.output ?? ""
        let shown = PathBytes.display(output, controls: true)
        if target == "-" || OutputTarget.namesStdout(target) { throw RunError("output '\(shown)': a pack row writes a file, not standard output") }
        if target.hasSuffix("/") || Posix.kind(target) == .directory || PNGOutput.parse(target).map({ if case .file = $0 { false } else { true } }) == true {
            throw RunError("output '\(shown)': a pack row writes one file (.gif, .webp, .apng, .png, .mp4, .webm, .mov, .mkv), not a folder of frames")
        }
        if o.preset == nil {
            do { _ = try OutputPlan.decide(path: target, format: nil) } catch let e as UsageError { throw RunError(e.message) }
        }
        switch PathPolicy(folder: folder, allowIO: false).output(target) {
        case .failure(let r):
            throw RunError("output '\(shown)' \(r.message.replacingOccurrences(of: "the scene's folder", with: "the manifest's folder"))")
        case .success:
            break
        }
        guard case .success(let canonical) = PathPolicy.canonical(target) else { throw RunError("output '\(shown)' cannot be checked") }
        self.options = o
        self.output = target
        self.canonical = canonical
        self.key = ScenePaths.normalised(output)
        var text = "wobble-pack 1\u{0}\(version)\u{0}\(FrameRenderers.resolve(base.backend).rawValue)"
        for c in PackManifest.columns { text += "\u{0}\(c)=\(f[c] ?? "")" }
        recipe = ContentHash.fnv(PathBytes.bytes(text))
    }
}

extension ScenePaths {
    /// `path` without `.` components, doubled or trailing slashes (by
    /// text: `..` stays).
    static func normalised(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }
}
