// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "sniffmeet",
    // iOS: the app adds the SniffMeetClient product (the server's targets are not built there).
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        .executable(name: "sniffmeet", targets: ["sniffmeet"]),
        // Static: `swift build --product` builds only an explicitly typed library; an app links it the same.
        .library(name: "SniffMeetClient", type: .static, targets: ["SniffMeetClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Already in the graph through Hummingbird; named so the gateway can use HTTPField.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // Outgoing HTTP/2 to Apple's push service.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Already in the graph through async-http-client; named for the APNs double (an HTTP/2
        // server over TLS that the tests and `bench push` run).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        // The app's client: code that swift-openapi-generator made from openapi.json, its runtime
        // and transports (scripts/generate-client builds the generator itself, outside this package).
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        // The operator console's server-rendered pages.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // libpq, reached through pkg-config; Debian's libpq-dev provides it.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // libvips, reached through pkg-config; Debian's libvips-dev provides it.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // Uploaded photos: checked, decoded, cleaned and re-encoded with libvips on threads of their own.
        .target(name: "Photos", dependencies: ["CVips"]),
        // Civil-date arithmetic shared by Domain and Postgres, which must not depend on each other.
        .target(name: "CivilTime"),
        // The lowercase text of a UUID, shared by Domain and Postgres for the same reason.
        .target(name: "UUIDText"),
        // JSON text written straight into bytes: the API's answers, the push payload, logfmt values.
        .target(name: "JSONText", dependencies: ["Domain", "UUIDText"]),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ", "CivilTime", "UUIDText",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "EventLog",
            dependencies: [
                "Postgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Walk routes: cleaning, ellipsoidal distance, figures, simplification, polylines, privacy
        // cuts, GPX; pure, no dependencies.
        .target(name: "WalkRoutes"),
        .testTarget(name: "WalkRoutesTests", dependencies: ["WalkRoutes"]),
        // The rules of the app: plain values and functions, no I/O.
        .target(name: "Domain", dependencies: ["CivilTime", "UUIDText"]),
        // The log's edge for personal data: per-user data keys, sealing and opening events,
        // crypto-shredding, keyed nickname stream names.
        .target(
            name: "PersonalData",
            dependencies: [
                "Postgres", "EventLog", "Domain", "UUIDText",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Read models kept by checkpointed projectors; rebuild, verify and replay.
        .target(
            name: "Projections",
            dependencies: [
                "Postgres", "EventLog", "Domain", "PersonalData", "JSONText",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command handler: load streams, decide, append; drop tokens; walk expiry job.
        .target(
            name: "Commands",
            dependencies: [
                "Domain", "EventLog", "Postgres", "UUIDText", "PersonalData",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What only benchmarks (and the tests of their references) use: synthetic workloads,
        // bulk-loaded logs, the in-SQL rebuild, pgbench references, throughput loops.
        .target(
            name: "Benchmarks",
            dependencies: [
                "Postgres", "EventLog", "Domain", "Projections", "UUIDText", "PersonalData",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "sniffmeet",
            dependencies: [
                "Postgres", "EventLog", "Domain", "Commands", "Projections", "Gateway", "Benchmarks", "PersonalData", "Photos",
                "Push", "APNsDouble", "WalkRoutes",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // jemalloc in place of glibc's malloc: a sixteenth less server CPU per walk sent
            // (docs/benchmarks.md, "The allocator"); Debian's libjemalloc-dev, as scripts/setup installs.
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        .testTarget(name: "DomainTests", dependencies: ["Domain", "UUIDText"]),
        // Private PostgreSQL clusters and fresh databases for the tests.
        .target(
            name: "PostgresTesting",
            dependencies: ["Postgres", "EventLog", "PersonalData", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "EventLogTests", dependencies: ["Postgres", "EventLog", "PostgresTesting"]),
        .testTarget(
            name: "CommandsTests",
            dependencies: ["Commands", "Domain", "EventLog", "Postgres", "PostgresTesting", "Projections", "PersonalData", "UUIDText"]
        ),
        .testTarget(
            name: "ProjectionsTests",
            dependencies: ["Postgres", "EventLog", "Domain", "Commands", "Projections", "PostgresTesting", "Benchmarks", "PersonalData"]
        ),
        // Push notifications: the outbox's delivery service, APNs over HTTP/2 with ES256 provider tokens.
        .target(
            name: "Push",
            dependencies: [
                "Postgres", "Projections", "PersonalData", "UUIDText", "Domain", "JSONText",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A local stand-in for Apple's push service: HTTP/2 over TLS, checking the provider token's
        // ES256 signature and every header, answering as scripted (tests, `bench push`).
        .target(
            name: "APNsDouble",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The HTTP gateway (Hummingbird 2): routes of API.md, auth, idempotency, read-your-writes.
        .target(
            name: "Gateway",
            dependencies: [
                "Postgres", "EventLog", "Domain", "Commands", "Projections", "UUIDText", "PersonalData", "Photos", "Push", "JSONText",
                "WalkRoutes",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                // scrypt for operators' passwords (BoringSSL's, already built for Crypto).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("openapi.json"), .copy("Console/Templates"), .copy("Console/Static")]
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "Commands", "Projections", "Postgres", "EventLog", "Domain", "PostgresTesting", "PersonalData", "Photos",
                "Push", "APNsDouble", "WalkRoutes",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The app's client (iOS 15+, macOS, Linux): generated types and client plus middlewares.
        // Only OpenAPIRuntime (with its HTTPTypes) and OpenAPIURLSession: nothing Linux-only, no
        // system library.
        .target(
            name: "SniffMeetClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                // The generated code's HTTP types (pure Swift, as the runtime itself uses them).
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The whole story through the generated client, over AsyncHTTPClient, against a live server.
        .testTarget(
            name: "ClientStoryTests",
            dependencies: [
                "SniffMeetClient", "Gateway", "Postgres", "PostgresTesting",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds of the server's own modules with whole cross-module optimization: generic code
// of one module (the caches' `GenerationalMap`, `JSONText`'s writers, the pool's queries) is
// specialized where another uses it instead of going through the runtime's generic metadata
// lookups (4.2 % of the server's samples under walk requests in `perf record`, 3.5 % with it).
// Measured with `POST /v1/walks` (docs/benchmarks.md, "Cross-module optimization"): about 4 %
// less server CPU per request. The app's client (`SniffMeetClient`) is left as it is: a package
// an app depends on may not carry unsafe flags in the targets it builds.
for target in package.targets where target.type == .regular || target.type == .executable {
    guard target.name != "SniffMeetClient" else { continue }
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))
        ]
}
