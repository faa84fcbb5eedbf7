/// Why a GPX file is refused.
public enum GPXRefusal: Error, Equatable, Sendable {
    /// Larger than `GPX.maximumBytes`.
    case tooLarge
    /// A document type declaration (`<!DOCTYPE`, `<!ENTITY`, …): refused unread, so no entity is
    /// ever expanded and no external one ever fetched.
    case doctype
    /// An entity reference other than the five XML predefines and character references.
    case entity
    /// Elements nested deeper than `GPX.maximumDepth`.
    case tooDeep
    /// More than `GPX.maximumPoints` track points.
    case tooManyPoints
    /// A track point without a valid `lat`/`lon` or `time`.
    case point(index: Int)
    /// Anything else that is not well-formed GPX.
    case malformed(String)

    /// A human sentence.
    public var message: String {
        switch self {
        case .tooLarge: "a GPX file is at most 2 MiB"
        case .doctype: "GPX files may not contain a document type declaration"
        case .entity: "GPX files may only use the predefined XML entities and character references"
        case .tooDeep: "elements nested too deeply"
        case .tooManyPoints: "a walk has at most \(GPX.maximumPoints) points"
        case .point(let i): "track point \(i) needs lat, lon and an RFC 3339 time"
        case .malformed(let why): "not a well-formed GPX file: \(why)"
        }
    }
}

/// GPX 1.1 (https://www.topografix.com/GPX/1/1/): the track points of a file, and a file of a
/// route.
///
/// The reader is a small scanner written for this one job, not a general XML parser: it checks
/// the size first, refuses any `<!DOCTYPE`/`<!ENTITY` the moment it sees one (so "billion laughs"
/// and external entities are never expanded or read), accepts only the predefined and numeric
/// entity references, bounds nesting depth and the number of points as it goes, and builds only
/// the points themselves.
public enum GPX {
    public static let maximumBytes = 2 * 1_024 * 1_024
    public static let maximumDepth = 32
    public static let maximumPoints = RecordedRoute.maximumPoints

    /// The points of every `trk/trkseg/trkpt` in document order; `time` from each point's
    /// `<time>`, no accuracy (GPX has none in metres).
    public static func parse(_ input: [UInt8]) throws(GPXRefusal) -> [TrackPoint] {
        guard input.count <= maximumBytes else { throw .tooLarge }
        var scanner = Scanner(bytes: input)
        return try scanner.run()
    }

    /// A GPX 1.1 file with one track of `points`.
    public static func write(_ points: [TrackPoint], name: String) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="SniffMeet" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>\(escape(name))</name><trkseg>

