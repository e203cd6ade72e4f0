import WobbleCore
import WobbleSystem

/// The session's side of the path policy (`PathPolicy`): the checks the
/// bindings call, the inputs the scene read, and error messages about a
/// file's content that name the file, line and column but never quote it.
extension ScriptSession {
    /// `output(path)`: the resolved path, or the policy's refusal as
    /// `output: path 'x' is outside the scene's folder (use --allow-io, …)`.
    func checkedOutputPath(_ path: String) throws -> String {
        if options.outputGiven { return resolve(path) }
        switch policy.output(path) {
        case .success(let full): return full
        case .failure(let r):
            throw SceneError("output", "path '\(PathBytes.display(path))' \(r.message) (use --allow-io, or -o on the command line)")
        }
    }

    /// A data file (`image`, `enableMotion`): the resolved path, or the refusal.
    func checkedDataPath(_ path: String, function: String) throws -> String {
        switch policy.data(path) {
        case .success(let full):
            // Named before it is read: a missing file is watched too.
            options.onPath(full)
            return full
        case .failure(let r): throw SceneError(function, "path '\(PathBytes.display(path))' \(r.message)")
        }
    }

    /// Records a file the scene read (once per file), so that the runner can
    /// refuse an output that would replace it.
    func recordInput(_ role: InputFile.Role, _ path: String) {
        options.onPath(path)
        guard let file = InputFile(role: role, path: path),
              !inputs.contains(where: { $0.device == file.device && $0.inode == file.inode }) else { return }
        inputs.append(file)
    }

    /// `enableMotion(path)`: reads and parses the trace.
    func readTrace(_ path: String) throws -> [MotionSample] {
        let full = try checkedDataPath(path, function: "enableMotion")
        let bytes: [UInt8]
        switch ScriptSession.readFile(full) {
        case .success(let b): bytes = b
        case .failure(let e): throw SceneError("enableMotion", "cannot read trace '\(PathBytes.display(path))': \(e.message)")
        }
        recordInput(.trace, full)
        return try parseMotionTrace(String(decoding: bytes, as: UTF8.self), fileName: PathBytes.display(path))
    }

    /// `record(role, path)` of the `--allow-io` prelude: a file Lua's own
    /// `require`, `dofile` or `loadfile` reads (path as Lua opens it).
    func sandboxRecord(_ a: LuaArgs) -> Int32 {
        guard let path = a.lua.pathString(2) else { return 0 }
        recordInput(a.lua.string(1) == "module" ? .module : .code, path)
        return 0
    }

    /// `redact(message, path)` of the sandbox prelude: a load error of a code
    /// file the script named, without the quoted token.
    func sandboxRedact(_ a: LuaArgs) -> Int32 {
        let lua = a.lua
        let message = lua.string(1) ?? "(error object is not a string)"
        guard let path = lua.pathString(2) else {
            lua.push(message)
            return 1
        }
        lua.push(ScriptSession.redactSyntaxError(message, path: path))
        return 1
    }

    /// A Lua syntax error (`lib/x.lua:3: '=' expected near 'secret'`) with
    /// the token it quotes replaced by its column: `lib/x.lua:3:7: '='
    /// expected`. A file a script names may be anything inside the scene's
    /// folder (`dofile('.ssh/id_rsa')` from a scene in a home folder), so
    /// its text never appears in a message. Other messages are returned as
    /// they are.
    static func redactSyntaxError(_ message: String, path: String) -> String {
        // `<chunk>:<line>: <what> near '<token>'` (or `near <eof>`).
        let head: Substring, rest: Substring
        if message.hasPrefix(path + ":") {
            head = message.prefix(path.count)
            rest = message.dropFirst(path.count + 1)
        } else if let colon = message.firstIndex(of: ":") {
            head = message[..<colon]
            rest = message[message.index(after: colon)...]
        } else {
            return message
        }
        let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, let line = Int(digits), rest.dropFirst(digits.count).hasPrefix(": ") else { return message }
        let body = rest.dropFirst(digits.count + 2)
        guard let near = body.range(of: " near '") else { return message }
        let what = body[..<near.lowerBound]
        var token = body[near.upperBound...]
        if token.hasSuffix("'") { token = token.dropLast() }
        let firstLine = token.prefix(while: { $0 != "\n" && $0 != "\r" })
        var column = ""
        if !firstLine.isEmpty, case .success(let bytes) = readFile(path, limit: 64 << 20) {
            let text = String(decoding: bytes, as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if line >= 1, line <= lines.count, let r = lines[line - 1].range(of: firstLine) {
                column = ":\(lines[line - 1].distance(from: lines[line - 1].startIndex, to: r.lowerBound) + 1)"
            }
        }
        return "\(head):\(line)\(column): \(what)"
    }
}

extension String {
    /// The range of the first occurrence of `needle` (Foundation-free).
    fileprivate func range<S: StringProtocol>(of needle: S) -> Range<Index>? { self[...].range(of: needle) }
}

extension Substring {
    /// The range of the first occurrence of `needle` (Foundation-free).
    fileprivate func range<S: StringProtocol>(of needle: S) -> Range<Index>? {
        guard !needle.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(needle) { return i..<index(i, offsetBy: needle.count) }
            i = index(after: i)
        }
        return nil
    }
}
