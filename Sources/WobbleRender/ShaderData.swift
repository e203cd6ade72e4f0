import WobbleCore

/// The shader sources and per-shape data a front end that draws frames
/// itself needs (the browser studio's WebGL2 page runs the same GLSL ES
/// 3.00 files as `GLESRenderer`, from the data the engine sends).
public enum ShaderData {
    /// Every file of `Shaders/` by name (`wobble.frag`, `common.glsl`, …),
    /// as embedded in the binary: the one source both renderers compile.
    public static var sources: [String: String] { EmbeddedShaders.all }

    /// The geometry texture `Shaders/wobble.frag` reads (`u_geometry`) for
    /// `shape` drawn at the image's own size (`width`×`height` output
    /// pixels): the box in output pixels and, per pixel of it, rows top to
    /// bottom, four floats (`d/R`, `R`, `acos(d/R)`, `σ`), exactly as
    /// `GLESRenderer` uploads them (borderline pixels as moving). nil when
    /// the shape moves no pixel.
    public static func geometry(of shape: RegionShape, pin: PinSide?, width: Int, height: Int)
        -> (x0: Int, y0: Int, width: Int, height: Int, values: [Float])? {
        let m = OutputMapping(sourceWidth: width, sourceHeight: height, outputWidth: width, outputHeight: height)
        let g = RegionGeometry(shape: shape, mapping: m, pin: pin)
        return g.isEmpty ? nil : (g.x0, g.y0, g.width, g.height, g.values)
    }
}
