import Foundation

/// The dog's size, as the API spells it.
public enum Size: String, Sendable, Codable, CaseIterable {
    case small, medium, large
}
