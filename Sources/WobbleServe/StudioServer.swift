import Foundation
import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleStudioCore
import WobbleSystem

/// The browser studio (`wobble-run serve SCENE.lua`): the studio core
/// (`StudioCore`, the window's too) behind an `HTTPServer`. The page's
/// files and the renderer's shader sources are served from memory; over
/// the WebSocket (`StudioProtocol`) the page sends the core's commands (or
/// keys, which the window's key map makes commands), and gets the core's
/// snapshot after each change, plus what it needs to draw every frame
/// itself: the image's pixels, each region shape's displacement fields
/// (`ShapeProfile`: one per grid peak the clip uses, each sent once) and
/// every frame's region state. After a run the fields of the frame the
/// page shows go first, then the scene, then the clip's other fields, a
/// few at a time while no page message waits (a drag's next step comes
/// before them). Page messages are performed on one serial queue that owns
/// the core, batched: a burst of drags makes one run. The core watches the
/// scene's inputs; a change runs the scene again and the new scene is
/// pushed to every page. Exports run in the server; the file written is
/// offered to the pages as a download (`/files/NAME`).
public final class StudioServer: @unchecked Sendable {
    public let server: HTTPServer
    /// The studio; touched only on `queue`.
    let core: StudioCore
    /// The scene's folder (the files a page may fetch, `/files/NAME`).
    private let sceneFolder: AbsolutePath
    let queue = SerialQueue(label: "wobble-run.serve.session")
    private var timer: RepeatingTimer?
    private let log: @Sendable (String) -> Void
    /// What the pages were last sent: the run (generation, error, edits,
    /// pokes), the snapshot, the exports ended.
    private struct RunMark: Equatable { var generation: Int; var error: String?; var unsaved: Bool; var performed: Int; var warnings: [String] }
    private var sentRun: RunMark?
    private var sentSnapshot: StudioSnapshot?
    private var exportsSeen = 0

    /// Page messages not yet applied (any thread adds, `queue` drains).
    private let inbox = NSLock()
    private var pending: [(socket: Int, text: String)] = []
    private var draining = false

    /// The shapes of the current clip by id, with their profiles; the
    /// fields (shape id, grid index) every page has, and those the current
    /// scene uses, the shown frame's first; the image's stamp and message.
    private struct ShapeKey: Hashable { var shape: RegionShape; var pin: PinSide? }
    private struct FieldKey: Hashable { var id: Int; var k: Int }
    private var shapeIDs: [ShapeKey: Int] = [:]
    private var profiles: [Int: ShapeProfile] = [:]
    private var nextShape = 1
    private var fieldsSent = Set<FieldKey>()
    /// Shapes that move no pixel of the image.
    private var movesNothing = Set<ShapeKey>()
    private var fieldsUsed: [FieldKey] = []
    /// Whether sending the remaining fields is queued.
    private var fieldsQueued = false
    private var imageStamp = 0
    private var imageMessage: [UInt8] = []
    private var lastImage: RGBAImage?
    /// The page message the last run includes (`SceneMessage.answers`).
    private var answered = 0
    /// The last scene message and its states (sent again to each page that connects).
    private var lastScene: String?
    private var statesMessage: [UInt8] = []
    /// The cutout layers the current clip's frames use, by layer (kept
    /// alive here so that an identifier is never reused), with their ids;
    /// the ids every page has.
    private var cutoutIDs: [ObjectIdentifier: (layer: CutoutLayer, id: Int)] = [:]
    private var nextCutout = 1
    private var cutoutsSent = Set<Int>()
    /// The layers the frames gone through since the last scene message use.
    private var cutoutsUsed = Set<ObjectIdentifier>()
    /// The soundtrack the pages have (`sound` message), and its id.
    private var soundSent: (track: AudioTrack?, id: Int) = (nil, 0)

