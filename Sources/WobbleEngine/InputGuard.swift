import Foundation
import WobbleCore

import WobbleMedia
import WobbleScript
import WobbleSystem

extension Runner {
    /// Refuses, before anything is written, an output that would replace or
    /// remove one of the scene's inputs: the output file itself, or
    /// for PNG frames into a folder or a pattern, every frame file the render
    /// replaces and every stale frame file a full render removes. Files are
    /// compared by device and inode (links followed), a file that does not
    /// exist yet by its canonical path. From `-o` a usage error (2), from the
    /// script's `output()` a run error (1).
    package func refuseToReplaceInputs(_ plan: OutputPlan, inputs: [InputFile], frames: ClosedRange<Int>) throws {
        guard !inputs.isEmpty else { return }
        func input(at path: String) -> InputFile? {
            if let id = PathPolicy.identity(path) {
                return inputs.first { $0.device == id.device && $0.inode == id.inode }
            }
            guard case .success(let c) = PathPolicy.canonical(path) else { return nil }
            return inputs.first { $0.canonical == c }
        }
        func refuse(_ message: String) -> Error {
            let line = message + "; choose another output"
            return options.output != nil ? UsageError(line) : RunError(line)
        }
        guard let path = plan.path else { return }
        let single: String
        switch plan.png {
        case nil: single = path
        case .file(let p)?: single = p
        case let output?:
            // The folder the frames go to, and the names its frame files have.
            guard let first = try? output.path(forFrame: 0) else { return }
            let folder = first.lastIndex(of: "/").map { String(first[..<$0]) } ?? "."
            let names: FrameNamePattern
            switch output {
            case .pattern(let p):
                let name = p.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? p
                guard let n = try? FrameNamePattern(fileName: name, output: p) else { return }
                names = n
            default:
                names = .directoryDefault
            }
            let dir = folder.isEmpty ? "/" : folder
            guard let fd = try? Posix.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return }  // not there: nothing to replace
            let entries = ((try? Posix.list(fd, shown: dir)) ?? []).sorted()
            try? Posix.close(fd, shown: dir)
            for entry in entries {
                guard let k = names.index(ofFileName: entry), let path = try? output.path(forFrame: k) else { continue }
                let replaced = frames.contains(k)
                guard replaced || options.frames == nil, let i = input(at: path) else { continue }
                let shown = PathBytes.display(path)
                let what = replaced ? "replace frame \(k) '\(shown)'" : "remove the stale frame '\(shown)'"
                throw refuse("output '\(PathBytes.display(output.path))' would \(what), which is the \(i.role.rawValue) '\(PathBytes.display(i.path))'")
            }
            return
        }
        if let i = input(at: single) {
            throw refuse("output '\(PathBytes.display(single))' is the \(i.role.rawValue) '\(PathBytes.display(i.path))' itself")
        }
    }
}
