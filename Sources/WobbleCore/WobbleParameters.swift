/// The constants of one wobble model. The defaults are MFWobbleView's
/// (the classic model); `.spring` holds the spring model's. Each model's
/// file declares which of these it reads, their ranges and defaults.
///
/// Lua: `addSketch{..., motion=, duration=, decay=, damping=, threshold=, strength=, pin=, cutout=}`.
public struct WobbleParameters: Sendable, Hashable, Codable {
    /// Which motion model moves the region (default: the original's cycles).
    public var motion: MotionKind
    /// Classic: the cycle duration D; spring: the period P of the undamped
    /// swing. Seconds (default 1.2).
    public var duration: Double
    /// Classic: factor applied to the amplitude at the end of each cycle (original: 0.7).
    public var decay: Double
    /// Spring: the damping ratio Z in [0, 1) (default 0.1).
    public var damping: Double
    /// Classic: the amplitude is set to 0 when it falls below this (original:
    /// 0.1). Spring: the model rests once its envelope is below this (0.02).
    public var threshold: Double
    /// Peak displacement as a fraction of the shorter bbox side (original: 0.08).
    public var strength: Double
    /// The side fixed as a root (`pin = "bottom"`, …): the pinned profile
    /// replaces the hemisphere bulge; nil (the default): the bulge.
    public var pin: PinSide?
    /// `addSketch{cutout = "auto" | "PATH"}`: the object moves over a plate
    /// instead of the whole region deforming; nil: no cutout.
    public var cutout: CutoutRequest? = nil
    /// The parameters a model declares without a field here (by key): a
    /// new model's own.
    public var modelValues: [String: Double] = [:]

    /// The defaults of `motion` (its declaration's), with the values given.
    public init(motion: MotionKind = .classic, duration: Double? = nil, decay: Double? = nil, damping: Double? = nil,
                threshold: Double? = nil, strength: Double? = nil, pin: PinSide? = nil) {
        self = MotionCatalog.standard.defaults(motion)
        if let duration { self.duration = duration }
        if let decay { self.decay = decay }
        if let damping { self.damping = damping }
        if let threshold { self.threshold = threshold }
        if let strength { self.strength = strength }
        self.pin = pin
    }

    /// Every number 0: what the catalog's defaults are written into.
    init(bare motion: MotionKind) {
        self.motion = motion
        duration = 0
        decay = 0
        damping = 0
        threshold = 0
        strength = 0
    }

    /// The original's classic parameters.
    public static let original = WobbleParameters()
    /// The spring model's defaults.
    public static let spring = WobbleParameters(motion: .spring)

    /// Checks the ranges (every model's parameters, as their tables accept
    /// them); returns a message naming the bad field, or nil.
    public func validationError() -> String? {
        MotionCatalog.standard.validationError(self)
    }
}
