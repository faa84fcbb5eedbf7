/// The stored form of a cleaned route: 24 bytes a point (time, latitude, longitude as
/// little-endian IEEE 754 doubles), the exact values measured, nothing else.
public enum RouteCoding {
    public static let bytesPerPoint = 24

    public static func encode(_ points: [TrackPoint]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(points.count * bytesPerPoint)
        for p in points {
            for value in [p.time, p.latitude, p.longitude] {
                withUnsafeBytes(of: value.bitPattern.littleEndian) { out.append(contentsOf: $0) }
            }
        }
        return out
    }

    /// The points of `bytes`, or nil when its length is not a whole number of points.
    public static func decode(_ bytes: some Collection<UInt8>) -> [TrackPoint]? {
        guard bytes.count % bytesPerPoint == 0 else { return nil }
        let array = Array(bytes)
        var points: [TrackPoint] = []
        points.reserveCapacity(array.count / bytesPerPoint)
        var offset = 0
        func double() -> Double {
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(array[offset + k]) << (8 * k) }
            offset += 8
            return Double(bitPattern: bits)
        }
        while offset < array.count {
            let time = double()
            let latitude = double()
            let longitude = double()
            points.append(TrackPoint(time: time, latitude: latitude, longitude: longitude))
        }
        return points
    }
}
