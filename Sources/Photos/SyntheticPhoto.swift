import CVips
import Foundation

/// Pictures made with libvips itself, for benchmarks and tests: a colour gradient with grain
/// (`sm_vips_synthetic`), encoded in any format the server takes, or as GIF.
public enum SyntheticPhoto {
    public enum Encoding: Sendable {
        case jpeg(quality: Int = 90)
        case png
        case webp(quality: Int = 80)
        case heif(quality: Int = 50)
        case gif
    }

    /// A `width` × `height` picture in `encoding`; `pages` > 1 makes an animation (GIF) or a
    /// multi-image file (HEIF) of that many frames (WebP keeps only the first: tests build
    /// animated WebP by hand); `alpha` adds transparency.
    public static func make(width: Int, height: Int, _ encoding: Encoding, pages: Int = 1, alpha: Bool = false) throws -> Data {
        try Vips.start()
        var image: UnsafeMutablePointer<VipsImage>?
        guard sm_vips_synthetic(Int32(width), Int32(height), alpha ? 1 : 0, &image) == 0, let image else {
            throw SyntheticError(message: lastError())
        }
        defer { g_object_unref(image) }
        let (format, quality): (ImageFormat?, Int) =
            switch encoding {
            case .jpeg(let quality): (.jpeg, quality)
            case .png: (.png, 0)
            case .webp(let quality): (.webp, quality)
            case .heif(let quality): (.heif, quality)
            case .gif: (nil, 0)
            }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard sm_vips_encode(image, format?.vipsCode ?? 0, Int32(quality), Int32(pages), &buffer, &length) == 0, let buffer else {
            throw SyntheticError(message: lastError())
        }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// The width and height of `jpeg`, a JPEG, read from its header (tests check what is served).
    public static func jpegSize(_ jpeg: Data) -> (width: Int, height: Int)? {
        jpeg.withUnsafeBytes { bytes -> (Int, Int)? in
            var image: UnsafeMutablePointer<VipsImage>?
            guard sm_vips_header(Int32(SM_VIPS_JPEG), bytes.baseAddress, bytes.count, &image) == 0, let image else {
                vips_error_clear()
                return nil
            }
            defer { g_object_unref(image) }
            return (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        }
    }

    public struct SyntheticError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "libvips: \(message)" }
    }

    private static func lastError() -> String {
        defer { vips_error_clear() }
        return vips_error_buffer().map { String(cString: $0) } ?? "unknown error"
    }
}
