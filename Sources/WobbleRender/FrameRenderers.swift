import WobbleCore

/// The one renderer factory: a render, `--check`'s size checks, the live
/// session and the studio's headless fallback build their renderer here.
public enum FrameRenderers {
    /// A renderer of `backend` for `source`, drawing `outputWidth`×`outputHeight`
    /// frames (nil: the source's size); `verbose` prints the GL renderer.
    public static func make(_ backend: Backend, source: RGBAImage, outputWidth: Int? = nil, outputHeight: Int? = nil,
                            verbose: Bool = false) throws -> FrameRenderer {
        switch backend {
        case .cpu: return CPURenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight)
        case .gles: return try GLESRenderer(source: source, outputWidth: outputWidth, outputHeight: outputHeight, verbose: verbose)
        }
    }
}
