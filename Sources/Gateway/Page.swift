import Foundation
import Hummingbird
import JSONText

/// A list answer: `{"items": [...], "next_cursor": "<opaque>" | null}`.
public struct PageJSON<Item: JSONObjectWritable & Sendable>: JSONObjectWritable, Sendable {
    public var items: [Item]
    public var nextCursor: String?

    public func writeMembers(_ object: inout JSONObjectWriter) throws {
        try object.objects("items", items)
        object.string("next_cursor", nextCursor)
    }
}

/// `?limit=` and `?cursor=` of a list request. The cursor is the sort key of the last item
/// shown (two integers, or an integer and a uuid), base64url-encoded so clients treat it as
/// opaque; its parts are checked before they reach SQL, so a forged cursor is a 400, not a 500.
public struct PageRequest: Sendable, Equatable {
    public static let defaultLimit = 20
    public static let maxLimit = 100

    public var limit: Int
    /// The sort key to continue below, if any.
    public var after: (String, String)?

    public static func == (a: PageRequest, b: PageRequest) -> Bool {
        a.limit == b.limit && a.after?.0 == b.after?.0 && a.after?.1 == b.after?.1
    }

    /// Reads and checks `limit` and `cursor`.
    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        if let text = query["limit"] {
            guard let limit = Int(String(text)), (1...Self.maxLimit).contains(limit) else {
                throw APIError.validation("limit", "limit must be 1 to \(Self.maxLimit)")
            }
            self.limit = limit
        } else {
            limit = Self.defaultLimit
        }
        if let cursor = query["cursor"] {
            guard let parts = Self.decode(String(cursor)) else { throw APIError.validation("cursor", "cursor is not one we gave out") }
            after = parts
        }
    }

    static func encode(_ first: String, _ second: String) -> String {
        Data("\(first)|\(second)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ cursor: String) -> (String, String)? {
        guard cursor.utf8.count <= 200 else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// Trims the extra row fetched to learn whether more exist, and makes the next cursor.
    func page<Row, Item>(_ rows: [Row], item: (Row) -> Item, key: (Row) -> (String, String)) -> PageJSON<Item> {
        let shown = Array(rows.prefix(limit))
        let next =
            rows.count > limit
            ? shown.last.map {
                let k = key($0)
                return Self.encode(k.0, k.1)
            } : nil
        return PageJSON(items: shown.map(item), nextCursor: next)
    }
}
