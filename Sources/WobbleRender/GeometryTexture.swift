// A region's displacement profile kept on the GPU, by shape.
internal import CGLES
import Foundation
import WobbleCore

/// What a geometry texture depends on: the shape and the pinned side.
struct GeometryKey: Hashable {
    var shape: RegionShape
    var pin: PinSide?
}

/// A region's `DisplacementProfile` on the GPU: its magnitude field for
/// the peak last drawn, as an R32F texture over the region's box (uploaded
/// again only when the peak changes: once per cycle for a classic model).
final class GeometryTexture {
    let texture: GLObject
    let x0: Int, y0: Int, width: Int, height: Int
    /// The texture's bytes and the profile's (kept on the host).
    var byteCount: Int { width * height * 4 + profile.byteCount }
    /// The pinned side of the profile (how far its samples may reach).
    let pin: PinSide?
    let profile: DisplacementProfile
    private var uploadedPeak: Double?
    /// Times a field was uploaded (tests).
    private(set) var uploads = 0

    /// Makes the texture (its field comes with the first `settle`); the
    /// context must be current.
    init(_ profile: DisplacementProfile, context: GLContext) throws {
        texture = try GLObject(.texture, in: context)
        self.profile = profile
        x0 = profile.x0
        y0 = profile.y0
        width = profile.width
        height = profile.height
        pin = profile.geometry.pin
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.name)
        // Float textures need not be filterable: NEAREST keeps the texture
        // complete (the shader uses texelFetch anyway).
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(GL_R32F), GLsizei(width), GLsizei(height))
        try glCheck("glTexStorage2D(region profile \(width)x\(height))")
    }

    /// Uploads the field for `peak` unless it is the one uploaded last; the
    /// texture must be bound on the active unit and the context current.
    func settle(peak: Double) {
        guard peak != uploadedPeak else { return }
        uploadedPeak = peak
        uploads += 1
        let field = profile.magnitudes(peak: peak)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 4)
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RED), GLenum(GL_FLOAT),
                        field.values.baseAddress)
        withExtendedLifetime(field) {}
    }
}
