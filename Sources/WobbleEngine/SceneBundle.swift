import Foundation
import WobbleCore
import WobbleMedia

/// A scene bundle: what the web player (`<wobble-view>`, `Web/wobble-view.js`)
/// needs to play a clip as the headless render does, as versioned JSON
/// (docs/web.md describes every field):
///
/// - the size, frame rate, frame count, length, `overlap()`, `edges()`;
/// - `loop`: `{"period": P}` for a `loop()` scene, else absent (as a
///   model's `pin` and `cutout` when it has none);
/// - `models`: every wobble model of the clip, each with its shape (the
///   corners lt, rt, rb, lb and the center), its motion model's name and
///   parameters (every key its declaration lists), its pin, its cutout (an
///   index into `cutouts`) and its kicks `[t, dx, dy, a]` in time order: the
///   model's kick history at time `t` is these kicks up to `t` folded
///   through the model's `adding`, which the writer checks against the
///   engine's recorded histories (in a loop: the kicks of one period that
///   act, each repeating every period);
/// - `moments`: `[t, [model, …]]`, which models are live from `t` on, in
///   prepare order;
/// - `cutouts`: each layer's box `[x0, y0, w, h]`, its object (premultiplied
///   RGBA) and plate (straight RGBA) as lossless WebP data URLs;
/// - `picture`: the source image, WebP (alpha kept), as a data URL or a
///   file name beside the bundle.
package struct SceneBundle: Encodable {
    package var format = "wobble-run scene"
    package var version = 1
    package var width: Int
    package var height: Int
    package var fps: Double
    package var frames: Int
    package var duration: Double
    package var loop: Loop?
    package var overlap: String
    package var edges: String
    package var picture: String
    package var models: [Model]
    package var moments: [Moment]
    package var cutouts: [Cutout]

    package struct Loop: Encodable { package var period: Double }

    package struct Model: Encodable {
        /// `[[ltx, lty], [rtx, rty], [rbx, rby], [lbx, lby], [cx, cy]]`.
        package var shape: [[Double]]
        package var motion: String
        package var parameters: [String: Double]
        package var pin: String?
        package var cutout: Int?
        /// `[t, dx, dy, amplitude]`.
        package var kicks: [[Double]]
    }

    /// `[t, [model indices]]`.
    package struct Moment: Encodable {
        package var time: Double
        package var models: [Int]
        package func encode(to encoder: Encoder) throws {
            var c = encoder.unkeyedContainer()
            try c.encode(time)
            try c.encode(models)
        }
    }

    package struct Cutout: Encodable {
        package var box: [Int]
        package var object: String
        package var plate: String
    }

    /// The bundle of `clip` over `source`; the picture is `picture` (a data
    /// URL or a file name). Throws a `RunError` when a model's recorded
    /// history is not its kicks folded through its model (never, for the
    /// engine's own models).
    package init(clip: Clip, source: RGBAImage, picture: String) throws {
        width = source.width
        height = source.height
        fps = clip.fps
        frames = clip.frameCount
        duration = clip.length
        overlap = clip.overlap.rawValue
        edges = clip.edges.rawValue
        self.picture = picture
        models = []
        moments = []
        cutouts = []
        var layers: [ObjectIdentifier: Int] = [:]
        func cutout(_ p: WobbleParameters) throws -> Int? {
            guard let request = p.cutout, let layer = clip.cutouts[request], !layer.box.isEmpty else { return nil }
            if let i = layers[ObjectIdentifier(layer)] { return i }
            let b = layer.box
            func webp(_ bytes: [UInt8]) throws -> String {
                let image = RGBAImage(width: b.width, height: b.height, pixels: bytes)
                // Lossless: a lossy object or plate costs 5 dB at its soft edge.
                return "data:image/webp;base64," + Data(try ImageIO.encodeWebP(image, quality: nil)).base64EncodedString()
            }
            cutouts.append(Cutout(box: [b.x0, b.y0, b.width, b.height], object: try webp(layer.object), plate: try webp(layer.plate)))
            layers[ObjectIdentifier(layer)] = cutouts.count - 1
            return cutouts.count - 1
        }
        func model(_ shape: RegionShape, _ p: WobbleParameters, kicks: [Impulse]) throws -> Model {
            var values: [String: Double] = [:]
            for d in p.motion.declaration.parameters { values[d.key] = d.get(p) }
            return Model(shape: [shape.lt, shape.rt, shape.rb, shape.lb, shape.center].map { [$0.x, $0.y] },
                         motion: p.motion.rawValue, parameters: values, pin: p.pin?.rawValue, cutout: try cutout(p),
                         kicks: kicks.map(SceneBundle.kick))
        }
        if let plan = clip.loop {
            loop = Loop(period: plan.period)
            for m in plan.models { models.append(try model(m.shape, m.parameters, kicks: m.motion.kicks)) }
            moments = [Moment(time: 0, models: Array(models.indices))]
            return
        }
        // A model is one `Fixed` (shape, parameters, origin) of the timeline;
        // its kicks are the last kick of each history it records.
        var index: [ObjectIdentifier: Int] = [:]
        var last: [Int: KickHistory] = [:]
        var kicks: [[Impulse]] = []
        for (time, state) in clip.timeline.entries {
            var live: [Int] = []
            for m in state.models {
                let key = ObjectIdentifier(m.fixed)
                let i: Int
                if let known = index[key] {
                    i = known
                    guard let before = last[i], before != m.kicks, let kick = m.kicks.last else { live.append(i); continue }
                    kicks[i].append(kick)
                    try SceneBundle.check(m, before: before.array, kick: kick, at: time)
                } else {
                    i = models.count
                    index[key] = i
                    models.append(try model(m.shape, m.parameters, kicks: []))
                    kicks.append(m.kicks.array)
                    var h: [Impulse] = []
                    for k in m.kicks.array { h = m.parameters.model.adding(k, to: h) }
                    guard h == m.kicks.array else { throw SceneBundle.mismatch(time) }
                }
                last[i] = m.kicks
                live.append(i)
            }
            if moments.last?.models != live { moments.append(Moment(time: time, models: live)) }
        }
        for i in models.indices { models[i].kicks = kicks[i].map(SceneBundle.kick) }
    }

    static func kick(_ k: Impulse) -> [Double] { [k.start, k.direction.x, k.direction.y, k.amplitude] }

    static func check(_ m: ModelSnapshot, before: [Impulse], kick: Impulse, at time: Double) throws {
        guard m.parameters.model.adding(kick, to: before) == m.kicks.array else { throw mismatch(time) }
    }

    static func mismatch(_ time: Double) -> RunError {
        RunError("a web page cannot replay this scene's kicks at \(NumberText.seconds(time)) s (a model's history is not its kicks in order)")
    }

    /// The bundle as JSON (keys sorted: the same clip gives the same bytes).
    package func json() throws -> [UInt8] {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try e.encode(self))
    }
}
