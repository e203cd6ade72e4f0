// The GLSL ES sources of this folder, embedded into the binary by SwiftPM
// (`resources: [.embedInCode(...)]` of the `WobbleShaders` target), so an
// installed wobble-run never looks for shader files at run time. A file
// added here is listed in Package.swift and below
// (WobbleRenderTests.ShaderResourcesTests fails until both name it).

/// The GLSL ES sources of `Shaders/`, as compiled by the GLES renderer, the
/// studio window and the browser studio's WebGL2 page.
public enum EmbeddedShaders {
    /// Every file by its name in `Shaders/` (`wobble.frag`, `common.glsl`, …).
    public static let all: [String: String] = [
        "common.glsl": text(PackageResources.common_glsl),
        "copy.frag": text(PackageResources.copy_frag),
        "downscale.frag": text(PackageResources.downscale_frag),
        "present.frag": text(PackageResources.present_frag),
        "quad.vert": text(PackageResources.quad_vert),
        "resolve.frag": text(PackageResources.resolve_frag),
        "wobble.frag": text(PackageResources.wobble_frag),
    ]

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
