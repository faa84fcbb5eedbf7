import CVips
import Foundation

/// The image formats a client may upload, known by their `Content-Type` and by their bytes'
/// signature. Only these formats' libvips loaders ever see client bytes (`Vips.start`).
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    case webp
    case heif

    /// The format a request's `Content-Type` names (`image/jpeg`, `image/png`, `image/webp`,
    /// `image/heic` or `image/heif`; parameters and case ignored), or nil for anything else.
    public init?(contentType: String) {
        let type = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        switch type {
        case "image/jpeg": self = .jpeg
        case "image/png": self = .png
        case "image/webp": self = .webp
        case "image/heic", "image/heif": self = .heif
        default: return nil
        }
    }

    /// The format whose signature (magic number) `bytes` start with, or nil.
    ///
    /// JPEG: `FF D8 FF`. PNG: its 8-byte signature. WebP: `RIFF`, a size, `WEBP`. HEIF: an ISO
    /// base media `ftyp` box whose major brand is a HEIF image brand (HEVC- or AV1-coded).
    public static func sniff(_ bytes: some Collection<UInt8>) -> ImageFormat? {
        let head = Array(bytes.prefix(16))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("ftyp".utf8), at: 4), head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if heifBrands.contains(brand) { return .heif }
        }
        return nil
    }

    /// Major brands of HEIF still images (ISO/IEC 23008-12 and the AVIF specification).
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "mif1", "avif"]

    /// The format as the C shim numbers it.
    var vipsCode: Int32 {
        switch self {
        case .jpeg: Int32(SM_VIPS_JPEG)
        case .png: Int32(SM_VIPS_PNG)
        case .webp: Int32(SM_VIPS_WEBP)
        case .heif: Int32(SM_VIPS_HEIF)
        }
    }

    /// True when `bytes`, a PNG, is an animated one (APNG): it has an `acTL` chunk before its
    /// first `IDAT`. libvips' PNG loader shows only the first frame of those and says nothing.
    static func isAnimatedPNG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length =
                Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = (bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7])
            if type == (0x61, 0x63, 0x54, 0x4C) { return true }  // acTL
            if type == (0x49, 0x44, 0x41, 0x54) { return false }  // IDAT
            offset += 12 + length
        }
        return false
    }
}
