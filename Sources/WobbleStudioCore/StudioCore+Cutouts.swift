import WobbleCore

/// The studio core's cutouts commands: a region's cutout, strokes and the magnetic outline.
extension StudioCore {
    /// Does one of the cutouts commands (`StudioCommand.Area.cutouts`); true when the studio quits now.
    func performCutouts(_ command: StudioCommand) -> Bool {
        switch command {
        case .cutOut:
            cutouts.cut(inspector.selected)
        case .outline:
            cutouts.outlineKey()
        case .outlinePoint(let p):
            cutouts.addOutlinePoint(p)
        case .strokeBegin(let p, let radius, let object):
            guard session.clip != nil, !recorder.isRecording else { break }
            // The selected region's cutout, else the region under the press.
            let under = session.handleShapes(atFrame: currentIndex).filter { $0.origin != nil && $0.shape.contains(p) }
                .min { Inspector.area($0.shape.bbox) < Inspector.area($1.shape.bbox) }?.origin?.kind
            cutouts.beginStroke(at: p, radius: radius, object: object, kind: inspector.selected ?? under)
        case .strokeTo(let p):
            if cutouts.isStroking { cutouts.moveStroke(to: p); dirty = true }
        case .strokeEnd:
            cutouts.endStroke()
        default:
            break  // another area's (`perform` dispatches by `StudioCommand.area`)
        }
        return false
    }
}
