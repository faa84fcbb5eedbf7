import Foundation
import UUIDText

/// Two distinct-or-not users in a canonical order, so that (a, b) and (b, a) are the same pair.
///
/// The order is that of the lowercase UUID strings, which is also the order in the
/// `mates-<lo>-<hi>` stream name.
public struct MatePair: Hashable, Sendable {
    /// The user whose lowercase UUID string sorts first.
    public let lo: UUID
    /// The user whose lowercase UUID string sorts last.
    public let hi: UUID

    /// Builds the pair of `a` and `b` in canonical order.
    public init(_ a: UUID, _ b: UUID) {
        // Foundation orders UUIDs by their bytes, which is the order of their lowercase text
        // (hex digits keep it, the dashes stand at the same places), without making the text.
        if a <= b {
            (lo, hi) = (a, b)
        } else {
            (lo, hi) = (b, a)
        }
    }

    /// Whether `user` is one of the two.
    public func contains(_ user: UUID) -> Bool { user == lo || user == hi }

    /// The other user of the pair, or `nil` when `user` is not in it.
    public func other(than user: UUID) -> UUID? {
        if user == lo { return hi }
        if user == hi { return lo }
        return nil
    }
}
