import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// A live session's saving and merging: edits written into the scene file (merged with another program's save), the cutouts' masks beside it, the unsaved edits kept when the file is gone.
extension LiveSession {
    /// An error of saving (one line).
    public struct SaveError: Error, CustomStringConvertible {
        public var message: String
        /// The scene file is gone from its path (`sceneFileIsGone`): the
        /// edits can be kept with `writeUnsaved`.
        public var fileGone = false
        public var description: String { message }
    }

    /// The refusal of a save into a scene file that is gone, nil while it is there.
    func goneProblem() -> SaveError? {
        let path = options.scenePath
        switch Posix.kind(path) {
        case .regular: return nil
        case nil:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is gone from disk (deleted or renamed); the edits stay pending", fileGone: true)
        case .directory:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is a folder now; the edits stay pending", fileGone: true)
        default:
            return SaveError(message: "not saved: \(ScenePaths.shown(path)) is not a regular file now; the edits stay pending", fileGone: true)
        }
    }

    /// Writes the unsaved edits into the scene file as it is on disk now
    /// (only the literals, keys and names edited change; added sketches
    /// become their own lines), then runs the saved scene. A save by another
    /// program since the edits were made is merged (`SourceMerge`): refused,
    /// the edits pending, when it changed a constructor they change. Returns
    /// what was written (for messages). `runAfter` false: the caller runs the
    /// saved scene (`requestRun`).
    @discardableResult
    public func saveEdits(runAfter: Bool = true) throws -> (edited: Int, added: Int, deleted: Int) {
        guard hasUnsavedEdits else { return (0, 0, 0) }
        if let gone = goneProblem() { throw gone }
        let path = options.scenePath
        // Read, merge, write and rename holding the scene folder's lock
        // (another studio saving the same scene waits its turn, then merges
        // into what it wrote), and compare again just before the rename (an
        // editor takes no lock; its save in the meantime is not overwritten).
        let counts: (Int, Int, Int)
        do {
            counts = try FolderLock.withLock(folderOf: path) {
                let disk: [UInt8]
                do { disk = try Posix.readFile(path) } catch { throw SaveError(message: "not saved: \(error)") }
                // The studio's masks go beside the scene first; the edits
                // then name their files (all back as they were on failure).
                let unsaved = edits
                let namedBefore = studioMasksNamed
                var masks = MaskWrites()
                do {
                    masks = try writeMasks()
                    let text = try merged(into: disk)
                    if let problem = LuaSyntax.problem(text, name: path) {
                        throw SaveError(message: "not saved: the rewritten scene does not compile: \(problem)")
                    }
                    do {
                        try AtomicFile.write(text, to: path, what: "the scene '\(ScenePaths.shown(path))'", beforeRename: {
                            guard (try? Posix.readFile(path)) == disk else {
                                throw SaveError(message: "not saved: \(path) changed on disk while it was being saved (save again)")
                            }
                        })
                    } catch let e as PosixError where e.call == "open" && e.path == path && [EACCES, EPERM, EROFS].contains(e.code) {
                        // (The new text is written beside the scene, then renamed over it.)
                        let folder = ScenePaths.folder(path)
                        throw SaveError(message: "not saved: cannot create a file in the scene's folder '\(ScenePaths.shown(folder))' "
                                        + "(\(Posix.reason(e.code))): a save writes the new scene beside it and renames it over")
                    }
                    savedText = text
                    // The sketches as written: a cutout made in memory is
                    // the mask file its line names now.
                    pendingSave = (sceneText ?? [], text, edits.calls.merging(pendingSave?.states ?? [:]) { mine, _ in mine })
                } catch {
                    masks.undo()
                    edits = unsaved
                    throw error
                }
                savedMasks = masks.all.filter { $0.lowercased().hasSuffix(".png") }
                (removedMasks, keptMasks) = removeMasks(namedBefore: namedBefore)
                return (edits.calls.count, edits.added.count, edits.deleted.count)
            }
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
        edits = SketchEdits()
        if runAfter { run() }
        return counts
    }


    /// The folder the studio's masks are saved in, as the scene names it:
    /// `<scene>-masks`, beside the scene.
    public var masksFolderName: String { ScenePaths.baseName(options.scenePath) + "-masks" }

    /// What `writeMasks` did: the files it wrote that were not there
    /// (taken away again when the save fails), and the bytes of those it
    /// replaced (put back then).
    struct MaskWrites {
        var created: [String] = []
        var replaced: [(path: String, bytes: [UInt8])] = []
        var all: [String] { created + replaced.map(\.path) }

        /// Puts everything back as it was before the save.
        func undo() {
            for m in created { try? Posix.unlink(AT_FDCWD, m, shown: m) }
            for r in replaced { try? AtomicFile.write(r.bytes, to: r.path) }
        }
    }

    /// The mask file `source` names when it lies in the studio's masks
    /// folder (`masksFolderName`, beside the scene), nil otherwise: the
    /// files the studio writes, replaces and removes (never others). By
    /// the resolved path (`AbsolutePath`), however the scene spells it
    /// (`s-masks/m.png`, `./s-masks/m.png`, absolute, `s-masks//m.png`).
    func studioMask(_ source: CutoutSource?) -> (path: String, file: String)? {
        guard case .file(let path, _)? = source else { return nil }
        let full = AbsolutePath(path), folder = AbsolutePath(ScenePaths.folder(options.scenePath)).appending(masksFolderName)
        guard full.folder == folder, !full.name.isEmpty else { return nil }
        return (ScenePaths.join(ScenePaths.join(ScenePaths.folder(options.scenePath), masksFolderName), full.name), full.name)
    }

    /// The studio's mask files the calls of the last good run name (their
    /// text as it is, edits aside).
    var studioMasksNamed: Set<String> {
        Set(sketchCalls.indices.compactMap { studioMask(baseState($0)?.parameters.cutout?.source)?.path })
    }

    /// Writes every cutout of the edits still in memory as a PNG in
    /// `masksFolderName` (made when missing), with its strokes beside it
    /// (`<name>.strokes`, `CutoutStrokesFile`; none written, and an old one
    /// removed, when it has none): one file per region. The file is
    /// `<name>.png` for the sketch's name when that is free or is the
    /// region's own (the file its line names now, replaced); else the
    /// region's own file; else the first free `<name>-N.png`: never over
    /// another region's file, atomically. The edits then name those files
    /// (`cutout = "..."`).
    func writeMasks() throws -> MaskWrites {
        var pending: [(kind: SketchOrigin.Kind, name: String, mask: MaskImage, own: (path: String, file: String)?)] = []
        for (n, state) in edits.calls.sorted(by: { $0.key < $1.key }) where !edits.deleted.contains(n) {
            if case .memory(let m)? = state.parameters.cutout?.source {
                let name = state.name ?? baseState(n)?.name ?? "line\(sketchCalls.indices.contains(n) ? sketchCalls[n].line ?? n : n)"
                pending.append((.call(n), name, m, studioMask(baseState(n)?.parameters.cutout?.source)))
            }
        }
        for (i, state) in edits.added.enumerated() {
            if case .memory(let m)? = state.parameters.cutout?.source { pending.append((.added(i), state.name ?? "region\(i + 1)", m, nil)) }
        }
        guard !pending.isEmpty else { return MaskWrites() }
        let sceneFolder = ScenePaths.folder(options.scenePath)
        let folderName = masksFolderName
        let folder = ScenePaths.join(sceneFolder, folderName)
        // Not followed: a link planted as `<scene>-masks` would put the
        // masks wherever it leads.
        switch Posix.kind(folder, follow: false) {
        case .directory?: break
        case nil:
            do { try Posix.mkdir(AT_FDCWD, folder, 0o755, shown: ScenePaths.shown(folder)) } catch { throw SaveError(message: "not saved: \(error)") }
        case .link?:
            throw SaveError(message: "not saved: \(ScenePaths.shown(folder)) is a symbolic link; the cutout masks go into a folder of that name beside the scene, never through a link (remove it)")
        default:
            throw SaveError(message: "not saved: \(ScenePaths.shown(folder)) is not a folder (the cutout masks go there)")
        }
        // Files other regions' lines name (however spelled): never written over.
        let others = Set(studioMasksNamed.map(AbsolutePath.init))
        var done = MaskWrites()
        /// Writes `bytes` at `full`, replacing the file there only when `replace`.
        func put(_ bytes: [UInt8], _ full: String, replace: Bool) throws {
            let old = replace && Posix.kind(full, follow: false) == .regular ? try? Posix.readFile(full) : nil
            // A name the studio chose: a link there is replaced, never
            // followed; nothing is replaced unless it is this region's own file.
            try AtomicFile.write(bytes, to: full, name: old != nil ? .madeUp : .fresh, beforeRename: {
                guard old != nil || Posix.kind(full, follow: false) == nil else {
                    throw SaveError(message: "not saved: \(ScenePaths.shown(full)) appeared meanwhile (save again)")
                }
            })
            if let old { done.replaced.append((full, old)) } else { done.created.append(full) }
        }
        do {
            for p in pending {
                func free(_ file: String) -> Bool {
                    let full = ScenePaths.join(folder, file)
                    return !done.all.contains(full) && (p.own?.file == file
                        || (!others.contains(AbsolutePath(full)) && Posix.kind(full, follow: false) == nil
                            && Posix.kind(CutoutStrokesFile.path(besideMask: full), follow: false) == nil))
                }
                var file = "\(p.name).png"
                if !free(file) {
                    if let own = p.own, free(own.file) {
                        file = own.file
                    } else {
                        var n = 2
                        while !free("\(p.name)-\(n).png") { n += 1 }
                        file = "\(p.name)-\(n).png"
                    }
                }
                let full = ScenePaths.join(folder, file)
                try put(try ImageIO.encodeMaskPNG(p.mask.mask), full, replace: true)
                let strokesPath = CutoutStrokesFile.path(besideMask: full)
                if !p.mask.strokes.isEmpty {
                    try put(Array(CutoutStrokesFile.text(p.mask.strokes).utf8), strokesPath, replace: true)
                } else if Posix.kind(strokesPath, follow: false) == .regular, let old = try? Posix.readFile(strokesPath) {
                    try Posix.unlink(AT_FDCWD, strokesPath, shown: ScenePaths.shown(strokesPath))
                    done.replaced.append((strokesPath, old))
                }
                let source = CutoutSource.file(path: full, written: folderName + "/" + file)
                guard var state = currentState(p.kind) else { continue }
                state.parameters.cutout = state.parameters.cutout.map { CutoutRequest(source: source, shape: $0.shape, place: $0.place) }
                switch p.kind {
                case .call(let n): edits.calls[n] = state
                case .added(let i): edits.added[i] = state
                }
            }
        } catch {
            done.undo()
            if let e = error as? SaveError { throw e }
            throw SaveError(message: "not saved: \(error)")
        }
        return done
    }

    /// After a save: the studio's mask files (and their strokes) that the
    /// scene named before it and no sketch names now (a region deleted, its
    /// cutout taken out, its mask written under another name) are removed.
    /// A file is named by its resolved path (`AbsolutePath`): a region that
    /// spells it `./s-masks/m.png`, absolute or `s-masks//m.png` names it
    /// too. Nothing is removed through a masks folder that is a symbolic
    /// link (removing is writing there), and a link at a mask's name is
    /// left as it is (the studio writes plain files; a link is someone
    /// else's): `keptMasks` says so, and what could not be removed.
    /// Returns the masks removed.
    func removeMasks(namedBefore before: Set<String>) -> (removed: [String], kept: [String]) {
        var now = Set<AbsolutePath>()
        func name(_ source: CutoutSource?) {
            if case .file(let path, _)? = source { now.insert(AbsolutePath(path)) }
        }
        for n in sketchCalls.indices where !edits.deleted.contains(n) { name(currentState(.call(n))?.parameters.cutout?.source) }
        for s in edits.added { name(s.parameters.cutout?.source) }
        var removed: [String] = [], kept: [String] = []
        let gone = before.filter { !now.contains(AbsolutePath($0)) }.sorted()
        guard !gone.isEmpty else { return ([], []) }
        let folder = ScenePaths.join(ScenePaths.folder(options.scenePath), masksFolderName)
        if Posix.kind(folder, follow: false) != .directory {
            let why = Posix.kind(folder, follow: false) == .link
                ? "\(masksFolderName) is a symbolic link (nothing is removed through it)"
                : "\(masksFolderName) is not a folder"
            return ([], gone.map { "\(ScenePaths.name($0)) left: \(why)" })
        }
        for path in gone {
            let mask = ScenePaths.name(path)
            switch Posix.kind(path, follow: false) {
            case .regular?:
                do {
                    try Posix.unlink(AT_FDCWD, path, shown: ScenePaths.shown(path))
                } catch {
                    kept.append("\(mask) not removed: \(Self.reason(error))")
                    continue
                }
                removed.append(path)
            case nil:
                break
            case .link?:
                kept.append("\(mask) left: a symbolic link")
                continue
            default:
                kept.append("\(mask) left: not a file")
                continue
            }
            let strokes = CutoutStrokesFile.path(besideMask: path)
            if Posix.kind(strokes, follow: false) == .regular {
                do { try Posix.unlink(AT_FDCWD, strokes, shown: ScenePaths.shown(strokes)) } catch {
                    kept.append("\(ScenePaths.name(strokes)) not removed: \(Self.reason(error))")
                }
            }
        }
        return (removed, kept)
    }

    /// An OS error's reason without the path it names (`Permission denied`).
    static func reason(_ error: Error) -> String {
        guard let e = error as? PosixError else { return "\(error)" }
        return Posix.reason(e.code)
    }

    /// Whether the scene file is gone from its path: deleted, renamed away,
    /// or something else than a file there now (a folder). A save cannot
    /// go there; `writeUnsaved` keeps the edits.
    public var sceneFileIsGone: Bool { Posix.kind(options.scenePath) != .regular }

    /// Where `writeUnsaved` writes: `<scene>.unsaved.lua` beside the scene,
    /// else `<scene>.unsaved-N.lua` (N from 2), the first name free.
    public var unsavedPath: String {
        ScenePaths.firstFree(beside: options.scenePath) { n in
            "\(ScenePaths.baseName(options.scenePath)).unsaved\(n == 1 ? "" : "-\(n)").lua"
        }
    }

    /// Writes the scene as the last good run read it, with the pending
    /// edits carried into it, to `unsavedPath` (atomically, never over
    /// another file), for a scene file that is gone. The edits stay pending
    /// (the scene file, if it comes back, still lacks them). Returns the
    /// path written; detached edits are not in it (their calls are gone).
    ///
    /// Pending text already written there, and unchanged on disk since, is
    /// not written again: its path is returned (a second `Ctrl+S`, or
    /// quitting after one, names the file that holds the edits instead of
    /// writing `<scene>.unsaved-2.lua` with the same bytes).
    public func writeUnsaved() throws -> String {
        guard let text = sceneText else { throw SaveError(message: "not written: the scene's text was never read") }
        let saved = detached
        detached = []
        defer { detached = saved }
        let out = try merged(into: text)
        if let last = lastUnsaved, last.bytes == out, Posix.kind(last.path, follow: false) == .regular,
           (try? Posix.readFile(last.path)) == out {
            return last.path
        }
        let path = unsavedPath
        do {
            // `.fresh`: never over anything there, a link planted meanwhile too.
            try AtomicFile.write(out, to: path, name: .fresh)
        } catch is MediaError where Posix.kind(path, follow: false) != nil {
            throw SaveError(message: "not written: \(ScenePaths.shown(path)) appeared meanwhile (save again)")
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not written: \(error)")
        }
        lastUnsaved = (path, out)
        return path
    }


    /// Why the pending edits cannot be saved into the scene file as it is
    /// now (a conflict with another program's save), nil when they can.
    public func mergeProblem() -> String? {
        guard hasUnsavedEdits else { return nil }
        if let gone = goneProblem() { return gone.message }
        do {
            _ = try merged(into: try Posix.readFile(options.scenePath))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The scene file as a save would write it now (the pending edits
    /// carried into it; the file itself when there are none), or why not.
    public func editedText() throws -> [UInt8] {
        let disk: [UInt8]
        do { disk = try Posix.readFile(options.scenePath) } catch { throw SaveError(message: "\(error)") }
        return hasUnsavedEdits ? try merged(into: disk) : disk
    }

    /// `disk` with the pending edits carried into it.
    func merged(into disk: [UInt8]) throws -> [UInt8] {
        guard let runText = sceneText, let runSource = sceneSource else {
            throw SaveError(message: "not saved: the scene's text was never read")
        }
        if let d = detached.first { throw SaveError(message: "not saved: \(d.message)") }
        // `loop()` switched first: the sketches are then found in that
        // text by their identity (a line more or less changes none).
        var disk = disk
        do {
            // The timeline's deletions first (by line, as the run read them;
            // refused when such a line changed), then the baked block.
            if !edits.removedKicks.isEmpty {
                if disk != runText {
                    let runLines = LoopSource.lineTexts(runText), diskLines = LoopSource.lineTexts(disk)
                    for l in edits.removedKicks where runLines[l] != diskLines[l] {
                        throw SaveError(message: "not saved: \(options.scenePath):\(l) changed on disk; the deleted kick stays pending (Ctrl+Z undoes it)")
                    }
                }
                disk = try TimelineSource.removingKicks(disk, lines: edits.removedKicks, name: options.scenePath)
            }
            if let loop = edits.loop {
                // (Lines after a deleted kick moved up.)
                func moved(_ w: StillWait) -> StillWait {
                    var w = w
                    w.line = w.line.map { l in l - edits.removedKicks.filter { $0 < l }.count }
                    return w
                }
                let period = (loop ? periodWait : nil).map { p -> LoopSource.PeriodWait in
                    var p = p
                    p.replacing = p.replacing.map(moved)
                    return p
                }
                disk = try LoopSource.switched(disk, on: loop, waits: stillWaits.map(moved), period: period, name: options.scenePath)
            }
            if let baked = edits.baked { disk = try TimelineSource.withPerform(disk, baked, name: options.scenePath) }
        } catch let e as SaveError {
            throw e
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
        let diskSource = disk == runText ? runSource : SketchSource(text: disk)
        var sources: [[UInt8]: SketchSource] = [runText: runSource]
        sources[disk] = diskSource
        var rewrites: [SketchSource.Edit] = []
        for (ordinal, state) in edits.calls.sorted(by: { $0.key < $1.key }) where !edits.deleted.contains(ordinal) {
            let base = callBases[ordinal] ?? editBase ?? runText
            let baseSource = sources[base] ?? SketchSource(text: base)
            sources[base] = baseSource
            let (call, problem) = editableCall(ordinal)
            guard let call, let old = baseState(ordinal) else {
                throw SaveError(message: "not saved: \(problem ?? "a sketch cannot be edited")")
            }
            // The call in the text the edits were made on, then in the file
            // now, by its identity; a rename on disk goes in unless the
            // studio renamed the call too.
            let renames = state.name != old.name
            let onDisk: SketchSource.Call
            // Edited on the text this session saved (its run not landed):
            // that text's changes to the call were this session's own.
            let ownSave = pendingSave.map { $0.text == base && $0.from == runText } ?? false
            switch SourceMerge.counterpart(of: call, in: runSource, through: baseSource, to: diskSource, allowRename: !renames,
                                           baseIsOwnSave: ownSave) {
            case .success(let c): onDisk = c
            case .failure(let problem):
                let tail = problem == .changed || problem == .renamed
                    ? "the edits stay pending (Ctrl+Z undoes them)" : "the edit stays pending — Ctrl+Z drops it"
                throw SaveError(message: "not saved: \(label(call)) \(problem.phrase); \(tail)")
            }
            rewrites.append(SketchSource.Edit(call: onDisk, old: old, new: state))
        }
        // The regions deleted: their calls found in the file as the edited
        // ones are, each statement still one the studio can take out.
        var deletions: [SketchSource.Call] = []
        for ordinal in edits.deleted.sorted() {
            let base = callBases[ordinal] ?? editBase ?? runText
            let baseSource = sources[base] ?? SketchSource(text: base)
            sources[base] = baseSource
            guard let call = sourceCall(ordinal) else {
                throw SaveError(message: "not saved: \(deletableCall(ordinal).problem ?? "a deleted region is not in the scene's text")")
            }
            let ownSave = pendingSave.map { $0.text == base && $0.from == runText } ?? false
            switch SourceMerge.counterpart(of: call, in: runSource, through: baseSource, to: diskSource, baseIsOwnSave: ownSave) {
            case .success(let c):
                if case .failure(let problem) = diskSource.deletion(c) {
                    throw SaveError(message: "not saved: cannot delete \(label(c)): \(problem.reason); the deletion stays pending (Ctrl+Z undoes it)")
                }
                deletions.append(c)
            case .failure(let problem):
                throw SaveError(message: "not saved: the deleted \(label(call)) \(problem.phrase); the deletion stays pending (Ctrl+Z undoes it)")
            }
        }
        for a in edits.added {
            if let name = a.name, let lines = diskSource.names[name] {
                throw SaveError(message: "not saved: the added region's name \(name) is used on line \(lines[0]) of \(options.scenePath) now; rename it")
            }
        }
        do {
            return try diskSource.rewritten(rewrites, added: edits.added, deleted: deletions)
        } catch {
            throw SaveError(message: "not saved: \(error)")
        }
    }
}
