import WobbleCore
import WobbleSystem

/// The memory a renderer needs for a size, estimated before it allocates
/// any of it and checked against what is left (`TaskBudget.memoryLeft`):
/// a 16384×16384 GLES render took 7.5 GB and a minute for one frame, and
/// where that much is not there the render stops with one line saying how
/// much it needs, instead of the system's out-of-memory killer or an
/// allocation failure inside Mesa ending it.
///
/// Both renderers and the studio's in-window renderer check here.
public enum RenderMemory {
    /// About the bytes a GLES renderer holds for `m`: per set of passes the
    /// source texture (and its area-averaged copy, for a smaller output),
    /// the frame and still targets (RGBA8) and the offsets (RG32F); a second
    /// set at the image's size for a smaller output; the frame read back
    /// and the one being encoded; and the driver's own. `software` (Mesa's
    /// llvmpipe): the textures are in this process's memory too; on a GPU
    /// they are in its own (where the driver reports running out as an
    /// error, which the tool passes on).
    public static func gles(_ m: OutputMapping, software: Bool = true) -> Int {
        func passes(_ m: OutputMapping) -> (textures: Int, copy: Int) {
            let s = AreaFilter.size(m)
            let sampled = s.width * s.height * 4
            let copy = s.width == m.sourceWidth && s.height == m.sourceHeight ? 0 : sampled
            return (sampled + m.outputWidth * m.outputHeight * (4 + 4 + 8), copy)
        }
        let own = passes(m)
        let full = m.filtersWobbledFrame
            ? passes(OutputMapping(sourceWidth: m.sourceWidth, sourceHeight: m.sourceHeight,
                                   outputWidth: m.sourceWidth, outputHeight: m.sourceHeight))
            : (textures: 0, copy: 0)
        let host = own.copy + full.copy + 2 * m.outputWidth * m.outputHeight * 4 + driver
        return host + (software ? own.textures + full.textures : 0)
    }

    /// About the bytes the CPU renderer holds for `m`: the area-averaged
    /// source for a smaller output, the still frame, the frame drawn and
    /// the one being encoded, and the wobbled frame at the image's size for
    /// a smaller output.
    public static func cpu(_ m: OutputMapping) -> Int {
        let s = AreaFilter.size(m)
        let copy = s.width == m.sourceWidth && s.height == m.sourceHeight ? 0 : s.width * s.height * 4
        let full = m.filtersWobbledFrame ? m.sourceWidth * m.sourceHeight * 4 : 0
        return copy + 3 * m.outputWidth * m.outputHeight * 4 + full
    }

    /// What Mesa and LLVM take for themselves, about.
    static let driver = 64 << 20

    /// Refuses a render of `backend` for `m` when less memory is left than
    /// it needs, with one line: how much it needs, how much is left and
    /// what limits it, and what needs less.
    public static func require(_ backend: Backend, _ m: OutputMapping, software: Bool = true) throws {
        let size = "\(m.outputWidth)×\(m.outputHeight)"
        switch backend {
        case .gles:
            try TaskBudget.requireMemory(gles(m, software: software), for: "a GLES render of \(size)",
                                         hint: "; render it smaller (--width, --height) or with --backend cpu (about \(TaskBudget.bytesShown(cpu(m))))")
        case .cpu, .reference, .auto:
            try TaskBudget.requireMemory(cpu(m), for: "a CPU render of \(size)", hint: "; render it smaller (--width, --height)")
        }
    }
}
