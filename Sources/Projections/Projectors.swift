/// The read models of SniffMeet, by name.
public enum Projectors {
    /// Every projector, in a fixed order.
    public static let all: [any Projector] = [
        ProfilesProjector(), MatesProjector(), MateRequestsProjector(), WalksProjector(), NotificationsProjector(), SafetyProjector(),
        WalkLogsProjector(),
        ChatsProjector(),
        AuditProjector(),
    ]

    public static var names: [String] { all.map(\.name) }

    /// The projectors named, in the catalog's order; throws on an unknown name.
    public static func named(_ names: [String]) throws -> [any Projector] {
        for name in names where !all.contains(where: { $0.name == name }) { throw ProjectionError.unknownProjector(name) }
        return all.filter { names.contains($0.name) }
    }
}
