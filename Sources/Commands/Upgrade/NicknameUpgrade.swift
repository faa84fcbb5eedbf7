import Domain
import EventLog
import Foundation
import Postgres
import UUIDText

/// The one-time upgrade of nicknames reserved before nickname streams had keyed names
/// (`sniffmeet upgrade nicknames`): every user a legacy `nickname-<name>` stream names as its
/// holder gets their current nickname reserved on its keyed stream (`Command.reclaimNickname`),
/// so that nobody else can take it.
///
/// Idempotent and resumable: the domain decides nothing for a nickname its user already holds,
/// so a second run appends nothing, and a run killed halfway is finished by running it again
/// (each reservation is its own append; nothing is kept between runs). A nickname someone else
/// took on its keyed stream meanwhile is not taken back: it is reported, for an operator to settle.
public struct NicknameUpgrade: Sendable {
    public let handler: CommandHandler

    public init(handler: CommandHandler) {
        self.handler = handler
    }

    /// What one legacy stream came to.
    public enum Outcome: Sendable, Equatable {
        /// The holder's nickname was reserved on its keyed stream now.
        case reserved(user: UUID)
        /// Nothing to do: the holder holds it already (an earlier run, or a later change of
        /// nickname), is deleted, or the legacy stream has no holder.
        case unchanged
        /// Someone else holds the holder's nickname on its keyed stream.
        case conflict(user: UUID)
    }

    /// What a run did, stream by stream (legacy stream names, which are the nicknames).
    public struct Report: Sendable {
        public var outcomes: [(stream: String, outcome: Outcome)] = []
        public var reserved: Int { outcomes.count { if case .reserved = $0.outcome { true } else { false } } }
        public var unchanged: Int { outcomes.count { $0.outcome == .unchanged } }
        public var conflicts: [(stream: String, user: UUID)] {
            outcomes.compactMap { if case .conflict(let user) = $0.outcome { ($0.stream, user) } else { nil } }
        }
    }

    /// Nickname streams the current code never writes: keyed names are 64 hex digits, which no
    /// nickname's key can be (a nickname has at most 8 characters), and the legacy ones are the nicknames themselves.
    static let legacyStreamsSQL = """
        SELECT DISTINCT stream_id FROM events
        WHERE stream_id LIKE 'nickname-%' AND stream_id !~ '^nickname-[0-9a-f]{64}$'
        ORDER BY stream_id
        """

    /// Runs the upgrade; `progress` hears about every stream as it is done (done, total, stream, outcome).
    public func run(progress: (Int, Int, String, Outcome) -> Void = { _, _, _, _ in }) async throws -> Report {
        let streams = try await handler.log.pool.withConnection { connection in
            try connection.execute(Self.legacyStreamsSQL).rows.map { try $0.string(0) }
        }
        var report = Report()
        for (index, stream) in streams.enumerated() {
            let outcome = try await upgrade(stream)
            report.outcomes.append((stream, outcome))
            progress(index + 1, streams.count, stream, outcome)
        }
        return report
    }

    /// Folds one legacy stream (stored in the clear, as all events before sealing were) to its
    /// holder, and reclaims that user's nickname.
    func upgrade(_ stream: String) async throws -> Outcome {
        let records = try await handler.log.readStream(stream)
        let events = try await handler.log.pool.withConnection { [handler] connection in
            try handler.sealer.events(from: records, on: connection)
        }
        guard let holder = events.reduce(NicknameDecider.initial, NicknameDecider.evolve).holder else { return .unchanged }
        do {
            let outcome = try await handler.handle(.reclaimNickname(userID: holder), metadata: CommandMetadata(actor: nil))
            return outcome.events.isEmpty ? .unchanged : .reserved(user: holder)
        } catch CommandError.domain(.nicknameTaken) {
            return .conflict(user: holder)
        }
    }
}
