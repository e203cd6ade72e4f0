/// A path made absolute against the current folder and lexically
/// normalised (`ScenePaths.absolute`: no `.`, `..` or empty components;
/// links are not resolved), its exact bytes kept as a `PathBytes` string.
/// Paths are `String`s everywhere else, put together and taken apart by
/// `ScenePaths`; this type is for a path that must be absolute where it
/// crosses from one part to another: the scene's folder, which the studio
/// exports into and the browser studio serves (`/files/NAME`). Made once,
/// there; `string` hands it to what takes a `String`.
public struct AbsolutePath: Hashable, Sendable, CustomStringConvertible {
    /// The path: "/" for the root, else no trailing slash.
    public let string: String

    /// `path` made absolute (a relative one against the current folder) and normalised.
    public init(_ path: String) {
        string = ScenePaths.absolute(path)
    }

    /// The folder this path is in (the root's is the root).
    public var folder: AbsolutePath { AbsolutePath(ScenePaths.folder(string)) }

    /// The last component ("" for the root).
    public var name: String { string == "/" ? "" : ScenePaths.name(string) }

    /// The last component without its extension.
    public var baseName: String { string == "/" ? "" : ScenePaths.baseName(string) }

    /// `name` (one component, or a relative path) below this path, normalised.
    public func appending(_ name: String) -> AbsolutePath {
        AbsolutePath(ScenePaths.join(string, name))
    }

    /// This path below `folder` (`a/b.png`), by components: nil when it is
    /// not inside it, or is it (`/ab` is not inside `/a`).
    public func relative(inside folder: AbsolutePath) -> String? {
        // By scalars, as `ScenePaths.absolute` splits: a name may begin with a combining mark.
        let prefix = Array((folder.string == "/" ? "/" : folder.string + "/").unicodeScalars)
        let scalars = Array(string.unicodeScalars)
        guard scalars.count > prefix.count, scalars.starts(with: prefix) else { return nil }
        return String(String.UnicodeScalarView(scalars.dropFirst(prefix.count)))
    }

    /// For a message: bytes that are not UTF-8 as `\xFE`, control characters too.
    public var description: String { ScenePaths.shown(string) }
}
