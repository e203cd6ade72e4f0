/// Which renderer draws the frames (`--backend`). A plain choice, here so
/// that front ends name it without importing the renderers.
public enum Backend: String, Sendable, CaseIterable {
    /// OpenGL ES through EGL (the default).
    case gles
    /// The CPU reference renderer.
    case cpu
}
