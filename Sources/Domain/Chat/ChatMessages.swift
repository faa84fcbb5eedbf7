import Foundation

/// Every message of a conversation by id, as `ChatState` keeps them: dictionaries whose copies
/// share the bulk of them.
///
/// A conversation's state is cached while the next send evolves a copy of it, so a plain
/// dictionary was copied whole at every send: a send cost grew with the conversation's length
/// (3 % of the server's CPU for chat sends at a few hundred messages per conversation). Here a
/// change goes into a small `recent` part; every `recentLimit` changes it becomes a settled
/// level, shared by every copy behind a reference. A level at least half the size of the one
/// below it is merged into that one, so the levels halve in size from the oldest up: at most
/// about log₂(n / 64) of them, and a message is copied that many times in its life, where
/// folding everything into one settled dictionary copied the whole conversation every 64 sends
/// (at 100,000 messages, 1,500 messages copied per send).
public struct ChatMessages: Sendable {
    /// Changes as one shared dictionary: a message, or nil where one was removed.
    private final class Level: Sendable {
        let changes: [UUID: ChatState.Message?]
        init(_ changes: [UUID: ChatState.Message?]) { self.changes = changes }
    }

    /// The settled levels, oldest (and largest) first; a newer level's change wins.
    private var levels: [Level]
    /// Changes since the newest level.
    private var recent: [UUID: ChatState.Message?]
    /// Changes held before they become a level.
    static let recentLimit = 64

    public init(_ messages: [UUID: ChatState.Message] = [:]) {
        levels = messages.isEmpty ? [] : [Level(messages.mapValues { $0 })]
        recent = [:]
    }

    public subscript(id: UUID) -> ChatState.Message? {
        get {
            if let change = recent[id] { return change }
            for level in levels.reversed() {
                if let change = level.changes[id] { return change }
            }
            return nil
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

    /// How many settled levels there are (for tests: about log₂ of the messages over 64).
    var levelCount: Int { levels.count }

    /// The messages as one dictionary (a copy: for tests and comparisons, not for sends).
    private var all: [UUID: ChatState.Message] {
        var merged: [UUID: ChatState.Message] = [:]
        for changes in levels.map(\.changes) + [recent] {
            for (id, change) in changes { merged[id] = change }
        }
        return merged
    }

    /// `recent` becomes the newest level; levels no more than twice the size of the one above
    /// them take it in.
    private mutating func settle() {
        levels.append(Level(recent))
        recent = [:]
        while levels.count >= 2, levels[levels.count - 2].changes.count <= 2 * levels[levels.count - 1].changes.count {
            let newer = levels.removeLast().changes
            let older = levels.removeLast().changes
            var merged = older.merging(newer) { _, new in new }
            // Nothing older is left under the oldest level for a removal to hide.
            if levels.isEmpty { merged = merged.filter { $0.value != nil } }
            levels.append(Level(merged))
        }
    }
}

extension ChatMessages: Equatable {
    public static func == (lhs: ChatMessages, rhs: ChatMessages) -> Bool { lhs.all == rhs.all }
}
