import WobbleCore
import WobbleMedia
import WobbleRender

/// One frame rendered at the source image's own size, as a headless render
/// of that frame gives it (the studio's `P`: the frame shown as a PNG).
public enum StillFrame {
    /// Renders `state` over `image` with a fresh renderer of `backend`.
    public static func render(_ state: FrameState, image: RGBAImage, backend: Backend) throws -> RGBAImage {
        let r = try FrameRenderers.make(backend, source: image, outputWidth: image.width, outputHeight: image.height)
        return try Compositor.frame(state, renderer: r, extra: [])
    }

    /// The PNG file of a frame (sRGB, as the command line writes it).
    public static func png(_ frame: RGBAImage) throws -> [UInt8] {
        try ImageIO.encodePNG(frame)
    }
}
