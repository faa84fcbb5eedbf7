import Foundation

/// The rules every free-text field of the app goes through (nickname, dog name, walk message,
/// place name, picture name): the one place that decides what text the log may hold.
///
/// - Text is stored NFC-normalized, so the same word typed on two phones is the same bytes.
/// - Control characters (C0, C1, DEL, NUL), bidi controls (which can make a name read
///   backwards, U+202E) and unassigned code points are refused.
/// - Lengths count user-perceived characters (grapheme clusters), and a field is also capped
///   at 4 bytes per allowed character, so that a flood of combining marks on one letter (one
///   "character", kilobytes of bytes) cannot pass.
public enum FreeText {
    /// The cleaned (NFC) form of `raw`, or `validation_failed` naming `field`.
    public static func clean(_ raw: String, field: String, length: ClosedRange<Int>) throws(DomainError) -> String {
        // Printable ASCII is already NFC, holds nothing refused, and is one character a byte:
        // the common case skips normalization and the grapheme walk (a few percent of the
        // server's CPU per SendWalk).
        if isPrintableASCII(raw) {
            guard length.contains(raw.utf8.count) else {
                throw .validationFailed(field: field, reason: "must be \(length.lowerBound) to \(length.upperBound) characters")
            }
            return raw
        }
        let text = raw.precomposedStringWithCanonicalMapping
        if let refused = text.unicodeScalars.first(where: isRefused) {
            throw .validationFailed(field: field, reason: "must not contain \(describe(refused))")
        }
        guard length.contains(text.count), text.utf8.count <= 4 * length.upperBound else {
            throw .validationFailed(field: field, reason: "must be \(length.lowerBound) to \(length.upperBound) characters")
        }
        return text
    }

    /// A nickname as stored (NFC), checked beyond `clean`: no white space, and no Latin letters
    /// mixed with Cyrillic or Greek ones (`pаypal` with a Cyrillic `а` is not `paypal`).
    /// Hangul, Latin and digits mix freely.
    public static func nickname(_ raw: String, length: ClosedRange<Int>) throws(DomainError) -> String {
        let text = try clean(raw, field: "nickname", length: length)
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            throw .validationFailed(field: "nickname", reason: "must not contain spaces")
        }
        var scripts = Set<Script>()
        for scalar in nicknameKey(text).unicodeScalars { if let script = Script(scalar) { scripts.insert(script) } }
        if scripts.contains(.latin) && (scripts.contains(.cyrillic) || scripts.contains(.greek)) {
            throw .validationFailed(field: "nickname", reason: "must not mix Latin letters with Cyrillic or Greek ones")
        }
        return text
    }

    /// The form in which two nicknames are compared: NFKC with full case folding (NFKC_Casefold),
    /// invisible (default-ignorable) code points dropped. `ＡＢ`, `ab` and `Ab` give one key, so do
    /// the NFC and NFD spellings of `josé`; for ASCII it is plain lowercasing, so nicknames taken
    /// before these rules keep their stream.
    public static func nicknameKey(_ nickname: String) -> String {
        if isPrintableASCII(nickname) { return nickname.lowercased() }
        var visible = String.UnicodeScalarView()
        visible.append(contentsOf: nickname.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint })
        return String(visible).precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
    }

    static func isPrintableASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .unassigned, .surrogate: return true
        default: return scalar.properties.isBidiControl
        }
    }

    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        switch scalar.properties.generalCategory {
        case .control: return "control characters (\(code))"
        case .unassigned: return "unassigned code points (\(code))"
        default: return "bidirectional controls (\(code))"
        }
    }

    /// The scripts whose letters look alike: enough to spot a mixed nickname.
    enum Script {
        case latin, greek, cyrillic

        init?(_ scalar: Unicode.Scalar) {
            guard scalar.properties.isAlphabetic else { return nil }
            switch scalar.value {
            case 0x41...0x5A, 0x61...0x7A, 0xAA, 0xBA, 0xC0...0x24F, 0x250...0x2AF, 0x1D00...0x1D7F, 0x1E00...0x1EFF,
                0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F, 0xFF21...0xFF3A, 0xFF41...0xFF5A:
                self = .latin
            case 0x370...0x3FF, 0x1F00...0x1FFF:
                self = .greek
            case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F:
                self = .cyrillic
            default:
                return nil
            }
        }
    }
}
