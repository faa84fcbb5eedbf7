import Foundation
import HTTPTypes
import OpenAPIRuntime

/// One event of the live stream (`GET /v1/me/stream`), decoded.
public enum LiveEvent: Sendable, Hashable {
    /// A new entry of my inbox.
    case notification(Components.Schemas.Notification)
    /// A message of one of my conversations (with `conversation`, the mate's user id): new,
    /// edited or unsent.
    case message(conversation: String, Components.Schemas.ChatMessage)
    /// The mate `userID` read our conversation up to the message `upTo` (`seq`); live only.
    case read(userID: String, upTo: Int)
    /// The mate `userID` is typing in our conversation; live only.
    case typing(userID: String)
}

/// Why the live stream stopped for good.
public enum LiveEventsError: Error, Sendable {
    /// The server refused to open it (`status`, with the error body when there was one).
    case refused(status: Int, SniffMeetError?)
    /// It could not be opened or it broke this many times in a row.
    case gaveUp(after: Int, lastError: any Error)
}

/// The live stream (`GET /v1/me/stream`) as an `AsyncSequence` of ``LiveEvent``s that does not
/// end: when the server closes the stream (after 10 minutes) or the connection is cut, it opens
/// it again with `Last-Event-ID`, the id of the last event it saw, and the server sends what came
/// since, so nothing is lost and nothing comes twice (`read` and `typing` are live only).
///
/// ```swift
/// for try await event in LiveEvents(client: client) {
///     switch event {
///     case .message(let mate, let message): ...
///     default: break
///     }
/// }
/// ```
/// End it by cancelling the task that iterates it.
public struct LiveEvents: AsyncSequence, Sendable {
    public typealias Element = LiveEvent

    let client: Client
    let viewing: String?
    let lastEventID: String?
    let reconnectDelay: TimeInterval
    let maxFailures: Int
    let runtime: OpenAPIRuntime.Configuration

    /// - Parameters:
    ///   - viewing: the mate whose conversation the app shows (no push of it to this device meanwhile).
    ///   - lastEventID: resume after this event id (one this stream gave, ``Iterator/lastEventID``).
    ///   - reconnectDelay: the wait before opening again after a failure (none after a clean end).
    ///   - maxFailures: failures in a row after which the sequence throws.
    public init(
        client: Client,
        viewing: String? = nil,
        lastEventID: String? = nil,
        reconnectDelay: TimeInterval = 1,
        maxFailures: Int = 5,
        runtime: OpenAPIRuntime.Configuration = SniffMeetClient.runtimeConfiguration
    ) {
        self.client = client
        self.viewing = viewing
        self.lastEventID = lastEventID
        self.reconnectDelay = reconnectDelay
        self.maxFailures = maxFailures
        self.runtime = runtime
    }

    public func makeAsyncIterator() -> Iterator { Iterator(self) }

    public struct Iterator: AsyncIteratorProtocol {
        typealias Events = ServerSentEventsDeserializationSequence<ServerSentEventsLineDeserializationSequence<HTTPBody>>

        let sequence: LiveEvents
        let decoder: JSONDecoder
        var events: Events.AsyncIterator?
        var failures = 0
        /// The id of the last event seen: where a new connection resumes.
        public private(set) var lastEventID: String?
        /// How many times the stream was opened.
        public private(set) var connections = 0

        init(_ sequence: LiveEvents) {
            self.sequence = sequence
            self.lastEventID = sequence.lastEventID
            self.decoder = SniffMeetClient.decoder(sequence.runtime)
        }

        public mutating func next() async throws -> LiveEvent? {
            while true {
                try Task.checkCancellation()
                if events == nil {
                    do {
                        events = try await open()
                    } catch let error as LiveEventsError {
                        throw error
                    } catch {
                        try await failed(error)
                        continue
                    }
                }
                do {
                    guard let event = try await events?.next() else {
                        events = nil  // the server ended it: open again at once
                        continue
                    }
                    failures = 0
                    if let id = event.id, !id.isEmpty { lastEventID = id }
                    if let decoded = try decode(event) { return decoded }
                } catch let error as DecodingError {
                    throw error  // an event this client cannot read: not something a reconnect mends
                } catch {
                    events = nil
                    try await failed(error)
                }
            }
        }

        mutating func failed(_ error: any Error) async throws {
            try Task.checkCancellation()
            failures += 1
            guard failures < sequence.maxFailures else { throw LiveEventsError.gaveUp(after: failures, lastError: error) }
            try await Task.sleep(nanoseconds: UInt64(sequence.reconnectDelay * 1_000_000_000))
        }

        mutating func open() async throws -> Events.AsyncIterator {
            connections += 1
            let output = try await sequence.client.meStream(
                query: .init(viewing: sequence.viewing),
                headers: .init(lastEventID: lastEventID)
            )
            switch output {
            case .ok(let ok): return try ok.body.textEventStream.asDecodedServerSentEvents().makeAsyncIterator()
            case .badRequest(let answer): throw LiveEventsError.refused(status: 400, try? answer.body.json)
            case .unauthorized(let answer): throw LiveEventsError.refused(status: 401, try? answer.body.json)
            case .tooManyRequests(let answer): throw LiveEventsError.refused(status: 429, try? answer.body.json)
            case .serviceUnavailable(let answer): throw LiveEventsError.refused(status: 503, try? answer.body.json)
            case .undocumented(let status, _): throw LiveEventsError.refused(status: status, nil)
            }
        }

        func decode(_ event: ServerSentEvent) throws -> LiveEvent? {
            guard let data = event.data?.data(using: .utf8) else { return nil }
            switch event.event {
            case "notification": return .notification(try decoder.decode(Components.Schemas.Notification.self, from: data))
            case "message":
                let mate = try decoder.decode(Mate.self, from: data)
                return .message(conversation: mate.user_id, try decoder.decode(Components.Schemas.ChatMessage.self, from: data))
            case "read":
                let read = try decoder.decode(Read.self, from: data)
                return .read(userID: read.user_id, upTo: read.up_to)
            case "typing": return .typing(userID: try decoder.decode(Mate.self, from: data).user_id)
            default: return nil  // an event this client does not know yet
            }
        }

        struct Mate: Decodable { var user_id: String }
        struct Read: Decodable {
            var user_id: String
            var up_to: Int
        }
    }
}
