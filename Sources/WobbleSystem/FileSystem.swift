import Foundation

/// Questions about the file system by path, and the folders a tool makes
/// for its own files: what other modules asked `FileManager` (they do not
/// reach it: OSWallTests).
public enum FileSystem {
    /// The names in folder `path` (not `.` and `..`), in no particular
    /// order; empty when it cannot be read (missing, not a folder, no
    /// permission): for a look at a device folder such as `/dev/dri`.
    public static func names(in path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Makes folder `path` and the folders above it that are missing
    /// (`mkdir -p`); throws `MediaError` naming it when it cannot.
    public static func makeFolders(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw MediaError("cannot make the folder '\(path)': \(error.localizedDescription)")
        }
    }
}
