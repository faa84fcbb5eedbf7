import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The server's master secret (256 bits): what keeps stored answers unreadable without the
/// server, and what every key of the gateway is derived from (one derived key per purpose, so
/// no key serves two uses).
///
/// Read from `SNIFFMEET_MASTER_KEY` (base64) or the file named by `SNIFFMEET_MASTER_KEY_FILE`;
/// the embedded setup keeps one in its data folder, made on first use (mode 0600). Every process
/// serving one database must use the same secret.
public enum ServerSecret {
    public enum Failure: Error, CustomStringConvertible {
        case malformed(source: String)
        case unreadable(path: String, reason: String)
        case missing

        public var description: String {
            switch self {
            case .malformed(let source):
                "\(source) must hold 32 random bytes, base64-encoded (make one with: openssl rand -base64 32)"
            case .unreadable(let path, let reason):
                "cannot read or create the master key file \(path): \(reason)"
            case .missing:
                "a master key is required with DATABASE_URL: set SNIFFMEET_MASTER_KEY (openssl rand -base64 32) or SNIFFMEET_MASTER_KEY_FILE"
            }
        }
    }

    /// The key `purpose` uses, derived from `secret` (HKDF-SHA256).
    public static func derive(_ secret: SymmetricKey, purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: secret,
            salt: Data("sniffmeet".utf8),
            info: Data("sniffmeet \(purpose)".utf8),
            outputByteCount: 32
        )
    }

    /// The configured secret: the environment first, else `defaultFile` (created when absent),
    /// else `Failure.missing`.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        defaultFile: String?
    ) throws -> SymmetricKey {
        if let text = environment["SNIFFMEET_MASTER_KEY"], !text.isEmpty {
            return try parse(text, source: "SNIFFMEET_MASTER_KEY")
        }
        if let path = environment["SNIFFMEET_MASTER_KEY_FILE"], !path.isEmpty {
            return try read(path)
        }
        guard let defaultFile else { throw Failure.missing }
        if !FileManager.default.fileExists(atPath: defaultFile) { try create(defaultFile) }
        return try read(defaultFile)
    }

    static func parse(_ text: String, source: String) throws -> SymmetricKey {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            throw Failure.malformed(source: source)
        }
        return SymmetricKey(data: data)
    }

    static func read(_ path: String) throws -> SymmetricKey {
        do {
            return try parse(try String(contentsOfFile: path, encoding: .utf8), source: path)
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure.unreadable(path: path, reason: "\(error)")
        }
    }

    /// Writes a fresh secret readable by this user only; O_EXCL so two starting processes cannot
    /// both write one (the loser reads the winner's).
    static func create(_ path: String) throws {
        let text = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return }
            throw Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let written = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        guard written == text.utf8.count, fsync(descriptor) == 0 else {
            throw Failure.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
