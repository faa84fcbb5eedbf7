import Foundation

/// Where and as whom pushes go to Apple (`SNIFFMEET_APNS_*`). Without a key file, no push is sent.
public struct APNsSettings: Sendable {
    /// The `.p8` key Apple gives (PKCS#8 PEM of a P-256 key), read at start.
    public var keyPEM: String
    /// Its 10-character id (`kid` of the provider token).
    public var keyID: String
    /// The developer team (`iss` of the provider token).
    public var teamID: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// `https://api.push.apple.com` (production), `https://api.sandbox.push.apple.com`, or a double's.
    public var baseURL: String
    /// A PEM file of extra roots to trust (a test double's certificate); nil trusts the system's.
    public var caFile: String?
    /// How long a push is retried before it is given up.
    public var horizon: TimeInterval = 3600
    /// How long a claim on a row holds before another process may send it.
    public var lease: TimeInterval = 30
    /// Pushes claimed at once by each of a process's delivery loops (`PushDelivery.loops`).
    public var concurrency = 200

    public init(keyPEM: String, keyID: String, teamID: String, topic: String, baseURL: String, caFile: String? = nil) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.baseURL = baseURL
        self.caFile = caFile
    }

    /// Why the settings cannot be used.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// The settings in `environment`, nil when `SNIFFMEET_APNS_KEY_FILE` is unset (no pushes).
    /// `_KEY_ID`, `_TEAM_ID` and `_TOPIC` are then required; `_ENVIRONMENT` is `production`
    /// (default) or `sandbox`; `_URL` overrides the host and `_CA_FILE` adds a trusted root;
    /// `SNIFFMEET_PUSH_LEASE_SECONDS` and `SNIFFMEET_PUSH_HORIZON_SECONDS` tune retries,
    /// `SNIFFMEET_PUSH_CONCURRENCY` the batch each delivery loop claims.
    public static func from(environment: [String: String]) throws -> APNsSettings? {
        guard let keyFile = environment["SNIFFMEET_APNS_KEY_FILE"], !keyFile.isEmpty else { return nil }
        func required(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw Invalid(description: "\(name) is required with SNIFFMEET_APNS_KEY_FILE")
            }
            return value
        }
        let base: String
        switch environment["SNIFFMEET_APNS_ENVIRONMENT"] ?? "production" {
        case "production": base = "https://api.push.apple.com"
        case "sandbox": base = "https://api.sandbox.push.apple.com"
        case let other: throw Invalid(description: "SNIFFMEET_APNS_ENVIRONMENT must be production or sandbox, not \(other)")
        }
        let pem: String
        do { pem = try String(contentsOfFile: keyFile, encoding: .utf8) } catch {
            throw Invalid(description: "cannot read SNIFFMEET_APNS_KEY_FILE \(keyFile): \(error)")
        }
        var settings = APNsSettings(
            keyPEM: pem,
            keyID: try required("SNIFFMEET_APNS_KEY_ID"),
            teamID: try required("SNIFFMEET_APNS_TEAM_ID"),
            topic: try required("SNIFFMEET_APNS_TOPIC"),
            baseURL: environment["SNIFFMEET_APNS_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? base,
            caFile: environment["SNIFFMEET_APNS_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        )
        if let text = environment["SNIFFMEET_PUSH_LEASE_SECONDS"] {
            guard let value = TimeInterval(text), value > 0 else { throw Invalid(description: "SNIFFMEET_PUSH_LEASE_SECONDS must be > 0") }
            settings.lease = value
        }
        if let text = environment["SNIFFMEET_PUSH_HORIZON_SECONDS"] {
            guard let value = TimeInterval(text), value > 0 else {
                throw Invalid(description: "SNIFFMEET_PUSH_HORIZON_SECONDS must be > 0")
            }
            settings.horizon = value
        }
        if let text = environment["SNIFFMEET_PUSH_CONCURRENCY"] {
            guard let value = Int(text), (1...5000).contains(value) else {
                throw Invalid(description: "SNIFFMEET_PUSH_CONCURRENCY must be 1...5000")
            }
            settings.concurrency = value
        }
        _ = try ProviderToken(settings: settings)  // a key that cannot sign is refused at start
        return settings
    }
}
