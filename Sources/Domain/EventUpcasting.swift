import Foundation

/// The upcasting hook: turns stored JSON of an old schema version into the current one,
/// one version step at a time, before it is decoded. The log is never rewritten.
public enum EventUpcasting {
    /// Lifts one event's JSON object from version `n` to `n + 1`.
    public typealias Upcaster = @Sendable (inout [String: Any]) throws -> Void

    /// Upcasters by type name, then by the version they lift *from*.
    ///
    /// `user_registered` v0 is a worked example of the mechanism (no v0 was ever shipped):
    /// its profile had a single `keyword` string where v1 has a `keywords` array.
    public static let upcasters: [String: [Int: Upcaster]] = [
        "user_registered": [
            0: { json in
                guard var profile = json["profile"] as? [String: Any] else { return }
                if let keyword = profile.removeValue(forKey: "keyword") {
                    profile["keywords"] = [keyword]
                }
                json["profile"] = profile
            }
        ]
    ]

    /// `data` as JSON of the current schema version of `typeName`.
    public static func upcast(typeName: String, from version: Int, data: Data) throws -> Data {
        let current = Event.currentSchemaVersion(of: typeName)
        if version == current { return data }
        guard version < current, let steps = upcasters[typeName],
            (version..<current).allSatisfy({ steps[$0] != nil })
        else { throw EventDecodingError.unsupportedSchemaVersion(typeName: typeName, version: version) }
        guard var json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EventDecodingError.malformed(typeName: typeName, reason: "not a JSON object")
        }
        for v in version..<current {
            try steps[v]!(&json)
        }
        return try JSONSerialization.data(withJSONObject: json)
    }
}
