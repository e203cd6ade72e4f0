import Foundation
import WobbleCore
import WobbleSystem

/// The one renderer factory: a render, `--check`'s size checks, the live
/// session and the studio's headless fallback build their renderer here.
public enum FrameRenderers {
    /// A renderer of `backend` for `source`, drawing `outputWidth`×`outputHeight`
    /// frames (nil: the source's size); `verbose` prints the GL renderer.
    public static func make(_ backend: Backend, source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil,
                            verbose: Bool = false) throws -> FrameRenderer {
        try make(backend, source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose, announced: false)
    }

    /// `make`, `announced`: `-v` has named the backend already.
    private static func make(_ backend: Backend, source: RGBAImage, outputWidth: Int?, outputHeight: Int?, verbose: Bool,
                             announced: Bool) throws -> FrameRenderer {
        switch backend {
        case .auto:
            let chosen = resolve(.auto)
            if verbose {
                printError("wobble-run: backend \(chosen.rawValue) (--backend auto: "
                           + (chosen == .gles ? "a hardware GPU" : "no hardware GPU, the CPU path is faster than a software GL") + ")")
            }
            return try make(chosen, source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose,
                            announced: true)
        case .cpu, .reference:
            if verbose && !announced { printError("wobble-run: backend \(backend.rawValue) (--backend)") }
            try TaskBudget.require(1, for: "a render with --backend \(backend.rawValue)")
            try TaskBudget.requireDescriptors(1, for: "a render")
            try RenderMemory.require(.cpu, OutputMapping(sourceWidth: source.width, sourceHeight: source.height,
                                                         outputWidth: outputWidth ?? source.width,
                                                         outputHeight: outputHeight ?? source.height))
            if backend == .reference { return CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight) }
            return FastCPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        case .gles:
            try TaskBudget.require(2, for: "a GLES render", hint: " (--backend cpu needs 1)")
            try TaskBudget.requireDescriptors(3, for: "a GLES render")
            // Under an address-space limit (`ulimit -v`) llvmpipe's threads
            // (a stack and an LLVM arena each) fail to start and Mesa crashes
            // or hangs: below 1.5 GiB left it draws on the calling thread,
            // below 256 MiB the render stops with one line.
            let space = TaskBudget.addressSpaceLeft()
            if let a = space, a.left < 256 << 20 {
                throw MediaError("only \(a.left >> 20) MiB of address space are left (ulimit -v \(a.limit >> 10)); a GLES render needs about 256 MiB more (--backend cpu needs less)")
            }
            let tightSpace = space.map { $0.left < 3 << 29 } ?? false
            let tightTasks = TaskBudget.remaining().map { $0.left < ThisProcess.cores + 8 } ?? false
            if tightSpace || tightTasks {
                // Too few for llvmpipe's thread per processor and Mesa's
                // shader-cache thread: draw on the calling thread (unless the
                // user chose otherwise).
                Environment.setDefault("LP_NUM_THREADS", "0")
                Environment.setDefault("MESA_SHADER_CACHE_DISABLE", "true")
            }
            // EGL and Mesa start at the first frame that moves.
            return try DeferredGLESRenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose)
        }
    }

    /// The backend `backend` stands for here: `auto` is `gles` where EGL
    /// offers a hardware GPU, else `cpu` (on a software GL, llvmpipe, the
    /// CPU path renders a moving frame several times faster: see
    /// docs/performance.md); the others are themselves.
    public static func resolve(_ backend: Backend) -> Backend {
        guard backend == .auto else { return backend }
        return GLContext.hasHardwareDevice ? .gles : .cpu
    }

    /// The backend a renderer made here draws with (`-v`, `--json`'s
    /// `"backend"`).
    public static func backend(of renderer: FrameRenderer) -> Backend {
        switch renderer {
        case is FastCPURenderer: .cpu
        case is CPURenderer: .reference
        default: .gles
        }
    }
}
