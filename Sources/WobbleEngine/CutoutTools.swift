import WobbleCore
import WobbleSystem
import WobbleVision

/// The cutout tools the studio uses, through the engine (the studio core
/// imports no vision module): GrabCut from a region and strokes, a mask
/// clipped to a region, the objects under a click and their matte, the
/// magnetic outline, and a region fitted around a mask. Each is
/// `CutoutVision`'s own; see there for what it does.
public enum CutoutTools {
    /// Why a cutout could not be made (`CutoutProblem`).
    public typealias Problem = CutoutProblem

    public static func clipped(_ mask: GreyMask, to shape: RegionShape) -> GreyMask {
        CutoutVision.clipped(mask, to: shape)
    }

    public static func refined(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke], from: GreyMask? = nil) throws -> GreyMask {
        try CutoutVision.refinedMatte(image: image, region: shape, strokes: strokes, from: from)
    }

    /// `refined`, the region grown where one of the last `fresh` strokes
    /// (object) reaches past it: the matte and the grown region (nil when
    /// it did not grow).
    public static func refinedGrowing(image: RGBAImage, region shape: RegionShape, strokes: [CutoutStroke],
                                      from: GreyMask? = nil, fresh: Int = 1) throws -> (mask: GreyMask, region: SketchPoints?) {
        try CutoutVision.refinedMatteGrowing(image: image, region: shape, strokes: strokes, from: from, fresh: fresh)
    }

    public static func clickCandidates(image: RGBAImage, at point: Point) throws -> [GreyMask] {
        try CutoutVision.clickCandidates(image: image, at: point)
    }

    public static func clickMatte(image: RGBAImage, mask: GreyMask) throws -> GreyMask {
        try CutoutVision.clickMatte(image: image, mask: mask)
    }

    public static func fitRegion(around mask: GreyMask) -> SketchPoints? {
        CutoutVision.fitRegion(around: mask)
    }

    /// The mask a mask file holds, as a run reads it (its alpha channel
    /// when it has transparency, else its grey level); it must be
    /// `width`×`height` (the picture's size).
    public static func readMask(_ path: String, width: Int, height: Int) throws -> GreyMask {
        do {
            return try Cutouts.readMask(path, what: "mask '\(PathBytes.display(path))'", width: width, height: height)
        } catch let e as Cutouts.MaskProblem {
            throw SessionError(e.message)
        }
    }

    public static func magneticOutline(image: RGBAImage, points: [Point]) throws -> (path: [Point], mask: GreyMask) {
        try CutoutVision.magneticOutline(image: image, points: points)
    }
}
