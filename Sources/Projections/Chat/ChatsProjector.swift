import Domain
import EventLog
import Foundation
import PersonalData
import Postgres

/// `chats`: every message of every conversation by `seq` (`chat_messages`), and per user and
/// conversation where its newest message stands (`chat_conversations`). Per batch: one insert
/// of the new messages, one update of edits, one of unsends, one upsert of the conversations.
public struct ChatsProjector: Projector {
    public init() {}
    public var name: String { "chats" }
    public var tables: [String] { ["chat_messages", "chat_conversations"] }

    public func apply(_ events: [ProjectedEvent], to tables: TableSet, on connection: Connection, sealer: EventSealer) throws {
        // A message's sender and addressee are its pair's `lo` and `hi`, which are indexed.
        try DeletedAccounts.remove(events, from: tables("chat_messages"), naming: ["lo", "hi"], on: connection)
        try DeletedAccounts.remove(events, from: tables("chat_conversations"), naming: ["user_id", "mate_id"], on: connection)
        // Read markers live outside the log; a deleted account's go with the live read model.
        if tables == .live {
            try DeletedAccounts.remove(events, from: "chat_read_markers", naming: ["user_id", "mate_id"], on: connection)
        }
        var sent: [MessageSent] = []
        var sentAt: [LogPosition] = []
        var edits: [UUID: (MessageEdited, LogPosition)] = [:]
        var editOrder: [UUID] = []
        var unsent: [(UUID, LogPosition)] = []
        // Per (user, mate): the newest message seen in this batch.
        var newest: [Pair: MessageSent] = [:]
        for event in events {
            switch event.event {
            case .messageSent(let e):
                sent.append(e)
                sentAt.append(event.position)
                for pair in [Pair(user: e.from, mate: e.to), Pair(user: e.to, mate: e.from)] where (newest[pair]?.seq ?? 0) < e.seq {
                    newest[pair] = e
                }
            case .messageEdited(let e):
                if edits[e.messageID] == nil { editOrder.append(e.messageID) }
                edits[e.messageID] = (e, event.position)
            case .messageUnsent(let e):
                unsent.append((e.messageID, event.position))
            default:
                continue
            }
        }
        if !sent.isEmpty {
            let pairs = sent.map { MatePair($0.from, $0.to) }
            try connection.execute(
                """
                INSERT INTO \(tables("chat_messages")) (message_id, lo, hi, seq, from_user, to_user, text, photo_id, sent_at,
                                                         log_transaction_id, log_position)
                SELECT m, l, h, s, f, t, x, p, a, tx::xid8, pos
                FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::uuid[], $6::uuid[], $7::text[],
                            $8::uuid[], $9::timestamptz[], $10::text[], $11::bigint[]) AS u(m, l, h, s, f, t, x, p, a, tx, pos)
                ON CONFLICT (message_id) DO NOTHING
                """,
                [
                    sent.map(\.messageID), pairs.map(\.lo), pairs.map(\.hi), sent.map(\.seq), sent.map(\.from), sent.map(\.to),
                    sent.map(\.text), sent.map(\.photoID), sent.map(\.sentAt), sentAt.map { String($0.transactionID) },
                    sentAt.map(\.position),
                ]
            )
        }
        // One push per new message and registered device of its addressee (live tables only,
        // recent messages only), in this transaction: enqueued exactly once.
        if tables == .live, !sent.isEmpty {
            try connection.execute(
                """
                INSERT INTO push_outbox (push_id, notification_id, user_id, session_id, entry_at)
                SELECT gen_random_uuid(), e.id, e.to_user, s.session_id, e.at
                FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS e(id, to_user, at)
                \(PushOutboxWriter.devices(of: "e.to_user"))
                WHERE e.at > now() - make_interval(secs => $4)
                ON CONFLICT (notification_id, session_id) DO NOTHING
                """,
                [sent.map(\.messageID), sent.map(\.to), sent.map(\.sentAt), PushOutboxWriter.horizon]
            )
        }
        if !editOrder.isEmpty {
            let e = editOrder.map { edits[$0]! }
            try connection.execute(
                """
                UPDATE \(tables("chat_messages")) m SET text = x.text, edited_at = x.at, log_transaction_id = x.tx::xid8,
                    log_position = x.pos
                FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::bigint[]) AS x(id, text, at, tx, pos)
                WHERE m.message_id = x.id AND NOT m.unsent
                """,
                [e.map(\.0.messageID), e.map(\.0.text), e.map(\.0.editedAt), e.map { String($0.1.transactionID) }, e.map(\.1.position)]
            )
        }
        if !unsent.isEmpty {
            // The text and photo go from the read model as the key goes from the log.
            try connection.execute(
                """
                UPDATE \(tables("chat_messages")) m SET text = NULL, photo_id = NULL, unsent = true, log_transaction_id = x.tx::xid8,
                    log_position = x.pos
                FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS x(id, tx, pos)
                WHERE m.message_id = x.id
                """,
                [unsent.map(\.0), unsent.map { String($0.1.transactionID) }, unsent.map(\.1.position)]
            )
        }
        if !newest.isEmpty {
            let keys = Array(newest.keys)
            let rows = keys.map { newest[$0]! }
            try connection.execute(
                """
                INSERT INTO \(tables("chat_conversations")) (user_id, mate_id, last_seq, last_message_id, updated_at)
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], $5::timestamptz[])
                ON CONFLICT (user_id, mate_id) DO UPDATE SET last_seq = EXCLUDED.last_seq,
                    last_message_id = EXCLUDED.last_message_id, updated_at = EXCLUDED.updated_at
                WHERE \(tables("chat_conversations")).last_seq < EXCLUDED.last_seq
                """,
                [keys.map(\.user), keys.map(\.mate), rows.map(\.seq), rows.map(\.messageID), rows.map(\.sentAt)]
            )
        }
    }

    struct Pair: Hashable {
        var user: UUID
        var mate: UUID
    }
}
