import Foundation

@testable import Domain

let walkLog1 = id("F0000000-0000-4000-8000-000000000001")
let walkLog2 = id("F0000000-0000-4000-8000-000000000002")

/// Figures as the server measures them for a one-hour walk.
func figures(
    elapsed: Int = 3_600,
    moving: Int = 3_100,
    distance: Double = 2_034.5,
    points: Int = 3_601,
    digest: String = String(repeating: "ab", count: 32)
) -> WalkLogFigures {
    WalkLogFigures(
        startedAt: t0,
        endedAt: t0.addingTimeInterval(TimeInterval(elapsed)),
        elapsedSeconds: elapsed,
        movingSeconds: moving,
        distanceM: distance,
        pointCount: points,
        routeDigest: digest
    )
}

extension World {
    func walkLog(_ id: UUID) -> WalkLogState { state(.walkLog(id)).walkLog! }

    /// Alice recorded walkLog1 (alone), visible to mates.
    static func logged() throws -> World {
        var w = try registered()
        try w.run(.recordWalkLog(walkLogID: walkLog1, owner: alice, walkID: nil, figures: figures(), visibility: .mates))
        return w
    }
}
