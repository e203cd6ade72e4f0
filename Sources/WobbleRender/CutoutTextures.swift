// A cutout layer's object and plate on the GPU.
internal import CGLES
import Foundation
import WobbleCore

/// A `CutoutLayer`'s object and plate as RGBA8 textures of its box
/// (texelFetch only: nearest filtering).
final class CutoutTextures {
    let layer: CutoutLayer
    let object: GLObject
    let plate: GLObject

    /// Uploads `layer`; the context must be current.
    init(_ layer: CutoutLayer, context: GLContext) throws {
        self.layer = layer
        let b = layer.box
        let w = max(1, b.width), h = max(1, b.height)
        func upload(_ bytes: [UInt8], _ label: String) throws -> GLObject {
            let t = try GLObject(.texture, in: context)
            glActiveTexture(GLenum(GL_TEXTURE5))
            glBindTexture(GLenum(GL_TEXTURE_2D), t.name)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
            let data = bytes.isEmpty ? [UInt8](repeating: 0, count: 4) : bytes
            data.withUnsafeBufferPointer { px in
                glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA8, GLsizei(w), GLsizei(h), 0,
                             GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), px.baseAddress)
            }
            try glCheck("glTexImage2D(cutout \(label) \(w)x\(h))")
            return t
        }
        object = try upload(layer.object, "object")
        plate = try upload(layer.plate, "plate")
        glActiveTexture(GLenum(GL_TEXTURE1))
    }
}
