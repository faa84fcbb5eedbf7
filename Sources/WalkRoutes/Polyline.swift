/// Google's encoded polyline format at precision 5
/// (https://developers.google.com/maps/documentation/utilities/polylinealgorithm).
public enum Polyline {
    /// The encoded text of `coordinates`.
    ///
    /// ```swift
    /// Polyline.encode([.init(latitude: 38.5, longitude: -120.2), .init(latitude: 40.7, longitude: -120.95),
    ///                  .init(latitude: 43.252, longitude: -126.453)])  // "_p~iF~ps|U_ulLnnqC_mqNvxq`@"
    /// ```
    public static func encode(_ coordinates: [Coordinate]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(coordinates.count * 8)
        var previousLat = 0
        var previousLon = 0
        for c in coordinates {
            let lat = Int((c.latitude * 1e5).rounded())
            let lon = Int((c.longitude * 1e5).rounded())
            append(lat - previousLat, to: &bytes)
            append(lon - previousLon, to: &bytes)
            previousLat = lat
            previousLon = lon
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func append(_ value: Int, to bytes: inout [UInt8]) {
        var v = value < 0 ? ~(value << 1) : value << 1
        while v >= 0x20 {
            bytes.append(UInt8((0x20 | (v & 0x1f)) + 63))
            v >>= 5
        }
        bytes.append(UInt8(v + 63))
    }

    /// The coordinates of an encoded polyline, or nil when the text is not one.
    public static func decode(_ text: String) -> [Coordinate]? {
        var result: [Coordinate] = []
        var lat = 0
        var lon = 0
        var bytes = Array(text.utf8)[...]
        func next() -> Int? {
            var shift = 0
            var value = 0
            while let byte = bytes.popFirst() {
                guard byte >= 63, byte < 127, shift < 60 else { return nil }
                let chunk = Int(byte) - 63
                value |= (chunk & 0x1f) << shift
                shift += 5
                if chunk < 0x20 { return (value & 1) != 0 ? ~(value >> 1) : value >> 1 }
            }
            return nil
        }
        while !bytes.isEmpty {
            guard let dLat = next(), let dLon = next() else { return nil }
            lat += dLat
            lon += dLon
            result.append(Coordinate(latitude: Double(lat) / 1e5, longitude: Double(lon) / 1e5))
        }
        return result
    }
}
