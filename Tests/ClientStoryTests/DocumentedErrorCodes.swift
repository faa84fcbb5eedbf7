import Foundation

/// The error codes `openapi.json` documents per operation: each error answer's description ends
/// in "Codes: `a`, `b`." (written by `scripts/gen_openapi.py`), under the answer's status.
enum DocumentedErrorCodes {
    /// One documented (operation, status, code).
    struct Pair: Hashable, Comparable, CustomStringConvertible, Sendable {
        var operation: String
        var status: Int
        var code: String
        var description: String { "\(operation) \(status) \(code)" }
        static func < (a: Pair, b: Pair) -> Bool { a.description < b.description }
    }

    /// Every documented pair of the document in the repository.
    static var all: Set<Pair> { document.pairs }
    /// The HTTP method of each operation.
    static var methods: [String: String] { document.methods }

    private static let document: (pairs: Set<Pair>, methods: [String: String]) = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Gateway/openapi.json")
        guard let data = try? Data(contentsOf: url),
            let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let paths = document["paths"] as? [String: [String: Any]]
        else { fatalError("cannot read \(url.path)") }
        let shared = (document["components"] as? [String: Any])?["responses"] as? [String: [String: Any]] ?? [:]
        var pairs: Set<Pair> = []
        var methods: [String: String] = [:]
        for item in paths.values {
            for case let (method, operation as [String: Any]) in item {
                guard let id = operation["operationId"] as? String, let responses = operation["responses"] as? [String: [String: Any]]
                else { continue }
                methods[id] = method.uppercased()
                for (status, response) in responses {
                    let resolved = (response["$ref"] as? String).flatMap { shared[String($0.split(separator: "/").last ?? "")] } ?? response
                    guard let status = Int(status), let description = resolved["description"] as? String else { continue }
                    for code in codes(in: description) { pairs.insert(Pair(operation: id, status: status, code: code)) }
                }
            }
        }
        return (pairs, methods)
    }()

    /// The documented pairs of `operations`.
    static func of(_ operations: some Sequence<String>) -> Set<Pair> {
        let wanted = Set(operations)
        return all.filter { wanted.contains($0.operation) }
    }

    /// The codes in backticks after the description's last "Codes: ".
    static func codes(in description: String) -> [String] {
        guard let range = description.range(of: "Codes: ", options: .backwards) else { return [] }
        return description[range.upperBound...].split(separator: "`", omittingEmptySubsequences: false).enumerated().compactMap {
            $0.offset % 2 == 1 ? String($0.element) : nil
        }
    }
}
