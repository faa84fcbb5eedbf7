import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Secure random bytes for ids, tokens, keys and nonces, drawn from the kernel's generator a
/// block at a time.
///
/// Swift's `SystemRandomNumberGenerator` (and swift-crypto's keys and nonces, which use it) makes
/// one `getrandom(2)` per 8 bytes: a chat send minted its id, its message key and two nonces in
/// nine system calls, 1.4 % of its server CPU in `perf record`, sign-ups 1.8 %. Here small
/// requests are served from a 4 KiB block read in one call; every byte handed out is zeroed in
/// the block at once, so the block never holds a value already given to someone (nothing in
/// memory tells past keys). The server never forks, so no two processes share a block.
public enum SecureRandom {
    /// Bytes read from the kernel at a time.
    static let blockSize = 4096
    /// Requests larger than this go to the kernel directly.
    static let largestBuffered = 256

    /// The block and how many of its bytes are handed out (and zeroed) already.
    private final class Block: @unchecked Sendable {
        // Only touched while `used` is locked.
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: SecureRandom.blockSize, alignment: 16)
        let used = Mutex(SecureRandom.blockSize)
    }

    private static let block = Block()

    /// Fills `buffer` with secure random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        guard buffer.count <= largestBuffered else { return kernelFill(base, buffer.count) }
        let bytes = block.bytes
        block.used.withLock { used in
            if used + buffer.count > bytes.count {
                kernelFill(bytes.baseAddress!, bytes.count)
                used = 0
            }
            let taken = UnsafeMutableRawBufferPointer(rebasing: bytes[used..<(used + buffer.count)])
            buffer.copyMemory(from: UnsafeRawBufferPointer(taken))
            taken.initializeMemory(as: UInt8.self, repeating: 0)
            used += buffer.count
        }
    }

    /// `arc4random_buf`: in glibc 2.36 `getrandom` calls, never failing short.
    private static func kernelFill(_ base: UnsafeMutableRawPointer, _ count: Int) {
        arc4random_buf(base, count)
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
    /// A random (version 4) UUID from `SecureRandom`. Foundation's `UUID()` opens and reads
    /// /dev/urandom on every call on Linux: 3 % of the server's CPU per SendWalk in
    /// `perf record`, for the three ids a command mints.
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