            """
        text.reserveCapacity(points.count * 90 + 200)
        for p in points {
            text += "<trkpt lat=\"\(p.latitude)\" lon=\"\(p.longitude)\"><time>\(RFC3339.format(p.time))</time></trkpt>\n"
        }
        text += "</trkseg></trk>\n</gpx>\n"
        return text
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0
        /// Local names of the open elements.
        var stack: [ArraySlice<UInt8>] = []
        var points: [TrackPoint] = []
        /// The point being read: its coordinates, and its time once `</time>` closes.
        var pointLatitude = Double.nan
        var pointLongitude = Double.nan
        var pointTime: Double?
        var inPoint = false
        var timeText: [UInt8] = []
        var collectingTime = false

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark, which some exporters write, is not text before the root.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        }

        mutating func run() throws(GPXRefusal) -> [TrackPoint] {
            var sawRoot = false
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "<") {
                    try markup(sawRoot: &sawRoot)
                } else {
                    try text()
                }
            }
            guard sawRoot, stack.isEmpty else { throw .malformed("unclosed elements") }
            return points
        }

        func startsWith(_ s: StaticString, at at: Int) -> Bool {
            let count = s.utf8CodeUnitCount
            guard at + count <= bytes.count else { return false }
            let p = s.utf8Start
            for k in 0..<count where bytes[at + k] != p[k] { return false }
            return true
        }

        /// The index just after the next `terminator` from `from`, or a refusal.
        func after(_ terminator: StaticString, from: Int) throws(GPXRefusal) -> Int {
            var k = from
            while k < bytes.count {
                if startsWith(terminator, at: k) { return k + terminator.utf8CodeUnitCount }
                k += 1
            }
            throw .malformed("unterminated markup")
        }

        mutating func markup(sawRoot: inout Bool) throws(GPXRefusal) {
            if startsWith("<?", at: i) {
                i = try after("?>", from: i + 2)
            } else if startsWith("<!--", at: i) {
                i = try after("-->", from: i + 4)
            } else if startsWith("<![CDATA[", at: i) {
                let start = i + 9
                i = try after("]]>", from: start)
                if collectingTime { timeText += bytes[start..<(i - 3)] }
            } else if startsWith("<!", at: i) {
                // <!DOCTYPE, <!ENTITY, <!ELEMENT, …: refused before another byte is looked at.
                throw .doctype
            } else if startsWith("</", at: i) {
                try endTag()
            } else {
                try startTag(sawRoot: &sawRoot)
            }
        }

        static func isNameByte(_ b: UInt8) -> Bool {
            !(b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == UInt8(ascii: ">") || b == UInt8(ascii: "/")
                || b == UInt8(ascii: "=") || b == UInt8(ascii: "<"))
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

        /// The name at `i`, without its namespace prefix.
        mutating func name() throws(GPXRefusal) -> ArraySlice<UInt8> {
            let start = i
            while i < bytes.count, Self.isNameByte(bytes[i]) { i += 1 }
            guard i > start else { throw .malformed("expected a name") }
            let whole = bytes[start..<i]
            if let colon = whole.lastIndex(of: UInt8(ascii: ":")) { return bytes[(colon + 1)..<i] }
            return whole
        }

        mutating func skipSpace() {
            while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
        }

        mutating func startTag(sawRoot: inout Bool) throws(GPXRefusal) {
            i += 1
            let element = try name()
            if stack.isEmpty {
                guard !sawRoot, element.elementsEqual("gpx".utf8) else { throw .malformed("the root element must be gpx") }
                sawRoot = true
            }
            let isPoint =
                element.elementsEqual("trkpt".utf8) && stack.count >= 2 && stack[stack.count - 1].elementsEqual("trkseg".utf8)
                && stack[stack.count - 2].elementsEqual("trk".utf8)
            var latitude = Double.nan
            var longitude = Double.nan
            while true {
                skipSpace()
                guard i < bytes.count else { throw .malformed("unterminated tag") }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                if startsWith("/>", at: i) {
                    i += 2
                    if isPoint { throw .point(index: points.count) }
                    return
                }
                let attribute = try name()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { throw .malformed("expected =") }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                    throw .malformed("expected a quoted value")
                }
                let quote = bytes[i]
                i += 1
                let start = i
                while i < bytes.count, bytes[i] != quote {
                    guard bytes[i] != UInt8(ascii: "<") else { throw .malformed("< in an attribute") }
                    i += 1
                }
                guard i < bytes.count else { throw .malformed("unterminated attribute") }
                let value = try Self.decoded(bytes[start..<i])
                i += 1
                if isPoint {
                    if attribute.elementsEqual("lat".utf8) { latitude = Self.number(value) }
                    if attribute.elementsEqual("lon".utf8) { longitude = Self.number(value) }
                }
            }
            stack.append(element)
            guard stack.count <= GPX.maximumDepth else { throw .tooDeep }
            if isPoint {
                guard points.count < GPX.maximumPoints else { throw .tooManyPoints }
                guard latitude.isFinite, longitude.isFinite else { throw .point(index: points.count) }
                inPoint = true
                pointLatitude = latitude
                pointLongitude = longitude
                pointTime = nil
            } else if inPoint && element.elementsEqual("time".utf8) && stack.count >= 2
                && stack[stack.count - 2].elementsEqual("trkpt".utf8)
            {
                collectingTime = true
                timeText = []
            }
        }

        mutating func endTag() throws(GPXRefusal) {
            i += 2
            let element = try name()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw .malformed("unterminated end tag") }
            i += 1
            guard let open = stack.popLast(), open.elementsEqual(element) else { throw .malformed("mismatched end tag") }
            if collectingTime && element.elementsEqual("time".utf8) {
                collectingTime = false
                guard let t = RFC3339.parse(timeText.trimmed()) else { throw .point(index: points.count) }
                pointTime = t
            } else if inPoint && element.elementsEqual("trkpt".utf8) {
                inPoint = false
                guard let t = pointTime else { throw .point(index: points.count) }
                points.append(TrackPoint(time: t, latitude: pointLatitude, longitude: pointLongitude))
            }
        }

        mutating func text() throws(GPXRefusal) {
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "<") { i += 1 }
            let run = bytes[start..<i]
            guard !stack.isEmpty || run.allSatisfy(Self.isSpace) else { throw .malformed("text outside the root element") }
            // Every text is checked for entity references, not only the text kept.
            let value = try Self.decoded(run)
            if collectingTime { timeText += value }
        }

        /// `text` with the predefined and numeric references replaced; any other reference refused.
        static func decoded(_ text: ArraySlice<UInt8>) throws(GPXRefusal) -> [UInt8] {
            guard text.contains(UInt8(ascii: "&")) else { return Array(text) }
            var out: [UInt8] = []
            var k = text.startIndex
            while k < text.endIndex {
                guard text[k] == UInt8(ascii: "&") else {
                    out.append(text[k])
                    k += 1
                    continue
                }
                guard let semicolon = text[k..<min(text.endIndex, k + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                    throw .entity
                }
                let reference = text[(k + 1)..<semicolon]
                switch String(decoding: reference, as: UTF8.self) {
                case "lt": out.append(UInt8(ascii: "<"))
                case "gt": out.append(UInt8(ascii: ">"))
                case "amp": out.append(UInt8(ascii: "&"))
                case "apos": out.append(UInt8(ascii: "'"))
                case "quot": out.append(UInt8(ascii: "\""))
                case let r where r.hasPrefix("#x"):
                    guard let v = UInt32(r.dropFirst(2), radix: 16), let s = Unicode.Scalar(v) else { throw .entity }
                    out += Array(String(Character(s)).utf8)
                case let r where r.hasPrefix("#"):
                    guard let v = UInt32(r.dropFirst(1), radix: 10), let s = Unicode.Scalar(v) else { throw .entity }
                    out += Array(String(Character(s)).utf8)
                default:
                    throw .entity
                }
                k = semicolon + 1
            }
            return out
        }

        /// A decimal number as GPX writes it (no exponents, no hex, no "nan").
        static func number(_ text: [UInt8]) -> Double {
            let trimmed = text.trimmed()
            guard !trimmed.isEmpty,
                trimmed.allSatisfy({
                    ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+")
                }),
                let v = Double(String(decoding: trimmed, as: UTF8.self))
            else { return .nan }
            return v
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func trimmed() -> ArraySlice<UInt8> {
        var s = self[...]
        while let f = s.first, f == 0x20 || f == 0x09 || f == 0x0A || f == 0x0D { s = s.dropFirst() }
        while let l = s.last, l == 0x20 || l == 0x09 || l == 0x0A || l == 0x0D { s = s.dropLast() }
        return s
    }
}
