import WobbleCore
import WobbleEngine

/// What a surface reads of the run shown, beside the snapshot: the clip
/// (its frames' states, fps, length, cutouts, loop) and the picture, which
/// are immutable values a page encodes whole and a window lays itself out
/// by, and the run's marks (generation, error, warnings, edits, pokes).
/// A surface takes it from `StudioCore.run`; it never reaches the live
/// session behind the core.
package struct StudioRun {
    /// Counts the session's runs (a new run: a new clip).
    package var generation: Int
    /// The clip of the last good run (nil: none yet).
    package var clip: Clip?
    /// The picture the clip is of.
    package var image: RGBAImage?
    /// The picture's file (nil: none read yet).
    package var imagePath: String?
    /// The scene file.
    package var scenePath: String
    /// The scripted clip's length in seconds (a take's events go on after it).
    package var scriptedDuration: Double
    /// The last run's error (the clip is then the last good one).
    package var error: String?
    /// The warnings a headless run of the scene prints.
    package var warnings: [String]
    /// Edits not written to the scene file.
    package var unsaved: Bool
    /// Pokes and shakes performed in the preview (not in the scene).
    package var performed: Int
    /// A run of the scene is in flight (its clip comes later).
    package var isRunning: Bool

    /// The clip's frame rate (30 without a clip).
    package var fps: Double { clip?.fps ?? 30 }

    /// The frame shown at clip time `t`.
    package func frameIndex(at t: Double) -> Int { clip?.frameIndex(at: t) ?? 0 }

    /// The state of frame `k` (frames past the end go on in closed form).
    package func frameState(_ k: Int) -> FrameState? { clip?.frame(max(0, k)) }

    /// The sketches and live models at frame `k` with the call that made each.
    package func handleShapes(atFrame k: Int) -> [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] {
        clip?.handleShapes(atFrame: k) ?? []
    }
}

/// The frame shown and what is drawn over it: its index and state (nil:
/// no clip yet), the run it is of, and the sketches' handles (none while
/// they are hidden).
package struct StudioFrame: Equatable {
    package var index: Int
    package var state: FrameState?
    package var generation: Int
    package var handlesShown: Bool
    package var handles: [StudioSnapshot.Handle]
}

/// One sketch of the scene with its handles as the edits have it: which
/// call made it, its local's name and line, whether a drag may edit it
/// (else `locked` says where it is computed), its points and parameters.
package struct StudioSketch: Equatable {
    package var kind: SketchOrigin.Kind
    package var name: String?
    package var line: Int?
    package var editable: Bool
    package var locked: String?
    package var points: SketchPoints
    package var motion: String
    package var strength: Double
    package var duration: Double
    package var pin: PinSide?
}

extension StudioCore {
    /// The run's frames as a window renders them: a frame state rendered
    /// through the session's renderer, the mapping, and the hooks for the
    /// window's own renderer and the size it renders at; nothing else of
    /// the live session. What to render (the frame shown, its state and
    /// handles) comes from `shownFrame()`. The core has no renderer of its
    /// own (it imports none): the engine's `LiveFrames` is the renderer's side.
    package var frames: LiveFrames { LiveFrames(session) }

    /// The frame the playhead is on with its state and handles, as the
    /// snapshot has them (`snapshot()` is made from it): what the window's
    /// presenter draws.
    package func shownFrame() -> StudioFrame {
        let k = currentIndex
        let shapes = handles ? session.handleShapes(atFrame: k) : []
        return StudioFrame(
            index: k, state: session.frameState(k), generation: session.generation, handlesShown: handles,
            handles: shapes.map { h in
                StudioSnapshot.Handle(kind: h.origin?.kind, shape: h.shape, editable: editor.isEditable(h.origin),
                                      selected: inspector.selected != nil && h.origin?.kind == inspector.selected)
            })
    }

    /// A run of the scene is in flight.
    package var isRunning: Bool { session.isRunning }

    /// Waits up to `seconds` for the run in flight to end (true: it ended,
    /// or none was in flight); `update` then swaps it in.
    package func waitForRun(upTo seconds: Double) -> Bool { session.waitForRun(upTo: seconds) }

    /// The run shown, as a value.
    package var run: StudioRun {
        StudioRun(generation: session.generation, clip: session.clip, image: session.image, imagePath: session.imagePathInUse,
                  scenePath: session.options.scenePath, scriptedDuration: session.scriptedDuration,
                  error: session.error?.description, warnings: session.warnings, unsaved: session.hasUnsavedEdits,
                  performed: session.performed.count, isRunning: session.isRunning)
    }

    /// The sketches with their handles: those of the last frame (the live
    /// models), then those of frame 0 not among them.
    package func sketches() -> [StudioSketch] {
        guard let clip = session.clip else { return [] }
        var seen = Set<SketchOrigin.Kind>()
        var out: [StudioSketch] = []
        for k in [clip.frameCount - 1, 0] {
            for h in session.handleShapes(atFrame: k) {
                guard let origin = h.origin, !seen.contains(origin.kind), let state = session.currentState(origin.kind) else { continue }
                seen.insert(origin.kind)
                let editable: Bool, locked: String?
                switch origin.kind {
                case .call(let i):
                    let (call, problem) = session.editableCall(i)
                    (editable, locked) = (call != nil, call == nil ? problem : nil)
                case .added: (editable, locked) = (true, nil)
                }
                out.append(StudioSketch(kind: origin.kind, name: state.name, line: origin.line, editable: editable, locked: locked,
                                        points: state.points, motion: state.parameters.motion.rawValue,
                                        strength: state.parameters.strength, duration: state.parameters.duration,
                                        pin: state.parameters.pin))
            }
        }
        return out
    }
}
