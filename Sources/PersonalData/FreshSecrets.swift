import Crypto
import UUIDText

extension SymmetricKey {
    /// A new 256-bit key from `SecureRandom`: `SymmetricKey(size:)` makes four system calls.
    public static func fresh256() -> SymmetricKey {
        SymmetricKey(data: SecureRandom.bytes(32))
    }
}

extension AES.GCM.Nonce {
    /// A new random nonce from `SecureRandom`: the default one of `AES.GCM.seal` makes two
    /// system calls.
    public static func fresh() -> AES.GCM.Nonce {
        // 12 bytes is the size the initializer asks for; it cannot throw for it.
        try! AES.GCM.Nonce(data: SecureRandom.bytes(12))
    }
}
