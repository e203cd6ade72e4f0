/// Which renderer draws the frames (`--backend`). A plain choice, here so
/// that front ends name it without importing the renderers.
public enum Backend: String, Sendable, CaseIterable {
    /// OpenGL ES through EGL.
    case gles
    /// The CPU renderer (`FastCPURenderer`): static displacement profiles,
    /// SIMD samples, every core.
    case cpu
    /// The CPU reference renderer (`CPURenderer`): every pixel in doubles,
    /// exact and slow; what both other backends are tested against.
    case reference
    /// The faster of `gles` and `cpu` here (the default): `gles` on a
    /// hardware GPU, `cpu` where the GL would be a software one (llvmpipe).
    case auto
}
