import Foundation

/// Distances on the WGS84 ellipsoid by Vincenty's inverse formula (T. Vincenty, "Direct and
/// inverse solutions of geodesics on the ellipsoid", Survey Review 1975), which agrees with
/// Karney's algorithm (PROJ's `geod`) to well under a millimetre for every segment a walk has.
///
/// Vincenty's iteration does not converge for nearly antipodal points; those (never two fixes of
/// one walk) fall back to the great-circle distance on a sphere of the ellipsoid's mean radius.
public enum Geodesic {
    /// WGS84 semi-major axis, metres.
    public static let a = 6_378_137.0
    /// WGS84 flattening.
    public static let f = 1 / 298.257_223_563
    /// WGS84 semi-minor axis, metres.
    public static let b = a * (1 - f)

    /// The geodesic distance in metres between two points given in degrees.
    ///
    /// ```swift
    /// let d = Geodesic.distance(from: Coordinate(latitude: 37.5, longitude: 127),
    ///                           to: Coordinate(latitude: 37.51, longitude: 127.01))  // 1419.019…
    /// ```
    public static func distance(from p: Coordinate, to q: Coordinate) -> Double {
        if p.latitude == q.latitude && p.longitude == q.longitude { return 0 }
        let rad = Double.pi / 180
        let lDiff = (q.longitude - p.longitude) * rad
        let u1 = atan((1 - f) * tan(p.latitude * rad))
        let u2 = atan((1 - f) * tan(q.latitude * rad))
        let sinU1 = sin(u1)
        let cosU1 = cos(u1)
        let sinU2 = sin(u2)
        let cosU2 = cos(u2)
        var lambda = lDiff
        for _ in 0..<200 {
            let sinLambda = sin(lambda)
            let cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            let sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return 0 }
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cos2Alpha = 1 - sinAlpha * sinAlpha
            // On the equator cos²α is 0 and the term below vanishes.
            let cos2SigmaM = cos2Alpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cos2Alpha : 0
            let c = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let previous = lambda
            lambda =
                lDiff + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                let uSq = cos2Alpha * (a * a - b * b) / (b * b)
                let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
                let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
                let deltaSigma =
                    bigB * sinSigma
                    * (cos2SigmaM + bigB / 4
                        * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) - bigB / 6 * cos2SigmaM
                            * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
                return b * bigA * (sigma - deltaSigma)
            }
        }
        return sphericalDistance(from: p, to: q)
    }

    /// The haversine distance on a sphere of WGS84's mean radius: only Vincenty's fallback.
    static func sphericalDistance(from p: Coordinate, to q: Coordinate) -> Double {
        let rad = Double.pi / 180
        let dLat = (q.latitude - p.latitude) * rad
        let dLon = (q.longitude - p.longitude) * rad
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(p.latitude * rad) * cos(q.latitude * rad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
    }

    /// The point `distance` metres from `p` on `bearing` degrees, on a local tangent plane: good
    /// to centimetres over the few hundred metres it is used for (privacy zones' offsets).
    public static func offset(_ p: Coordinate, bearing: Double, distance: Double) -> Coordinate {
        let rad = Double.pi / 180
        let phi = p.latitude * rad
        let e2 = f * (2 - f)
        let w = (1 - e2 * sin(phi) * sin(phi)).squareRoot()
        let meridional = a * (1 - e2) / (w * w * w)
        let normal = a / w
        let north = distance * cos(bearing * rad)
        let east = distance * sin(bearing * rad)
        return Coordinate(
            latitude: p.latitude + north / meridional / rad,
            longitude: p.longitude + east / (normal * cos(phi)) / rad
        )
    }
}
