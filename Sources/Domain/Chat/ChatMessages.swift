import Foundation

/// Every message of a conversation by id, as `ChatState` keeps them: a dictionary whose copies
/// share the bulk of it.
///
/// A conversation's state is cached while the next send evolves a copy of it, so a plain
/// dictionary was copied whole at every send: a send cost grew with the conversation's length
/// (3 % of the server's CPU for chat sends at a few hundred messages per conversation). Here a
/// change goes into a small `recent` part, and the `settled` part behind a reference is shared
/// by every copy; every `recentLimit` changes the recent part is folded into a new settled one.
public struct ChatMessages: Sendable {
    private final class Settled: Sendable {
        let messages: [UUID: ChatState.Message]
        init(_ messages: [UUID: ChatState.Message]) { self.messages = messages }
    }

    private var settled: Settled
    /// Changes since `settled`: a message, or nil where one was removed.
    private var recent: [UUID: ChatState.Message?]
    /// Changes held before they are folded into a new settled part.
    static let recentLimit = 64

    public init(_ messages: [UUID: ChatState.Message] = [:]) {
        settled = Settled(messages)
        recent = [:]
    }

    public subscript(id: UUID) -> ChatState.Message? {
        get {
            if let change = recent[id] { return change }
            return settled.messages[id]
        }
        set {
            recent[id] = .some(newValue)
            if recent.count >= Self.recentLimit { settle() }
        }
    }

    /// Every message (in no order).
    public var values: [ChatState.Message] { Array(all.values) }

    /// How many messages there are.
    public var count: Int { all.count }

    /// The messages as one dictionary (a copy: for tests and comparisons, not for sends).
    private var all: [UUID: ChatState.Message] {
        var merged = settled.messages
        for (id, change) in recent { merged[id] = change }
        return merged
    }

    private mutating func settle() {
        settled = Settled(all)
        recent = [:]
    }
}

extension ChatMessages: Equatable {
    public static func == (lhs: ChatMessages, rhs: ChatMessages) -> Bool { lhs.all == rhs.all }
}
