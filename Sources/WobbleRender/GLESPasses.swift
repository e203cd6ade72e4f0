// The passes a GLES frame is drawn with: the regions (direct or summed),
// the area-averaging of a smaller output, and the read-back.
internal import CGLES
import Foundation
import WobbleCore

extension Resources {
    /// overlap("sum") of regions whose boxes meet: every region adds its
    /// offset into the float target (additive blending), then each box
    /// samples the source at p + the sum.
    func drawSummed(_ draws: [(geometry: GeometryTexture, region: RegionFrame)], into target: Placement) throws {
        guard let offsetFramebuffer, let offsetTexture else {
            throw GLESError.gl(call: "overlap(\"sum\")", error: offsetUnsupported ?? "no offset target")
        }
        var x0 = Int.max, y0 = Int.max, x1 = Int.min, y1 = Int.min
        for d in draws {
            x0 = min(x0, d.geometry.x0); y0 = min(y0, d.geometry.y0)
            x1 = max(x1, d.geometry.x0 + d.geometry.width); y1 = max(y1, d.geometry.y0 + d.geometry.height)
        }
        // The offsets live in output pixels 1:1, whatever the target.
        let offsets = Placement(framebuffer: offsetFramebuffer.name, viewportWidth: mapping.outputWidth,
                                viewportHeight: mapping.outputHeight)
        self.target(offsets)
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(GLint(x0), GLint(y0), GLsizei(x1 - x0), GLsizei(y1 - y0))
        glClearColor(0, 0, 0, 0)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glDisable(GLenum(GL_SCISSOR_TEST))
        glEnable(GLenum(GL_BLEND))
        glBlendEquation(GLenum(GL_FUNC_ADD))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE))
        for d in draws { try drawRegion(d.geometry, region: d.region, into: offsets, offsetOnly: true) }
        glDisable(GLenum(GL_BLEND))
        self.target(target)
        let resolve = try resolve()
        use(resolve, target)
        glActiveTexture(GLenum(GL_TEXTURE2))
        glBindTexture(GLenum(GL_TEXTURE_2D), offsetTexture.name)
        let rectResolve = try resolve.location("u_rect")
        for d in draws {
            let g = d.geometry
            glUniform4f(rectResolve, Float(g.x0), Float(g.y0), Float(g.x0 + g.width), Float(g.y0 + g.height))
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
        try glCheck("overlap(\"sum\") passes")
    }

    /// One region over its geometry's box: sampling the source (direct), or
    /// writing its offset (`offsetOnly`, for the sum), with the wobble.frag
    /// variant that fits it.
    func drawRegion(_ geometry: GeometryTexture, region: RegionFrame, into p: Placement, offsetOnly only: Bool = false) throws {
        let samples = !only && fixedSwitches
        let cutout = only ? nil : region.cutout
        let wobble = try wobble(WobbleVariant(pinned: geometry.pin != nil, offsetOnly: only, overlay: samples && p.overlay,
                                              mirror: samples && edges == .mirror,
                                              interior: samples && cutout == nil && samplesInside(geometry, region: region),
                                              opaque: samples && opaqueSource, uniforms: !fixedSwitches, cutout: cutout != nil))
        use(wobble, p)
        if let cutout { try bind(cutout, for: wobble) }
        glActiveTexture(GLenum(GL_TEXTURE1))
        glBindTexture(GLenum(GL_TEXTURE_2D), geometry.texture.name)
        geometry.settle(peak: region.peak)
        glUniform4f(wobble.optionalLocation("u_rect"), Float(geometry.x0), Float(geometry.y0),
                    Float(geometry.x0 + geometry.width), Float(geometry.y0 + geometry.height))
        glUniform2i(wobble.optionalLocation("u_geometryOrigin"), GLint(geometry.x0), GLint(geometry.y0))
        glUniform2f(wobble.optionalLocation("u_direction"), Float(region.direction.x), Float(region.direction.y))
        glUniform1f(wobble.optionalLocation("u_swing"), Float(region.swing))
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    /// Binds `layer`'s object and plate (texture units 5 and 6, uploaded on
    /// first use and kept while the layer lives) and sets `program`'s
    /// cutout uniforms.
    func bind(_ layer: CutoutLayer, for program: GLProgram) throws {
        let key = ObjectIdentifier(layer)
        let textures: CutoutTextures
        if let t = cutoutTextures[key], t.layer === layer {
            textures = t
        } else {
            textures = try CutoutTextures(layer, context: context)
            cutoutTextures[key] = textures
        }
        glActiveTexture(GLenum(GL_TEXTURE5))
        glBindTexture(GLenum(GL_TEXTURE_2D), textures.object.name)
        glActiveTexture(GLenum(GL_TEXTURE6))
        glBindTexture(GLenum(GL_TEXTURE_2D), textures.plate.name)
        glActiveTexture(GLenum(GL_TEXTURE1))
        let b = layer.box
        glUniform1i(program.optionalLocation("u_object"), 5)
        glUniform1i(program.optionalLocation("u_plate"), 6)
        glUniform4i(program.optionalLocation("u_cutoutBox"), GLint(b.x0), GLint(b.y0), GLint(b.width), GLint(b.height))
        glUniform2f(program.optionalLocation("u_imageSize"), Float(layer.imageWidth), Float(layer.imageHeight))
    }

    /// Whether every position at which wobble.frag samples the source for
    /// `region` over `geometry`'s box lies at least 1.5 texels inside the
    /// source texture (the INTERIOR switch: there mirroring and clamping,
    /// and the limit of the next texel to the last one, leave the position
    /// and texels as they are). A fragment samples at its pixel's source
    /// point plus an offset of length m·|swing| (a unit direction), and m is
    /// at most the peak M (the hemisphere, whose m grows towards the centre,
    /// where it is M) or M / 0.32768 (the pinned profile); the bound here adds
    /// 0.1% and a texel for float rounding, and the margin is 2 texels.
    func samplesInside(_ geometry: GeometryTexture, region: RegionFrame) -> Bool {
        Resources.samplesInside(PixelRect(x0: geometry.x0, y0: geometry.y0, x1: geometry.x0 + geometry.width,
                                          y1: geometry.y0 + geometry.height),
                                peak: region.peak, swing: region.swing, pinned: geometry.pin != nil, mapping: mapping,
                                texels: (sampledWidth, sampledHeight))
    }

    /// `samplesInside` for the pixels of `box` (of `mapping`'s output) and
    /// a source texture of `texels`.
    static func samplesInside(_ box: PixelRect, peak: Double, swing: Double, pinned: Bool, mapping m: OutputMapping,
                              texels: (width: Int, height: Int)) -> Bool {
        let reach = peak * abs(swing) * (pinned ? 1 / 0.32768 : 1) * 1.001 + 1
        guard reach.isFinite, !box.isEmpty else { return false }
        // Source points of the first and last pixel centres, ± the reach,
        // in texels of the source texture.
        func inside(_ first: Int, _ end: Int, scale: Double, texels: Int, image: Int) -> Bool {
            let toTexels = Double(texels) / Double(image)
            let low = ((Double(first) + 0.5) * scale - reach) * toTexels
            let high = ((Double(end) - 0.5) * scale + reach) * toTexels
            return low >= 2 && high <= Double(texels) - 2
        }
        return inside(box.x0, box.x1, scale: m.scaleX, texels: texels.width, image: m.sourceWidth)
            && inside(box.y0, box.y1, scale: m.scaleY, texels: texels.height, image: m.sourceHeight)
    }

    /// Output pixels `boxes` (x0, y0, x1, y1) of `p` as `frame` (a texture
    /// of the image's size: the wobbled frame) area-averaged.
    func downscale(from frame: GLObject, boxes: [(x0: Int, y0: Int, x1: Int, y1: Int)], into p: Placement) throws {
        guard let program = downscaleProgram else { throw GLESError.gl(call: "downscale", error: "the output is not smaller than the image") }
        use(program, p)
        glActiveTexture(GLenum(GL_TEXTURE4))
        glBindTexture(GLenum(GL_TEXTURE_2D), frame.name)
        for b in boxes where b.x0 < b.x1 && b.y0 < b.y1 {
            glUniform4f(rectDownscale, Float(b.x0), Float(b.y0), Float(b.x1), Float(b.y1))
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
        glActiveTexture(GLenum(GL_TEXTURE0))
        try glCheck("glDrawArrays(downscale)")
    }

    /// The pixels of `boxes` (inside the output) read from the framebuffer
    /// straight into their places in `image` (of the output size).
    func readBack(_ boxes: [PixelRect], into image: inout RGBAImage) throws {
        let w = mapping.outputWidth
        glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), GLint(w))
        image.pixels.withUnsafeMutableBufferPointer { px in
            for b in boxes where !b.isEmpty {
                glReadPixels(GLint(b.x0), GLint(b.y0), GLsizei(b.width), GLsizei(b.height), GLenum(GL_RGBA),
                             GLenum(GL_UNSIGNED_BYTE), px.baseAddress! + (b.y0 * w + b.x0) * 4)
            }
        }
        glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
        try glCheck("glReadPixels(boxes)")
    }

    /// The framebuffer as RGBA rows, top to bottom.
    func readBack() throws -> RGBAImage {
        let w = mapping.outputWidth, h = mapping.outputHeight
        let pixels = [UInt8](unsafeUninitializedCapacity: w * h * 4) { buffer, count in
            glReadPixels(0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), buffer.baseAddress)
            count = w * h * 4
        }
        try glCheck("glReadPixels")
        return RGBAImage(width: w, height: h, pixels: pixels)
    }
}
