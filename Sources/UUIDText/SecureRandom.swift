import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Bytes from the kernel's secure generator, one `getrandom(2)` per value: Swift's
/// `SystemRandomNumberGenerator` makes one call per 8 bytes (two per UUID, four per token),
/// 1.5–2 % of a chat send's server CPU in `perf record`.
public enum SecureRandom {
    /// Fills `buffer` with secure random bytes (`arc4random_buf`: in glibc 2.36 one `getrandom`
    /// call, never failing short).
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        arc4random_buf(base, buffer.count)
    }

    /// `count` secure random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}

extension UUID {
    /// A random (version 4) UUID from the kernel's generator in one call. Foundation's `UUID()`
    /// opens and reads /dev/urandom on every call on Linux: 3 % of the server's CPU per SendWalk
    /// in `perf record`, for the three ids a command mints.
    public static func random() -> UUID {
        var uuid = randomBits().uuid
        uuid.6 = (uuid.6 & 0x0F) | 0x40
        uuid.8 = (uuid.8 & 0x3F) | 0x80
        return UUID(uuid: uuid)
    }

    /// 128 random bits, no version or variant bits: for ids whose holder may fetch what they name.
    public static func randomBits() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { SecureRandom.fill($0) }
        return UUID(uuid: uuid)
    }
}
