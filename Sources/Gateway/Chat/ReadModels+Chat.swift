import Foundation
import Projections

extension ReadModels {
    /// My conversations, the one with the newest message first.
    func conversations(of user: UUID, page: PageRequest) async throws -> PageJSON<ConversationJSON> {
        let after = try page.after.map(Self.timeKey)
        let rows = try await gate.run(ChatsQueries.conversations(of: user, after: after, limit: page.limit + 1), on: pool)
        return page.page(rows, item: ConversationJSON.init, key: { Self.cursor($0.key) })
    }

    /// Messages between `user` and `mate`: newest first below the cursor's `seq`, or with
    /// `after`, oldest first after that `seq` (catch-up); both paged.
    func messages(between user: UUID, and mate: UUID, after: Int?, page: PageRequest) async throws -> PageJSON<ChatMessageJSON> {
        let from = try page.after.map(Self.seqCursor)
        let rows: [ChatMessageRow]
        if let after {
            rows = try await gate.run(
                ChatsQueries.messages(between: user, and: mate, after: from ?? after, limit: page.limit + 1),
                on: pool
            )
        } else {
            rows = try await gate.run(ChatsQueries.messages(between: user, and: mate, before: from, limit: page.limit + 1), on: pool)
        }
        return page.page(rows, item: { ChatMessageJSON($0) }, key: { ("seq", String($0.seq)) })
    }

    /// One message of the conversation of `user` and `mate`.
    func message(_ id: UUID, between user: UUID, and mate: UUID) async throws -> ChatMessageRow? {
        try await gate.run(ChatsQueries.message(id, between: user, and: mate), on: pool)
    }

    /// The `seq` of the newest message between `user` and `mate` in the read model (0 before the first).
    func lastSeq(_ user: UUID, _ mate: UUID) async throws -> Int {
        try await gate.run(ChatsQueries.lastSeq(user, mate), on: pool)
    }

    /// Whether `user` has a conversation with `mate` (messages, or mates now).
    func hasConversation(_ user: UUID, with mate: UUID) async throws -> Bool {
        try await gate.run(ChatsQueries.hasConversation(user, with: mate), on: pool)
    }

    /// Whether `user` and `mate` are mates now (the read model's view, for typing).
    func areMates(_ user: UUID, _ mate: UUID) async throws -> Bool {
        try await gate.run(ChatsQueries.areMates(user, mate), on: pool)
    }

    /// A messages cursor: `seq|<n>`.
    static func seqCursor(_ parts: (String, String)) throws -> Int {
        guard parts.0 == "seq", let seq = Int(parts.1), (0...Int(Int32.max)).contains(seq) else {
            throw APIError.validation("cursor", "cursor is not one we gave out")
        }
        return seq
    }
}
