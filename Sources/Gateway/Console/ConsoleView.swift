import Mustache

/// The values a console template reads, by name.
///
/// Measured on the reports page (50 reports, two cards each): rendering was four fifths of the
/// server's CPU per page, most of it the renderer's dynamic casts on `[String: Any]` (a
/// conditional conformance, checked for every name it looks up), its per-character HTML escaping,
/// and names missing from a card that it then looked for in every enclosing object. A view of
/// its own type, texts as `ConsoleText` and absent values as `ConsoleText.absent` halved the
/// rendering time; absent values no longer pick up a same-named value of an enclosing object
/// (a card without an age showed its report's age).
struct ConsoleView: MustacheParent {
    private let values: [String: Any]

    /// `nil` becomes an absent value: `{{#name}}` skips it, `{{^name}}` shows, `{{name}}` is empty.
    init(_ values: [String: Any?]) {
        self.values = values.mapValues { value in
            switch value {
            case .none: ConsoleText.absent
            case .some(let text as String): ConsoleText(text)
            case .some(let value): value
            }
        }
    }

    func child(named name: String) -> Any? { values[name] }
}

/// A text on a console page, escaped by the page's content type like any value.
struct ConsoleText: MustacheCustomRenderable {
    let renderText: String
    let isNull: Bool

    init(_ text: String) {
        renderText = text
        isNull = false
    }

    private init(absent: Void) {
        renderText = ""
        isNull = true
    }

    static let absent = ConsoleText(absent: ())
}

/// HTML escaping over UTF-8 bytes, for the same five characters as the renderer's own (`<`, `>`,
/// `&`, `"`, `'`): the renderer's goes character by character through a dictionary. Templates
/// use it through the `CONTENT_TYPE` pragma that `ConsolePages` puts first in each of them.
struct ConsoleHTML: MustacheContentType {
    static let name = "SNIFFMEET_HTML"

    func escapeText(_ text: String) -> String {
        guard text.utf8.contains(where: Self.isSpecial) else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "<"): escaped += "&lt;".utf8
            case UInt8(ascii: ">"): escaped += "&gt;".utf8
            case UInt8(ascii: "&"): escaped += "&amp;".utf8
            case UInt8(ascii: "\""): escaped += "&quot;".utf8
            case UInt8(ascii: "'"): escaped += "&#39;".utf8
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func isSpecial(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "'")
    }
}
