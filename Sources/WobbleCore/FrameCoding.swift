/// The frame state as JSON, for front ends that draw it themselves (the
/// studio core's snapshots): a region shape is its five points (the
/// boundary's curves are derived again on decoding), a region frame its
/// shape, peak, direction, swing and pin.
extension RegionShape: Codable {
    private enum CodingKeys: String, CodingKey { case lt, rt, rb, lb, center }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(lt: try c.decode(Point.self, forKey: .lt), rt: try c.decode(Point.self, forKey: .rt),
                  rb: try c.decode(Point.self, forKey: .rb), lb: try c.decode(Point.self, forKey: .lb),
                  center: try c.decode(Point.self, forKey: .center))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(lt, forKey: .lt)
        try c.encode(rt, forKey: .rt)
        try c.encode(rb, forKey: .rb)
        try c.encode(lb, forKey: .lb)
        try c.encode(center, forKey: .center)
    }
}

/// A region's cutout layer (its object and plate images) is not in the
/// JSON: a front end that draws cutouts loads the masks the scene names.
/// A decoded region frame has no cutout.
extension RegionFrame: Codable {
    private enum CodingKeys: String, CodingKey { case shape, peak, direction, swing, pin }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(shape: try c.decode(RegionShape.self, forKey: .shape), peak: try c.decode(Double.self, forKey: .peak),
                  direction: try c.decode(Point.self, forKey: .direction), swing: try c.decode(Double.self, forKey: .swing),
                  pin: try c.decodeIfPresent(PinSide.self, forKey: .pin))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shape, forKey: .shape)
        try c.encode(peak, forKey: .peak)
        try c.encode(direction, forKey: .direction)
        try c.encode(swing, forKey: .swing)
        try c.encodeIfPresent(pin, forKey: .pin)
    }
}
