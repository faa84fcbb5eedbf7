import Foundation

/// An upload after `Vips.process`: both copies re-encoded as baseline JPEG without metadata.
public struct ProcessedPhoto: Sendable {
    /// Upright, at most `PhotoLimits.longestSide` on its longest side (never enlarged).
    public var full: Data
    /// A `PhotoLimits.thumbnailSide` square from the centre.
    public var thumbnail: Data
    /// The size of `full`.
    public var width: Int
    public var height: Int
}

/// What an upload may be and what is made of it.
public struct PhotoLimits: Sendable {
    /// Largest width × height read from the header before any pixel is decoded.
    public var maxPixels: Int
    public var longestSide: Int
    public var thumbnailSide: Int
    /// JPEG quality of both copies.
    public var quality: Int

    public init(maxPixels: Int = 50_000_000, longestSide: Int = 1080, thumbnailSide: Int = 200, quality: Int = 85) {
        self.maxPixels = maxPixels
        self.longestSide = longestSide
        self.thumbnailSide = thumbnailSide
        self.quality = quality
    }
}
