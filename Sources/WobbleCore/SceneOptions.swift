/// How overlapping regions combine (`overlap(mode)`).
public enum OverlapMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The offsets of every region containing a pixel add up (continuous:
    /// no crease where one region's boundary crosses another). The default.
    case sum
    /// The first region (in `prepare` order) that moves a pixel wins, as in
    /// the original.
    case first
}

/// Where a sample position outside the image reads from (`edges(mode)`).
public enum EdgeMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Reflected at the image border (GL_MIRRORED_REPEAT). The default.
    case mirror
    /// The edge pixel (GL_CLAMP_TO_EDGE), as the original did.
    case clamp
}

extension CaseIterable where Self: RawRepresentable, RawValue == String {
    /// `"sum" or "first"`: the valid names, for error messages.
    public static var validNames: String {
        let names = allCases.map { "\"\($0.rawValue)\"" }
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }
}
