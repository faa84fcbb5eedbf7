import CVips
import Foundation

/// The libvips work of an upload, synchronous: call it from a thread of its own
/// (`PhotoProcessor` does), never from one of Swift's cooperative threads.
///
/// Memory: every `VipsImage` is released on every path, every buffer libvips allocates is freed
/// after copying; libvips' operation cache is off (`sm_vips_start`), so nothing outlives a call.
public enum Vips {
    /// Starts libvips once per process (`sm_vips_start`: no cache, untrusted operations and
    /// every loader but JPEG, PNG, WebP and HEIF blocked).
    public static func start() throws(PhotoError) {
        if !started { throw .invalid("libvips could not start") }
    }

    private static let started: Bool = {
        // glibc raises its mmap threshold to the largest block freed so far (up to 32 MiB), so
        // after the first decode, the tens of megabytes of each later one come from the heaps
        // of libvips' many threads and stay there: the server idled at 444 MiB after
        // `bench photos` and peaked at 857 MiB during 8 concurrent HEIC uploads. A fixed
        // threshold keeps big blocks in mmap, returned when freed (`Vips.process` also trims).
        sm_malloc_fixed_mmap_threshold(256 * 1024)
        return sm_vips_start() == 0
    }()

    /// `data`, which must be a `format` image, turned into the photo's two JPEG copies.
    ///
    /// Order: signature; header only (width × height against `limits.maxPixels`, one page only)
    /// before any pixel is decoded; then decode with shrink-on-load, orientation applied,
    /// resized, copied to memory once (about 3.5 MB at 1080 px), and both copies encoded
    /// from it with every metadata block stripped.
    public static func process(
        _ data: Data,
        as format: ImageFormat,
        limits: PhotoLimits = PhotoLimits()
    ) throws(PhotoError)
        -> ProcessedPhoto
    {
        try start()
        // What this job freed goes back to the system now, not at some later allocation.
        defer { sm_malloc_trim() }
        guard ImageFormat.sniff(data) != nil else { throw .invalid("The body is not a JPEG, PNG, WebP or HEIF image.") }
        guard ImageFormat.sniff(data) == format else { throw .unsupported("The body is not the image type its Content-Type names.") }
        let result = data.withUnsafeBytes { bytes in
            Result(catching: { () throws(PhotoError) -> ProcessedPhoto in try process(bytes, format, limits) })
        }
        return try result.get()
    }

    private static func process(
        _ bytes: UnsafeRawBufferPointer,
        _ format: ImageFormat,
        _ limits: PhotoLimits
    ) throws(PhotoError)
        -> ProcessedPhoto
    {
        if format == .png, ImageFormat.isAnimatedPNG(bytes) { throw .unsupported("Animated images are not supported.") }
        let header = try image("The image cannot be read.") { sm_vips_header(format.vipsCode, bytes.baseAddress, bytes.count, &$0) }
        defer { g_object_unref(header) }
        let width = Int(vips_image_get_width(header))
        let height = Int(vips_image_get_height(header))
        guard width > 0, height > 0, width <= limits.maxPixels / height else {
            throw .invalid("The image has more than \(limits.maxPixels / 1_000_000) megapixels.")
        }
        guard vips_image_get_n_pages(header) <= 1 else { throw .unsupported("Animated and multi-page images are not supported.") }

        let fitted = try image("The image cannot be decoded.") {
            sm_vips_fit(bytes.baseAddress, bytes.count, Int32(limits.longestSide), &$0)
        }
        defer { g_object_unref(fitted) }
        let ready = try image("The image cannot be converted.") { sm_vips_jpeg_ready(fitted, &$0) }
        defer { g_object_unref(ready) }
        // Decoding happens here: a truncated or corrupt file fails now.
        guard let memory = vips_image_copy_memory(ready) else { throw failure("The image data is truncated or corrupt.") }
        defer { g_object_unref(memory) }
        let full = try jpeg(memory, quality: limits.quality)
        let square = try image("The thumbnail cannot be made.") { sm_vips_square(memory, Int32(limits.thumbnailSide), &$0) }
        defer { g_object_unref(square) }
        let thumbnail = try jpeg(square, quality: limits.quality)
        return ProcessedPhoto(
            full: full,
            thumbnail: thumbnail,
            width: Int(vips_image_get_width(memory)),
            height: Int(vips_image_get_height(memory))
        )
    }

    /// Runs a shim call that makes an image; on failure, an `invalid` error.
    private static func image(
        _ message: String,
        _ call: (inout UnsafeMutablePointer<VipsImage>?) -> Int32
    ) throws(PhotoError) -> UnsafeMutablePointer<VipsImage> {
        var out: UnsafeMutablePointer<VipsImage>?
        guard call(&out) == 0, let out else { throw failure(message) }
        return out
    }

    /// `image` as a metadata-free JPEG, copied out of libvips' buffer (which is freed).
    static func jpeg(_ image: UnsafeMutablePointer<VipsImage>, quality: Int) throws(PhotoError) -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard sm_vips_jpeg(image, Int32(quality), &buffer, &length) == 0, let buffer else {
            throw failure("The image cannot be encoded.")
        }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// The client's error for a failed libvips call. libvips' own message goes nowhere: its
    /// error buffer is shared by all threads and may quote the client's bytes; it is emptied.
    private static func failure(_ message: String) -> PhotoError {
        vips_error_clear()
        return .invalid(message)
    }
}
