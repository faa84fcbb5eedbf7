import Foundation

/// A word describing the dog's character; a profile carries one or two distinct ones.
public enum Keyword: String, Sendable, Codable, CaseIterable {
    case energetic, smart, friendly, shy, independent
}
