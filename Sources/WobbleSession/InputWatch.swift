import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file: modification time, size, inode
/// (editors that save by renaming change the inode).
public struct FileStamp: Equatable, Sendable {
    public var seconds: Int
    public var nanoseconds: Int
    public var size: Int64
    public var inode: UInt64

    /// The stamp of the regular file at `path`, nil when there is none.
    public init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        seconds = Int(st.st_mtim.tv_sec)
        nanoseconds = Int(st.st_mtim.tv_nsec)
        size = Int64(st.st_size)
        inode = UInt64(st.st_ino)
    }
}

/// Watches a scene's inputs by polling their stamps: the scene, every
/// `.lua`, `.csv`, `.png`, `.jpg`, `.jpeg` file under its folder (hidden
/// entries skipped, at most 4 folders deep, 5000 files), and the extra
/// paths the session names (the image and traces wherever they are).
/// A change is reported once the files have stopped changing for one poll
/// (an editor or a copy has finished writing).
public final class InputWatch {
    public static let maxDepth = 4
    public static let maxFiles = 5000

    public let scenePath: String
    /// File names (in the scene's folder tree) that are not inputs: the
    /// takes the studio writes itself.
    public var ignore: (String) -> Bool = { _ in false }
    private var baseline: [String: FileStamp] = [:]
    private var pending: [String: FileStamp]?

    public init(scenePath: String) {
        self.scenePath = InputWatch.absolute(scenePath)
    }

    public static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Takes the current state of the inputs as the baseline.
    public func reset(extra: [String]) {
        baseline = scan(extra: extra)
        pending = nil
    }

    /// Polls once. Returns the changed file names (short, for a message)
    /// once a change has settled (two equal polls in a row), else nil.
    /// The new state becomes the baseline.
    public func poll(extra: [String]) -> [String]? {
        let now = scan(extra: extra)
        if let p = pending {
            if p == now {
                pending = nil
                let changed = Set(baseline.keys).union(now.keys).filter { baseline[$0] != now[$0] }.sorted()
                baseline = now
                return changed.isEmpty ? nil : changed.map { ($0 as NSString).lastPathComponent }
            }
            pending = now
            return nil
        }
        if now != baseline { pending = now }
        return nil
    }

    func scan(extra: [String]) -> [String: FileStamp] {
        var result: [String: FileStamp] = [:]
        if let s = FileStamp(scenePath) { result[scenePath] = s }
        let folder = (scenePath as NSString).deletingLastPathComponent
        walk(folder.isEmpty ? "/" : folder, depth: 0, into: &result)
        for e in extra {
            let p = InputWatch.absolute(e)
            if let s = FileStamp(p) { result[p] = s }
        }
        return result
    }

    private func walk(_ dir: String, depth: Int, into result: inout [String: FileStamp]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        let extensions: Set<String> = ["lua", "csv", "png", "jpg", "jpeg"]
        for name in names.sorted() where !name.hasPrefix(".") {
            if result.count >= InputWatch.maxFiles { return }
            if ignore(name) { continue }
            let path = dir == "/" ? "/" + name : dir + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let kind = st.st_mode & S_IFMT
            if kind == S_IFDIR {
                if depth < InputWatch.maxDepth { walk(path, depth: depth + 1, into: &result) }
            } else if kind == S_IFREG || kind == S_IFLNK {
                let ext = (name as NSString).pathExtension.lowercased()
                if extensions.contains(ext), let s = FileStamp(path) { result[path] = s }
            }
        }
    }
}