    /// The page's files and the shaders, by path (`/`, `/app.js`, `/shaders/wobble.frag`).
    public static var assets: [String: ServedAsset] {
        var out: [String: ServedAsset] = [:]
        for (name, text) in PageAssets.all {
            let type = name.hasSuffix(".html") ? "text/html; charset=utf-8"
                : name.hasSuffix(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8"
            out["/" + name] = ServedAsset(contentType: type, bytes: Array(text.utf8))
        }
        out["/"] = out["/index.html"]
        for (name, text) in ShaderData.sources {
            out["/shaders/" + name] = ServedAsset(contentType: "text/plain; charset=utf-8", bytes: Array(text.utf8))
        }
        return out
    }

    /// A studio for the scene of `options`, listening on `host`:`port` (0:
    /// a free port) once started.
    public init(options: SessionOptions, host: String = "127.0.0.1", port: Int = 0,
                token: String = ServerConfig.randomToken(), log: @escaping @Sendable (String) -> Void = { printError($0) }) {
        core = StudioCore(session: options, verbose: false, clock: MonotonicClock(),
                          audio: { PageAudioSink() })
        var config = ServerConfig(token: token)
        config.host = host
        config.port = port
        sceneFolder = core.sceneFolder
        config.folder = sceneFolder.string
        config.assets = StudioServer.assets
        server = HTTPServer(config, log: log)
        self.log = log
    }

    /// The page's address with the token.
    public var url: String { server.url }

    /// Runs the scene once (its error, if any, is shown on the page and
    /// logged; the page then shows the last good clip, or nothing), starts
    /// listening and watching the scene's inputs. Throws when the address
    /// cannot be listened on.
    public func start() throws {
        queue.sync {
            core.start()
            settle()
            if let e = core.run.error { log("wobble-run: \(e)") }
            sentRun = runMark
            sentSnapshot = core.snapshot()
            lastScene = sceneMessage(focus: 0)
            if let t = core.player.track { soundSent = (t, 1) }
            // No page yet: each one gets the layers when it connects (`greet`).
            cutoutsSent = Set(cutoutIDs.values.map(\.id))
        }
        server.onOpen = { [weak self] id in
            guard let me = self else { return }
            me.queue.async { me.greet(id) }
        }
        server.onMessage = { [weak self] id, text in self?.receive(id, text) }
        try server.start()
        timer = queue.repeating(every: StudioServer.turn) { [weak self] in self?.turnOnce() }
    }

    /// How often the core turns without page messages (a run or an
    /// export ended, the inputs changed, a take's clock).
    static let turn = 0.05

    /// Stops watching and serving: a run in flight is abandoned, an export
    /// stopped, unsaved edits named on stderr (not saved).
    public func stop() {
        timer?.cancel()
        timer = nil
        server.stop()
        queue.sync { core.finish() }
    }

    deinit { timer?.cancel() }

    // MARK: on the queue

    /// A new page gets the image, every field the scene uses, then the scene.
    private func greet(_ socket: Int) {
        server.send(StudioProtocol.json(StudioProtocol.HelloMessage(scene: core.sceneName).json), to: socket)
        if !imageMessage.isEmpty { server.send(binary: imageMessage, to: socket) }
        for f in fieldsUsed { if let m = fieldMessage(f) { server.send(binary: m, to: socket) } }
        for c in cutoutIDs.values { server.send(binary: cutoutMessage(c.layer, id: c.id), to: socket) }
        if let lastScene {
            if !statesMessage.isEmpty { server.send(binary: statesMessage, to: socket) }
            server.send(lastScene, to: socket)
        }
        if let sentSnapshot { server.send(StudioProtocol.json(StudioProtocol.StudioMessage(studio: sentSnapshot).json), to: socket) }
        server.send(StudioProtocol.json(StudioProtocol.KeysMessage(keys: StudioKeyMap.help).json), to: socket)
        if soundSent.track != nil { server.send(binary: StudioProtocol.soundMessage(soundSent.track, id: soundSent.id), to: socket) }
        // The frames past the end again (to every page: they are few).
        tailSent = nil
    }

    /// A turn of the core without page messages.
    private func turnOnce() {
        core.tick()
        push(focus: core.currentIndex)
    }

    /// Turns the core until the run it asked for ended (a poke's, an
    /// edit's, a save's: the page waits for it), or until a stop signal
    /// came (`serve` then stops at once, the run abandoned).
    private func settle() {
        core.tick()
        let end = monotonic() + 60
        while core.isRunning, monotonic() < end, Signals.received == nil {
            _ = core.waitForRun(upTo: 0.1)
            core.tick()
        }
    }

    private var runMark: RunMark {
        let run = core.run
        return RunMark(generation: run.generation, error: run.error, unsaved: run.unsaved, performed: run.performed, warnings: run.warnings)
    }

    /// Sends the pages what changed: the scene after a run, the snapshot,
    /// an export's file.
    private func push(focus: Int, fromPage: Bool = false) {
        let mark = runMark
        if mark != sentRun {
            if mark.error != sentRun?.error, let e = mark.error { log("wobble-run: \(e)") }
            sentRun = mark
            broadcast(focus: focus)
        } else if fromPage {
            queueRemainingFields()
        }
        if core.player.track !== soundSent.track { sendSound() }
        let snap = core.snapshot()
        if snap != sentSnapshot {
            sentSnapshot = snap
            server.send(StudioProtocol.json(StudioProtocol.StudioMessage(studio: snap).json))
        }
        sendTail()
        if core.exporter.ended != exportsSeen {
            exportsSeen = core.exporter.ended
            let url = core.exporter.lastOutput.flatMap { fileURL($0) }
            server.send(StudioProtocol.json(StudioProtocol.ExportedMessage(ok: !core.messageIsError, message: core.message, url: url).json))
        }
    }

    private func broadcast(focus: Int = 0) {
        let (text, first) = sceneMessageAndFocusFields(focus: focus)
        lastScene = text
        // The image and the shown frame's fields before the scene that uses them.
        if imageStamp != sentImageStamp {
            server.send(binary: imageMessage)
            sentImageStamp = imageStamp
        }
        for f in first where !fieldsSent.contains(f) { sendField(f) }
        sendCutouts()
        if core.run.clip != nil { server.send(binary: statesMessage) }
        server.send(text)
        queueRemainingFields()
    }
    private var sentImageStamp = 0

    /// The soundtrack changed (a run's new sound, or none): the pages get it.
    private func sendSound() {
        let track = core.player.track
        soundSent = (track, track == nil ? soundSent.id : soundSent.id + 1)
        server.send(binary: StudioProtocol.soundMessage(track, id: track == nil ? 0 : soundSent.id))
    }

    private func sendField(_ f: FieldKey) {
        guard let m = fieldMessage(f) else { return }
        server.send(binary: m)
        fieldsSent.insert(f)
    }

    /// Sends the fields the scene uses that the pages lack, a few per turn
    /// of the queue, and none while a page message waits (its run sends
    /// what it needs first and queues this again).
    private func queueRemainingFields() {
        guard !fieldsQueued, fieldsUsed.contains(where: { !fieldsSent.contains($0) }) else { return }
        fieldsQueued = true
        queue.async { [weak self] in self?.sendRemainingFields() }
    }

    private func sendRemainingFields() {
        fieldsQueued = false
        guard !inbox.withLock({ draining }) else { return }
        var n = 0
        for f in fieldsUsed where !fieldsSent.contains(f) {
            sendField(f)
            n += 1
            if n == 2 { break }
        }
        queueRemainingFields()
    }

    /// Sends the cutout layers the frames use that the pages lack (before
    /// the states that name them: a layer is needed by every frame that
    /// moves its region, so it goes whole, at once).
    private func sendCutouts() {
        for c in cutoutIDs.values.sorted(by: { $0.id < $1.id }) where !cutoutsSent.contains(c.id) {
            server.send(binary: cutoutMessage(c.layer, id: c.id))
            cutoutsSent.insert(c.id)
        }
    }

    /// The binary `cutout` message of a layer: its box, then the object
    /// (premultiplied RGBA8) and the plate (straight RGBA8) of the box,
    /// then the mask over the box (one byte a pixel: the page outlines it
    /// as the window does).
    private func cutoutMessage(_ layer: CutoutLayer, id: Int) -> [UInt8] {
        let b = layer.box
        var mask = [UInt8]()
        mask.reserveCapacity(b.area)
        for y in b.y0 ..< b.y1 { mask += layer.mask.pixels[(y * layer.mask.width + b.x0) ..< (y * layer.mask.width + b.x1)] }
        return StudioProtocol.binary(header: ["id": id, "x0": b.x0, "y0": b.y0, "width": b.width, "height": b.height],
                                     type: "cutout", payload: layer.object + layer.plate + mask)
    }

    /// The id of a cutout layer, made on first use.
    private func cutoutID(_ layer: CutoutLayer) -> Int {
        let key = ObjectIdentifier(layer)
        cutoutsUsed.insert(key)
        if let c = cutoutIDs[key], c.layer === layer { return c.id }
        let id = nextCutout
        nextCutout += 1
        cutoutIDs[key] = (layer, id)
        return id
    }

    /// The binary `field` message of a shape's grid field (nil: the shape is gone).
    private func fieldMessage(_ f: FieldKey) -> [UInt8]? {
        guard let p = profiles[f.id] else { return nil }
        let values = f.k == 0 ? [] : p.field(grid: f.k)
        let payload = values.withUnsafeBufferPointer { Array(UnsafeRawBufferPointer($0)) }
        return StudioProtocol.binary(header: ["id": f.id, "k": f.k, "x0": p.x0, "y0": p.y0, "width": p.width, "height": p.height],
                                     type: "field", payload: payload)
    }

    private func receive(_ socket: Int, _ text: String) {
        let start = inbox.withLock { () -> Bool in
            pending.append((socket, text))
            if draining { return false }
            draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Performs every page message that came meanwhile, then runs the
    /// scene once (when one changed anything) and pushes what changed.
    private func drain() {
        let batch = inbox.withLock { () -> [(socket: Int, text: String)] in
            let b = pending
            pending = []
            draining = false
            return b
        }
        for (socket, text) in batch {
            switch StudioProtocol.decode(text) {
            case .failure(let e): reply(socket, error: e.message)
            case .success(let m): perform(m, socket: socket)
            }
        }
        settle()
        push(focus: core.currentIndex, fromPage: true)
    }

    private func reply(_ socket: Int, error message: String) {
        log("serve: \(message)")
        server.send(StudioProtocol.json(StudioProtocol.ErrorMessage(message: message).json), to: socket)
    }

    /// Performs one page message: the page's frame first (the frame a
    /// poke, a selection or an added region is at), then its commands, its
    /// key (as the window's key map makes it a command), its text. A
    /// command the core refuses with an error is answered with that error.
    private func perform(_ m: StudioProtocol.PageMessage, socket: Int) {
        if let seq = m.seq { answered = max(answered, seq) }
        let shown = core.run
        if let f = m.frame, shown.clip != nil, !core.recorder.isRecording, f != core.currentIndex {
            core.perform(.seek(frame: f))
        }
        for c in m.commands { run(c, socket: socket) }
        if let k = m.key {
            let center = shown.image.map { Point(Double($0.width) / 2, Double($0.height) / 2) } ?? Point(0, 0)
            if let c = StudioKeyMap.command(for: k.name, shift: k.shift ?? false, ctrl: k.ctrl ?? false, in: core,
                                            addAt: { k.at ?? center }) {
                run(c, socket: socket)
            }
        }
        if let t = m.text {
            for c in StudioKeyMap.commands(text: t, renaming: core.inspector.isRenaming, choosing: core.chooser != nil) {
                run(c, socket: socket)
            }
        }
    }

    private func run(_ c: StudioCommand, socket: Int) {
        var c = c
        switch c {
        case .pressTick(let t?):
            // Only the tick's reference travels: the tick is the core's own.
            c = .pressTick(core.ticks.first { $0.ref != nil && $0.ref == t.ref })
        case .quit, .answerQuit:
            // The page's tab closes it (the browser asks about unsaved edits).
            core.say("the page does not quit the server: close the tab (Ctrl+C in the terminal stops it)")
            return
        default: break
        }
        let before = (core.message, core.messageIsError)
        core.perform(c)
        if c == .save {
            let ok = !core.messageIsError
            server.send(StudioProtocol.json(StudioProtocol.SavedMessage(ok: ok, message: core.message).json), to: socket)
            if !ok { log("serve: save: \(core.message)") }
        } else if core.messageIsError, core.message != before.0 || !before.1 {
            reply(socket, error: core.message)
        }
    }

    // MARK: the scene message

    /// Builds the scene message of the session now (and the image message
    /// it needs).
    func sceneMessage(focus: Int) -> String { sceneMessageAndFocusFields(focus: focus).text }

    /// The scene message; notes the fields it uses (`fieldsUsed`, those of
    /// frame `focus` first, which are also returned).
    private func sceneMessageAndFocusFields(focus: Int) -> (text: String, focus: [FieldKey]) {
        let run = core.run
        let name = core.sceneName
        guard let clip = run.clip, let image = run.image else {
            fieldsUsed = []
            return (StudioProtocol.json(StudioProtocol.ErrorMessage(message: run.error ?? "the scene has no clip").json), [])
        }
        if lastImage != image {
            lastImage = image
            imageStamp += 1
            imageMessage = StudioProtocol.binary(header: ["stamp": imageStamp, "width": image.width, "height": image.height],
                                                 type: "image", payload: image.pixels)
            shapeIDs = [:]
            profiles = [:]
            movesNothing = []
            fieldsSent = []
        }
        var used = Set<Int>()
        cutoutsUsed = []
        var notes = Set<String>()
        // The `states` message's numbers (StudioProtocol.states).
        var states: [Double] = [Double(clip.frameCount)]
        var fields: [FieldKey] = [], seen = Set<FieldKey>(), focusFields: [FieldKey] = []
        states.reserveCapacity(1 + clip.frameCount * 8)
        let shown = min(max(0, focus), max(0, clip.frameCount - 1))
        for k in 0..<clip.frameCount {
            appendFrame(k, of: run, image: image, to: &states, notes: &notes) { f in
                used.insert(f.id)
                if k == shown { focusFields.append(f) }
                if seen.insert(f).inserted { fields.append(f) }
            }
        }
        // Every cutout of the clip, also one whose region never moves (no
        // frame draws it): the page outlines each, as the window does.
        for layer in clip.cutouts.values.sorted(by: { ($0.box.y0, $0.box.x0, $0.box.y1, $0.box.x1) < ($1.box.y0, $1.box.x0, $1.box.y1, $1.box.x1) }) {
            _ = cutoutID(layer)
        }
        // Shapes no frame uses any more are forgotten.
        for (key, id) in shapeIDs where !used.contains(id) {
            shapeIDs[key] = nil
            profiles[id] = nil
        }
        // Layers the clip no longer has are forgotten (pages drop them: the
        // scene lists those it has).
        for (key, c) in cutoutIDs where !cutoutsUsed.contains(key) {
            cutoutIDs[key] = nil
            cutoutsSent.remove(c.id)
        }
        fieldsSent = fieldsSent.filter { used.contains($0.id) }
        fieldsUsed = focusFields + fields.filter { !focusFields.contains($0) }
        let message = StudioProtocol.SceneMessage(
            generation: run.generation, answers: answered, scene: name, imageStamp: imageStamp,
            imageURL: run.imagePath.flatMap { fileURL($0) }, width: image.width, height: image.height, fps: clip.fps,
            frameCount: clip.frameCount, duration: clip.length, overlap: clip.overlap.rawValue, edges: clip.edges.rawValue,
            sketches: core.sketches().map(StudioServer.sketch), warnings: run.warnings,
            error: run.error, unsaved: run.unsaved, performed: run.performed,
            notes: notes.sorted(), cutouts: cutoutIDs.values.map(\.id).sorted())
        statesMessage = StudioProtocol.binary(header: ["generation": run.generation], type: "states",
                                              payload: StudioProtocol.float64Payload(states))
        return (StudioProtocol.json(message.json), focusFields)
    }

    /// Appends frame `k`'s part of a `states` message (its number of
    /// regions, then each one's entry's length and entry) to `states`;
    /// `uses` hears the two fields of each region entry.
    private func appendFrame(_ k: Int, of run: StudioRun, image: RGBAImage, to states: inout [Double], notes: inout Set<String>,
                             uses: (FieldKey) -> Void) {
        let countAt = states.count
        states.append(0)
        for r in run.frameState(k)?.regions ?? [] where r.movesPixels {
            guard let (id, profile) = shape(r.shape, pin: r.pin, width: image.width, height: image.height),
                  let b = profile.blend(peak: r.peak) else { continue }
            let cutout = r.cutout.map { Double(cutoutID($0)) } ?? 0
            var entry = [Double(id), Double(b.k), Double(b.t), r.direction.x, r.direction.y, r.swing, cutout]
            for s in b.settled { entry += [Double(s.index), Double(s.m)] }
            states.append(Double(entry.count))
            states += entry
            states[countAt] += 1
            uses(FieldKey(id: id, k: b.k))
            uses(FieldKey(id: id, k: b.k + 1))
        }
    }

    // MARK: frames past the end while a take records

    /// While a take records, the page's clip runs on past the scripted
    /// clip's end (the live clock the take is stamped with), as the
    /// window's does: the pages get those frames' states (`states` with a
    /// `from`), a little ahead of the core's playhead, and the fields they
    /// use. The run (generation) and the first frame not sent yet.
    private var tailSent: (generation: Int, next: Int)?
    /// How far ahead of the core's playhead the frames past the end go (seconds).
    static let tailAhead = 1.5

    private func sendTail() {
        let run = core.run
        guard core.recorder.isRecording, let clip = run.clip, let image = run.image, !statesMessage.isEmpty else {
            tailSent = nil
            return
        }
        let generation = run.generation
        let from = tailSent.flatMap { $0.generation == generation ? $0.next : nil } ?? clip.frameCount
        let end = max(core.currentIndex, clip.frameCount) + Int((StudioServer.tailAhead * clip.fps).rounded(.up))
        guard from < end else { return }
        var states: [Double] = [Double(end - from)]
        var notes = Set<String>()
        var fields: [FieldKey] = []
        for k in from..<end {
            appendFrame(k, of: run, image: image, to: &states, notes: &notes) { f in
                if !fieldsSent.contains(f), !fields.contains(f) { fields.append(f) }
            }
        }
        for f in fields { sendField(f) }
        sendCutouts()
        server.send(binary: StudioProtocol.binary(header: ["generation": generation, "from": from], type: "states",
                                                  payload: StudioProtocol.float64Payload(states)))
        tailSent = (generation, end)
    }

    /// The id and profile of a shape, made on first use; nil when it moves no pixel.
    private func shape(_ shape: RegionShape, pin: PinSide?, width: Int, height: Int) -> (Int, ShapeProfile)? {
        let key = ShapeKey(shape: shape, pin: pin)
        if let id = shapeIDs[key], let p = profiles[id] { return (id, p) }
        if movesNothing.contains(key) { return nil }
        guard let p = ShapeProfile(shape: shape, pin: pin, width: width, height: height) else {
            movesNothing.insert(key)
            return nil
        }
        let id = nextShape
        nextShape += 1
        shapeIDs[key] = id
        profiles[id] = p
        return (id, p)
    }

    /// `/files/NAME` of a file of the scene's folder (nil: elsewhere).
    private func fileURL(_ path: String) -> String? {
        guard let rel = AbsolutePath(path).relative(inside: sceneFolder) else { return nil }
        return "/files/" + (rel.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? rel)
    }

    /// A sketch as the scene message has it.
    private static func sketch(_ s: StudioSketch) -> StudioProtocol.Sketch {
        let (kind, index): (String, Int)
        switch s.kind {
        case .call(let i): (kind, index) = ("call", i)
        case .added(let i): (kind, index) = ("added", i)
        }
        return .init(kind: kind, index: index, name: s.name, line: s.line, editable: s.editable, locked: s.locked,
                     points: .init(s.points), motion: s.motion, strength: s.strength, duration: s.duration, pin: s.pin?.rawValue)
    }
}
