@preconcurrency import Crypto
import Foundation

/// Device tokens at rest (`sessions.device_token_*`): sealed with AES-GCM under a key derived
/// from the master key, bound to their HMAC, by which a token is found (so that a token moving to
/// another session is one statement). The gateway seals them; the push service opens them.
public struct DeviceTokenSeal: Sendable {
    private let lookup: SymmetricKey
    private let sealing: SymmetricKey

    public init(secret: SymmetricKey) {
        self.lookup = ServerSecret.derive(secret, purpose: "device token lookup")
        self.sealing = ServerSecret.derive(secret, purpose: "device token")
    }

    /// The token's HMAC (its lookup key) and its sealed bytes.
    public func seal(_ token: String) throws -> (mac: Data, sealed: Data) {
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: lookup))
        let sealed = try AES.GCM.seal(Data(token.utf8), using: sealing, nonce: .fresh(), authenticating: mac).combined!
        return (mac, sealed)
    }

    /// The token in the clear; throws when the bytes were not sealed under this key for `mac`.
    public func open(mac: Data, sealed: Data) throws -> String {
        String(decoding: try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: sealing, authenticating: mac), as: UTF8.self)
    }
}
