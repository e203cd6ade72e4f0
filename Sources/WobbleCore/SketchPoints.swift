/// The five points of a sketch as `addSketch{...}` gives them: four corners
/// and the center when one was set (nil: the mean of the corners).
public struct SketchPoints: Sendable, Equatable, Hashable, Codable {
    public var lt: Point
    public var rt: Point
    public var rb: Point
    public var lb: Point
    public var center: Point?

    public init(lt: Point, rt: Point, rb: Point, lb: Point, center: Point? = nil) {
        self.lt = lt
        self.rt = rt
        self.rb = rb
        self.lb = lb
        self.center = center
    }

    /// The original's default sketch (`addSketch()`).
    public static let defaultSketch = SketchPoints(lt: Point(10, 10), rt: Point(100, 10), rb: Point(100, 100), lb: Point(10, 100))

    /// The original's 90×90 square centered at `p` (the studio's `A`).
    public static func square(centeredAt p: Point, side: Double = 90) -> SketchPoints {
        let h = side / 2
        return SketchPoints(lt: Point(p.x - h, p.y - h), rt: Point(p.x + h, p.y - h),
                            rb: Point(p.x + h, p.y + h), lb: Point(p.x - h, p.y + h))
    }

    /// Corner `i` (0 lt, 1 rt, 2 rb, 3 lb), or the center for 4 (the mean of
    /// the corners when none was set).
    public subscript(handle i: Int) -> Point {
        get {
            switch i {
            case 0: return lt
            case 1: return rt
            case 2: return rb
            case 3: return lb
            default: return effectiveCenter
            }
        }
        set {
            switch i {
            case 0: lt = newValue
            case 1: rt = newValue
            case 2: rb = newValue
            case 3: lb = newValue
            default: center = newValue
            }
        }
    }

    public var effectiveCenter: Point {
        center ?? Point((lt.x + rt.x + rb.x + lb.x) / 4, (lt.y + rt.y + rb.y + lb.y) / 4)
    }

    public var shape: RegionShape { RegionShape(lt: lt, rt: rt, rb: rb, lb: lb, center: effectiveCenter) }
}
