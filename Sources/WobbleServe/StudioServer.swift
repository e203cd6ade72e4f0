import Foundation
import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleScript
import WobbleSystem

/// The browser studio (`wobble-run serve SCENE.lua`): a live session behind
/// an `HTTPServer`. The page's files and the renderer's shader sources are
/// served from memory; the session's scene, the image's pixels, each
/// region shape's displacement fields (`ShapeProfile`: one per grid peak
/// the clip uses, each sent once) and every frame's region state go over
/// the WebSocket (`StudioProtocol`), so the page draws the frames itself.
/// After a change the fields of the frame the page shows go first, then
/// the scene, then the clip's other fields, a few at a time while no page
/// message waits (a drag's next step comes before them). Page
/// messages (pokes, shakes, handle drags, save) are applied on one serial
/// queue that owns the session, batched: a burst of drags makes one run.
/// The scene's inputs are watched; a change runs the scene again and the
/// new scene is pushed to every page.
public final class StudioServer: @unchecked Sendable {
    public let server: HTTPServer
    /// The session; touched only on `queue`.
    let session: LiveSession
    let queue = DispatchQueue(label: "wobble-run.serve.session")
    private let watch: InputWatch
    private var timer: DispatchSourceTimer?
    private let log: @Sendable (String) -> Void

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
        session = LiveSession(options: options)
        var config = ServerConfig(token: token)
        config.host = host
        config.port = port
        config.folder = ScenePaths.folder(ScenePaths.absolute(options.scenePath))
        config.assets = StudioServer.assets
        server = HTTPServer(config, log: log)
        watch = InputWatch(scenePath: options.scenePath, tree: false)
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
            if !session.run(), let e = session.error { log("wobble-run: \(e.description)") }
            watch.reset(extra: session.inputs)
            lastScene = sceneMessage(focus: 0)
        }
        server.onOpen = { [weak self] id in
            guard let me = self else { return }
            me.queue.async { me.greet(id) }
        }
        server.onMessage = { [weak self] id, text in self?.receive(id, text) }
        try server.start()
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + watch.pollInterval, repeating: watch.pollInterval)
        t.setEventHandler { [weak self] in self?.pollInputs() }
        t.resume()
        timer = t
    }

    /// Stops watching and serving (the session's edits are not saved).
    public func stop() {
        timer?.cancel()
        timer = nil
        server.stop()
        queue.sync {}
    }

    deinit { timer?.cancel() }

    // MARK: on the queue

    /// A new page gets the image, every field the scene uses, then the scene.
    private func greet(_ socket: Int) {
        if !imageMessage.isEmpty { server.send(binary: imageMessage, to: socket) }
        for f in fieldsUsed { if let m = fieldMessage(f) { server.send(binary: m, to: socket) } }
        if let lastScene {
            if !statesMessage.isEmpty { server.send(binary: statesMessage, to: socket) }
            server.send(lastScene, to: socket)
        }
    }

    private func pollInputs() {
        guard watch.poll(extra: session.inputs) != nil else { return }
        rerun()
    }

    /// Runs the scene and pushes the new scene to every page; `focus`: the
    /// frame the page shows (its fields go first).
    private func rerun(focus: Int = 0) {
        if !session.run(), let e = session.error { log("wobble-run: \(e.description)") }
        watch.reset(extra: session.inputs)
        broadcast(focus: focus)
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
        if session.clip != nil { server.send(binary: statesMessage) }
        server.send(text)
        queueRemainingFields()
    }
    private var sentImageStamp = 0

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

    /// Applies every page message that came meanwhile, then runs the scene
    /// once and pushes it (when one changed anything).
    private func drain() {
        let batch = inbox.withLock { () -> [(socket: Int, text: String)] in
            let b = pending
            pending = []
            draining = false
            return b
        }
        var changed = false
        var focus: Int?
        for (socket, text) in batch {
            guard let data = text.data(using: .utf8),
                  let m = try? JSONDecoder().decode(StudioProtocol.PageMessage.self, from: data) else {
                reply(socket, error: "not a studio message: \(HTTPServer.printable(String(text.prefix(80))))")
                continue
            }
            if let seq = m.seq { answered = max(answered, seq) }
            if let f = m.frame, f >= 0 { focus = f }
            switch apply(m, socket: socket) {
            case .failure(let refusal): reply(socket, error: refusal.message)
            case .success(let ran): changed = changed || ran
            }
        }
        if changed { rerun(focus: focus ?? 0) } else { queueRemainingFields() }
    }

    private func reply(_ socket: Int, error message: String) {
        log("serve: \(message)")
        server.send(StudioProtocol.json(StudioProtocol.ErrorMessage(message: message)), to: socket)
    }

    private struct Refusal: Error { var message: String }

    /// Applies one page message; whether the scene must run again.
    private func apply(_ m: StudioProtocol.PageMessage, socket: Int) -> Result<Bool, Refusal> {
        guard let clip = session.clip else { return .failure(Refusal(message: "\(m.type): the scene has not run yet")) }
        func time(_ frame: Int?) -> Double? {
            guard let f = frame, f >= 0, f < 10_000_000 else { return nil }
            return Double(f) / clip.fps
        }
        switch m.type {
        case "poke":
            guard let t = time(m.frame), let x0 = m.x0, let y0 = m.y0, let x1 = m.x1, let y1 = m.y1,
                  [x0, y0, x1, y1].allSatisfy({ $0.isFinite && abs($0) < 1e7 }) else {
                return .failure(Refusal(message: "poke: needs frame, x0, y0, x1, y1 (numbers)"))
            }
            session.setPerformed(session.performed + [PerformedEvent(time: t, action: .touch(from: Point(x0, y0), to: Point(x1, y1)))])
            return .success(true)
        case "shake":
            guard let t = time(m.frame), let ax = m.ax, let ay = m.ay, ax.isFinite, ay.isFinite, abs(ax) < 100, abs(ay) < 100 else {
                return .failure(Refusal(message: "shake: needs frame, ax, ay (numbers)"))
            }
            session.setPerformed(session.performed + [PerformedEvent(time: t, action: .shake(ax: ax, ay: ay))])
            return .success(true)
        case "clear":
            session.setPerformed([])
            return .success(true)
        case "edit":
            guard let index = m.index, let kindName = m.kind, let points = m.points?.sketchPoints else {
                return .failure(Refusal(message: "edit: needs kind, index and points (four corners, a center or null)"))
            }
            let kind: SketchOrigin.Kind
            switch kindName {
            case "call":
                let (call, problem) = session.editableCall(index)
                guard call != nil else { return .failure(Refusal(message: problem ?? "edit: no sketch \(index)")) }
                kind = .call(index)
            case "added": kind = .added(index)
            default: return .failure(Refusal(message: "edit: kind is 'call' or 'added'"))
            }
            guard var state = session.currentState(kind) else { return .failure(Refusal(message: "edit: no sketch \(kindName) \(index)")) }
            state.points = points
            session.setState(kind, state)
            return .success(true)
        case "save":
            let answer: StudioProtocol.SavedMessage
            do {
                let (edited, added) = try session.saveEdits()
                watch.reset(extra: session.inputs)
                answer = .init(ok: true, message: "saved \(ScenePaths.name(session.options.scenePath)): \(edited) edited, \(added) added")
            } catch let e as LiveSession.SaveError {
                answer = .init(ok: false, message: e.message)
            } catch {
                answer = .init(ok: false, message: "\(error)")
            }
            server.send(StudioProtocol.json(answer), to: socket)
            if !answer.ok { log("serve: save: \(answer.message)") }
            // The saved scene ran: every page gets it.
            if answer.ok { broadcast() }
            return .success(false)
        default:
            return .failure(Refusal(message: "unknown message type '\(HTTPServer.printable(m.type))'"))
        }
    }

    // MARK: the scene message

    /// Builds the scene message of the session now (and the image message
    /// it needs).
    func sceneMessage(focus: Int) -> String { sceneMessageAndFocusFields(focus: focus).text }

    /// The scene message; notes the fields it uses (`fieldsUsed`, those of
    /// frame `focus` first, which are also returned).
    private func sceneMessageAndFocusFields(focus: Int) -> (text: String, focus: [FieldKey]) {
        let name = ScenePaths.name(session.options.scenePath)
        guard let clip = session.clip, let image = session.image else {
            fieldsUsed = []
            return (StudioProtocol.json(StudioProtocol.ErrorMessage(message: session.error?.description ?? "the scene has no clip")), [])
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
        var notes = Set<String>()
        // The `states` message's numbers (StudioProtocol.states).
        var states: [Double] = [Double(clip.frameCount)]
        var fields: [FieldKey] = [], seen = Set<FieldKey>(), focusFields: [FieldKey] = []
        states.reserveCapacity(1 + clip.frameCount * 8)
        let shown = min(max(0, focus), max(0, clip.frameCount - 1))
        for k in 0..<clip.frameCount {
            let countAt = states.count
            states.append(0)
            for r in session.frameState(k)?.regions ?? [] where r.movesPixels {
                if r.cutout != nil { notes.insert("cutouts are drawn as plain regions in the page") }
                guard let (id, profile) = shape(r.shape, pin: r.pin, width: image.width, height: image.height),
                      let b = profile.blend(peak: r.peak) else { continue }
                used.insert(id)
                var entry = [Double(id), Double(b.k), Double(b.t), r.direction.x, r.direction.y, r.swing]
                for s in b.settled { entry += [Double(s.index), Double(s.m)] }
                states.append(Double(entry.count))
                states += entry
                states[countAt] += 1
                for f in [FieldKey(id: id, k: b.k), FieldKey(id: id, k: b.k + 1)] {
                    if k == shown { focusFields.append(f) }
                    if seen.insert(f).inserted { fields.append(f) }
                }
            }
        }
        // Shapes no frame uses any more are forgotten.
        for (key, id) in shapeIDs where !used.contains(id) {
            shapeIDs[key] = nil
            profiles[id] = nil
        }
        fieldsSent = fieldsSent.filter { used.contains($0.id) }
        fieldsUsed = focusFields + fields.filter { !focusFields.contains($0) }
        var ticks = session.scriptKicks.map { StudioProtocol.Tick(time: $0.time, kind: $0.kind, line: $0.line) }
        for e in session.performed {
            let t = e.anchor == .start ? e.time : session.scriptedDuration + e.time
            switch e.action {
            case .touch: ticks.append(.init(time: t, kind: "poke", line: nil))
            case .shake: ticks.append(.init(time: t, kind: "shake", line: nil))
            }
        }
        let message = StudioProtocol.SceneMessage(
            generation: session.generation, answers: answered, scene: name, imageStamp: imageStamp,
            imageURL: imageURL(), width: image.width, height: image.height, fps: clip.fps, frameCount: clip.frameCount,
            duration: clip.length, overlap: clip.overlap.rawValue, edges: clip.edges.rawValue,
            sketches: sketches(clip), ticks: ticks.sorted { $0.time < $1.time }, warnings: session.warnings,
            error: session.error?.description, unsaved: session.hasUnsavedEdits, performed: session.performed.count,
            notes: notes.sorted())
        statesMessage = StudioProtocol.binary(header: ["generation": session.generation], type: "states",
                                              payload: StudioProtocol.float64Payload(states))
        return (StudioProtocol.json(message), focusFields)
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

    /// `/files/NAME` of the image when it is a file of the scene's folder.
    private func imageURL() -> String? {
        guard let path = session.imagePathInUse else { return nil }
        let folder = ScenePaths.folder(ScenePaths.absolute(session.options.scenePath))
        let abs = ScenePaths.absolute(path)
        guard abs.hasPrefix(folder + "/") else { return nil }
        let rel = String(abs.dropFirst(folder.count + 1))
        return "/files/" + (rel.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? rel)
    }

    /// The sketches with their handles: those of the last frame (the live
    /// models), then those of frame 0 not among them.
    private func sketches(_ clip: Clip) -> [StudioProtocol.Sketch] {
        var seen = Set<SketchOrigin.Kind>()
        var out: [StudioProtocol.Sketch] = []
        for k in [clip.frameCount - 1, 0] {
            for h in session.handleShapes(atFrame: k) {
                guard let origin = h.origin, !seen.contains(origin.kind), let state = session.currentState(origin.kind) else { continue }
                seen.insert(origin.kind)
                let kind: String, index: Int, editable: Bool, locked: String?
                switch origin.kind {
                case .call(let i):
                    let (call, problem) = session.editableCall(i)
                    (kind, index, editable, locked) = ("call", i, call != nil, call == nil ? problem : nil)
                case .added(let i): (kind, index, editable, locked) = ("added", i, true, nil)
                }
                out.append(.init(kind: kind, index: index, name: state.name, line: origin.line, editable: editable, locked: locked,
                                 points: .init(state.points), motion: state.parameters.motion.rawValue,
                                 strength: state.parameters.strength, duration: state.parameters.duration,
                                 pin: state.parameters.pin?.rawValue))
            }
        }
        return out
    }
}
