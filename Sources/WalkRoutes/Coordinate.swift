/// A position in degrees on WGS84.
public struct Coordinate: Sendable, Equatable, Hashable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Finite, latitude in [-90, 90], longitude in [-180, 180].
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

/// One recorded fix: a time (seconds since 1970, UTC), a position and, when the phone gave one,
/// the horizontal accuracy in metres.
public struct TrackPoint: Sendable, Equatable {
    public var time: Double
    public var coordinate: Coordinate
    public var accuracy: Double?

    public init(time: Double, latitude: Double, longitude: Double, accuracy: Double? = nil) {
        self.time = time
        self.coordinate = Coordinate(latitude: latitude, longitude: longitude)
        self.accuracy = accuracy
    }

    public var latitude: Double { coordinate.latitude }
    public var longitude: Double { coordinate.longitude }
}

/// The smallest latitude/longitude box around a route (routes across the antimeridian are not
/// split; a walk does not cross it).
public struct Bounds: Sendable, Equatable {
    public var south: Double
    public var west: Double
    public var north: Double
    public var east: Double

    public init(south: Double, west: Double, north: Double, east: Double) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// The box around `coordinates`, or nil when there are none.
    public init?(_ coordinates: some Sequence<Coordinate>) {
        var iterator = coordinates.makeIterator()
        guard let first = iterator.next() else { return nil }
        var box = Bounds(south: first.latitude, west: first.longitude, north: first.latitude, east: first.longitude)
        while let c = iterator.next() {
            box.south = min(box.south, c.latitude)
            box.north = max(box.north, c.latitude)
            box.west = min(box.west, c.longitude)
            box.east = max(box.east, c.longitude)
        }
        self = box
    }
}
