import Foundation
import WobbleCore
import WobbleEngine
import WobbleRender
import WobbleScript
import WobbleSystem

/// The browser studio (`wobble-run serve SCENE.lua`): a live session behind
/// an `HTTPServer`. The page's files and the renderer's shader sources are
/// served from memory; the session's scene, the image's pixels, each
/// region shape's geometry and every frame's region state go over the
/// WebSocket (`StudioProtocol`), so the page draws the frames itself. Page
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

    /// Geometry ids by shape, their binary messages (the shapes of the
    /// current clip), and the image's stamp and message.
    private struct ShapeKey: Hashable { var shape: RegionShape; var pin: PinSide? }
    private var geometryIDs: [ShapeKey: Int] = [:]
    private var geometryMessages: [Int: [UInt8]] = [:]
    private var nextGeometry = 1
    private var imageStamp = 0
    private var imageMessage: [UInt8] = []
    private var lastImage: RGBAImage?
    /// The page message the last run includes (`SceneMessage.answers`).
    private var answered = 0
    /// The last scene message (sent again to each page that connects).
    private var lastScene: String?

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
            lastScene = sceneMessage()
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

    private func greet(_ socket: Int) {
        if !imageMessage.isEmpty { server.send(binary: imageMessage, to: socket) }
        for (_, m) in geometryMessages.sorted(by: { $0.key < $1.key }) { server.send(binary: m, to: socket) }
        if let lastScene { server.send(lastScene, to: socket) }
    }

    private func pollInputs() {
        guard watch.poll(extra: session.inputs) != nil else { return }
        rerun()
    }

    /// Runs the scene and pushes the new scene to every page.
    private func rerun() {
        if !session.run(), let e = session.error { log("wobble-run: \(e.description)") }
        watch.reset(extra: session.inputs)
        broadcast()
    }

    private func broadcast() {
        let before = Set(geometryMessages.keys)
        let text = sceneMessage()
        lastScene = text
        // The image and new geometries before the scene that uses them.
        if imageStamp != sentImageStamp {
            server.send(binary: imageMessage)
            sentImageStamp = imageStamp
        }
        for id in geometryMessages.keys.sorted() where !before.contains(id) { server.send(binary: geometryMessages[id]!) }
        server.send(text)
    }
    private var sentImageStamp = 0

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
        for (socket, text) in batch {
            guard let data = text.data(using: .utf8),
                  let m = try? JSONDecoder().decode(StudioProtocol.PageMessage.self, from: data) else {
                reply(socket, error: "not a studio message: \(HTTPServer.printable(String(text.prefix(80))))")
                continue
            }
            if let seq = m.seq { answered = max(answered, seq) }
            switch apply(m, socket: socket) {
            case .failure(let refusal): reply(socket, error: refusal.message)
            case .success(let ran): changed = changed || ran
            }
        }
        if changed { rerun() }
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

    /// Builds the scene message of the session now; makes the image and
    /// geometry messages it needs.
    func sceneMessage() -> String {
        let name = ScenePaths.name(session.options.scenePath)
        guard let clip = session.clip, let image = session.image else {
            return StudioProtocol.json(StudioProtocol.ErrorMessage(message: session.error?.description ?? "the scene has no clip"))
        }
        if lastImage != image {
            lastImage = image
            imageStamp += 1
            imageMessage = StudioProtocol.binary(header: ["stamp": imageStamp, "width": image.width, "height": image.height],
                                                 type: "image", payload: image.pixels)
        }
        var used = Set<Int>()
        var notes = Set<String>()
        var frames: [[[Double]]] = []
        frames.reserveCapacity(clip.frameCount)
        for k in 0..<clip.frameCount {
            var regions: [[Double]] = []
            for r in session.frameState(k)?.regions ?? [] where r.movesPixels {
                if r.cutout != nil { notes.insert("cutouts are drawn as plain regions in the page") }
                guard let id = geometryID(r.shape, pin: r.pin, width: image.width, height: image.height) else { continue }
                used.insert(id)
                regions.append([Double(id), r.peak, r.direction.x, r.direction.y, r.swing, r.pin == nil ? 0 : 1])
            }
            frames.append(regions)
        }
        // Shapes no frame uses any more are forgotten.
        for (key, id) in geometryIDs where !used.contains(id) {
            geometryIDs[key] = nil
            geometryMessages[id] = nil
        }
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
            duration: Double(clip.frameCount) / clip.fps, overlap: clip.overlap.rawValue, edges: clip.edges.rawValue,
            frames: frames, sketches: sketches(clip), ticks: ticks.sorted { $0.time < $1.time }, warnings: session.warnings,
            error: session.error?.description, unsaved: session.hasUnsavedEdits, performed: session.performed.count,
            notes: notes.sorted())
        return StudioProtocol.json(message)
    }

    /// The id of a shape's geometry, made (and its message) on first use;
    /// nil when it moves no pixel.
    private func geometryID(_ shape: RegionShape, pin: PinSide?, width: Int, height: Int) -> Int? {
        let key = ShapeKey(shape: shape, pin: pin)
        if let id = geometryIDs[key] { return id }
        guard let g = ShaderData.geometry(of: shape, pin: pin, width: width, height: height) else { return nil }
        let id = nextGeometry
        nextGeometry += 1
        geometryIDs[key] = id
        let payload = g.values.withUnsafeBufferPointer { Array(UnsafeRawBufferPointer($0)) }
        geometryMessages[id] = StudioProtocol.binary(header: ["id": id, "x0": g.x0, "y0": g.y0, "width": g.width, "height": g.height],
                                                     type: "geometry", payload: payload)
        return id
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
