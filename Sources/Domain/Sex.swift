import Foundation

/// The dog's sex, as the API spells it.
public enum Sex: String, Sendable, Codable, CaseIterable {
    case male, female
}
