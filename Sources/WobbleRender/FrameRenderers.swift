import Foundation
import WobbleCore
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// The one renderer factory: a render, `--check`'s size checks, the live
/// session and the studio's headless fallback build their renderer here.
public enum FrameRenderers {
    /// A renderer of `backend` for `source`, drawing `outputWidth`×`outputHeight`
    /// frames (nil: the source's size); `verbose` prints the GL renderer.
    public static func make(_ backend: Backend, source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil,
                            verbose: Bool = false) throws -> FrameRenderer {
        switch backend {
        case .cpu:
            try TaskBudget.require(1, for: "a render with --backend cpu")
            try TaskBudget.requireDescriptors(1, for: "a render")
            return CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        case .gles:
            try TaskBudget.require(2, for: "a GLES render", hint: " (--backend cpu needs 1)")
            try TaskBudget.requireDescriptors(3, for: "a GLES render")
            if let budget = TaskBudget.remaining(), budget.left < ProcessInfo.processInfo.activeProcessorCount + 8 {
                // Too few for llvmpipe's thread per processor and Mesa's
                // shader-cache thread: draw on the calling thread (unless the
                // user chose otherwise).
                setenv("LP_NUM_THREADS", "0", 0)
                setenv("MESA_SHADER_CACHE_DISABLE", "true", 0)
            }
            return try GLESRenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose)
        }
    }
}
