// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Kakapo",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Kakapo", targets: ["Kakapo"]),
        .library(name: "KakapoTesting", targets: ["KakapoTesting"]),
        .library(name: "KakapoClient", targets: ["KakapoClient"]),
        .library(name: "KakapoJSONCompatibility", targets: ["KakapoJSONCompatibility"]),
        .library(name: "KakapoOpenAPI", targets: ["KakapoOpenAPI"]),
        .library(name: "KakapoPostgres", targets: ["KakapoPostgres"]),
        .executable(name: "kakapo", targets: ["kakapo"]),
        .executable(name: "kakapo-inprocess-bench", targets: ["kakapo-inprocess-bench"]),
    ],
    // The heavy dependencies (BoringSSL twice, through swift-crypto and swift-nio-ssl; PostgresNIO; OpenAPIKit)
    // serve the CLI alone. Every use of them is behind one of these traits, so a package that needs only
    // Kakapo or KakapoTesting can depend on this one with `traits: []` and SwiftPM neither fetches nor
    // builds them (docs/first-build.md). The defaults keep `swift run kakapo` full-featured.
    traits: [
        .trait(
            name: "TLS",
            description:
                "HTTPS interception and the TLS listener (KakapoTLS: swift-nio-ssl, swift-certificates, swift-crypto)."
        ),
        .trait(name: "Postgres", description: "The PostgreSQL-backed Store (KakapoPostgres: PostgresNIO)."),
        .trait(
            name: "HTTP2",
            description: "HTTP/2 on the listener and in decrypted tunnels (KakapoHTTP2: swift-nio-http2)."),
        .trait(
            name: "OpenAPI", description: "Checking cassettes against an OpenAPI document (KakapoOpenAPI: OpenAPIKit)."),
        .default(enabledTraits: ["TLS", "Postgres", "OpenAPI", "HTTP2"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // OpenAPIKit's default trait (ExternalLoading) loads remote $refs; cassette checks read one local file.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Signal handling for the command line (already in the graph through PostgresNIO).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(name: "KakapoHTTP"),
        .target(name: "KakapoJSON"),
        .target(name: "KakapoJSONCompatibility", dependencies: ["KakapoJSON"]),
        // The C allocator's free memory, given back after a load leaves (HeapReturner).
        .systemLibrary(name: "CHeap"),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // brotli and zstd, the other content codings browsers and HTTP clients ask for: decoded so that what
        // they carry is redacted, matched and shown (issue 42), and encoded again on replay.
        .systemLibrary(
            name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),
        // GraphQL operations read from requests, for cassette matching and routes conditions alike.
        .target(name: "KakapoGraphQL", dependencies: ["KakapoHTTP", "KakapoJSON"]),
        // Protocol Buffers read and written through a descriptor set (`--proto-descriptor`): the wire format,
        // descriptors, and the proto3 JSON mapping. Plain Swift, no dependencies.
        .target(name: "KakapoProtobuf", dependencies: ["KakapoHTTP", "KakapoJSON"]),
        // gRPC messages: length-prefixed framing, status and trailers, the miss answer, JSON messages.
        .target(name: "KakapoGRPC", dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoProtobuf"]),
        .target(
            name: "KakapoCassette",
            dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoGraphQL", "KakapoGRPC", "CZlib", "CBrotli", "CZstd"]),
        .target(name: "KakapoRouter", dependencies: ["KakapoHTTP", "KakapoJSON"]),
        .target(name: "KakapoStore", dependencies: ["KakapoHTTP", "KakapoJSON"]),
        .target(name: "KakapoStubs", dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoRouter", "KakapoGraphQL"]),
        .target(
            name: "KakapoRoutesFile",
            dependencies: ["KakapoJSON", "KakapoStubs", .product(name: "Yams", package: "Yams")]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(
            name: "KakapoVerify", dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoCassette", "KakapoUpstream"]),
        .target(
            name: "KakapoOpenAPI",
            dependencies: [
                "KakapoHTTP", "KakapoJSON", "KakapoCassette",
                .product(name: "OpenAPIKit", package: "OpenAPIKit", condition: .when(traits: ["OpenAPI"])),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit", condition: .when(traits: ["OpenAPI"])),
                .product(name: "OpenAPIKitCompat", package: "OpenAPIKit", condition: .when(traits: ["OpenAPI"])),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "KakapoPostgres",
            dependencies: [
                "KakapoJSON", "KakapoStore",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // TLS termination for the forward proxy and the TLS listener: BoringSSL through swift-nio-ssl and
        // swift-crypto, so only this module and the CLI pay for it.
        .target(
            name: "KakapoTLS",
            dependencies: [
                "KakapoProxy", "KakapoUpstream",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["TLS"])),
                .product(name: "X509", package: "swift-certificates", condition: .when(traits: ["TLS"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["TLS"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: .when(traits: ["TLS"])),
            ]
        ),
        // HTTP/2 on the wire (h2c with prior knowledge, h2 by ALPN): each stream is served by KakapoProxy's
        // HTTP handlers, so a package that uses only Kakapo or KakapoTesting builds no swift-nio-http2.
        .target(
            name: "KakapoHTTP2",
            dependencies: [
                "KakapoProxy", "KakapoEngine",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["HTTP2"])),
            ]
        ),
        .target(name: "KakapoHAR", dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoCassette"]),
        .target(name: "KakapoUpstream", dependencies: ["KakapoHTTP", "CCurl"]),
        // Streamed answers: a live upstream stream on its way with backpressure, recorded streams played at
        // their offsets and speed (`StreamTiming`), how a stream is recorded (events, lines, pieces).
        .target(name: "KakapoStreams", dependencies: ["KakapoHTTP", "KakapoCassette", "KakapoUpstream", "KakapoGRPC"]),
        // Record filters (`--record-only`, `--passthrough`): host and path patterns matched as upstreams read them.
        .target(name: "KakapoRecordFilter", dependencies: ["KakapoHTTP", "KakapoUpstream"]),
        // WebSocket conversations: RFC 6455 frames read from a recorded byte stream, permessage-deflate,
        // recording a conversation, matching and replaying its messages. No NIO (the wire's framing is
        // NIOWebSocket's, in KakapoProxy).
        .target(
            name: "KakapoWebSocket",
            dependencies: [
                "KakapoHTTP", "KakapoJSON", "KakapoCassette", "CZlib", .product(name: "Logging", package: "swift-log"),
            ]),
        // Store resources: REST collections over a Store (list, filter, sort, page, create, update, delete),
        // a shared store's calls bounded in time, seeding once.
        .target(
            name: "KakapoResources",
            dependencies: ["KakapoHTTP", "KakapoJSON", "KakapoRouter", "KakapoStore", "KakapoStubs"]),
        // The engine: configuration and modes, the pipeline's layers, journal, admin API, sessions. No NIO:
        // Kakapo in process runs it with no event loop.
        // The browser inspector's page (`/__kakapo/ui`): plain HTML, CSS and JavaScript modules in Web/, built
        // into the binary as byte arrays (no bundle to install beside it, no build step with npm).
        .target(name: "KakapoInspector", resources: [.embedInCode("Web")]),
        .target(
            name: "KakapoEngine",
            dependencies: [
                "KakapoHTTP", "KakapoJSON", "KakapoCassette", "KakapoUpstream", "KakapoRouter", "KakapoStore",
                "KakapoStubs", "KakapoResources", "KakapoWebSocket", "KakapoRecordFilter", "KakapoStreams",
                "KakapoInspector",
                "KakapoGRPC",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The wire: the SwiftNIO HTTP/1.1 server, the forward proxy, tunnels, WebSocket framing (NIOWebSocket,
        // part of swift-nio); it hands requests to the engine.
        .target(
            name: "KakapoProxy",
            dependencies: [
                "KakapoHTTP", "KakapoJSON", "KakapoCassette", "KakapoUpstream", "KakapoRouter", "KakapoStubs",
                "KakapoEngine", "KakapoGRPC", "CHeap",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KakapoURLSession",
            dependencies: [
                "KakapoHTTP", "KakapoCassette", "KakapoUpstream", "KakapoRouter", "KakapoEngine",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KakapoClient",
            dependencies: ["KakapoHTTP", "KakapoJSON", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "KakapoTesting", dependencies: ["KakapoEngine", "KakapoProxy", "KakapoUpstream", "KakapoURLSession"]),
        .target(
            name: "Kakapo",
            dependencies: [
                "KakapoHTTP", "KakapoJSON", "KakapoCassette", "KakapoUpstream", "KakapoRouter", "KakapoStore",
                "KakapoStubs", "KakapoRoutesFile", "KakapoEngine", "KakapoProxy", "KakapoURLSession", "KakapoClient",
                "KakapoHAR", "KakapoVerify", "KakapoResources", "KakapoRecordFilter", "KakapoStreams",
            ]
        ),
        .executableTarget(
            name: "kakapo",
            dependencies: [
                "Kakapo", "KakapoOpenAPI", "KakapoPostgres", "KakapoTLS", "KakapoHTTP2",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "kakapo-example", dependencies: ["Kakapo"], path: "Examples/KakapoExample"),
        .executableTarget(name: "kakapo-typed-client", dependencies: ["Kakapo"], path: "Examples/TypedClient"),
        .executableTarget(name: "kakapo-inprocess-bench", dependencies: ["Kakapo"], path: "tools/InProcessBench"),
        .target(name: "DemoClient", path: "Examples/InProcessTesting/Sources/DemoClient"),
        .testTarget(
            name: "DemoClientTests", dependencies: ["DemoClient", "KakapoTesting"],
            path: "Examples/InProcessTesting/Tests/DemoClientTests"),
        .target(name: "CTestSpawn", path: "Tests/CTestSpawn"),
        .target(
            name: "KakapoTestSupport",
            dependencies: [
                "CTestSpawn",
                "KakapoHTTP", "KakapoUpstream",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Tests/KakapoTestSupport"
        ),
        .testTarget(name: "KakapoJSONTests", dependencies: ["KakapoJSON"]),
        .testTarget(name: "KakapoGraphQLTests", dependencies: ["KakapoGraphQL"]),
        .testTarget(name: "KakapoCassetteTests", dependencies: ["KakapoCassette", "KakapoTestSupport"]),
        .testTarget(name: "KakapoRouterTests", dependencies: ["KakapoRouter", "KakapoTestSupport"]),
        .testTarget(name: "KakapoStoreTests", dependencies: ["KakapoStore"]),
        .testTarget(
            name: "KakapoWebSocketTests",
            dependencies: [
                "KakapoWebSocket", "KakapoCassette", "KakapoHTTP", "KakapoTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "KakapoHTTPTests", dependencies: ["KakapoHTTP"]),
        .testTarget(
            name: "KakapoVerifyTests", dependencies: ["KakapoVerify", "KakapoCassette", "KakapoHTTP", "KakapoJSON"]),
        .testTarget(name: "KakapoStubsTests", dependencies: ["KakapoStubs"]),
        .testTarget(name: "KakapoUpstreamTests", dependencies: ["KakapoUpstream"]),
        .testTarget(
            name: "KakapoStreamsTests",
            dependencies: ["KakapoStreams", "KakapoCassette", "KakapoHTTP", "KakapoUpstream"]),
        .testTarget(
            name: "KakapoRecordFilterTests", dependencies: ["KakapoRecordFilter", "KakapoHTTP", "KakapoUpstream"]),
        .testTarget(
            name: "KakapoResourcesTests",
            dependencies: ["KakapoResources", "KakapoHTTP", "KakapoJSON", "KakapoStore", "KakapoStubs"]),
        .testTarget(
            name: "KakapoURLSessionTests",
            dependencies: ["Kakapo", "KakapoTesting", "KakapoTestSupport", "kakapo-inprocess-thread-probe"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "KakapoClientTests",
            dependencies: [
                "KakapoClient", "Kakapo", "KakapoTestSupport", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "KakapoHARTests", dependencies: ["Kakapo", "KakapoTestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "KakapoOpenAPITests", dependencies: ["KakapoOpenAPI", "KakapoTestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "KakapoPostgresTests",
            dependencies: [
                "Kakapo", "KakapoPostgres", "KakapoTestSupport", "kakapo",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(
            name: "KakapoProtobufTests", dependencies: ["KakapoProtobuf", "KakapoJSON"], exclude: ["Fixtures"]),
        .testTarget(
            name: "KakapoGRPCTests",
            dependencies: ["KakapoGRPC", "Kakapo", "KakapoTestSupport", "kakapo"], exclude: ["Fixtures"]),
        .testTarget(
            name: "KakapoHTTP2Tests",
            dependencies: [
                "Kakapo", "KakapoHTTP2", "KakapoTestSupport", "kakapo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]),
        .testTarget(name: "KakapoRoutesFileTests", dependencies: ["KakapoRoutesFile", "KakapoTestSupport"]),
        .testTarget(name: "KakapoProxyTests", dependencies: ["Kakapo", "KakapoTestSupport"]),
        .executableTarget(name: "kakapo-urlsession-probe", path: "Tests/URLSessionProbe"),
        .executableTarget(
            name: "kakapo-inprocess-thread-probe", dependencies: ["KakapoURLSession"],
            path: "Tests/InProcessThreadProbe"),
        .testTarget(
            name: "KakapoTLSTests",
            dependencies: [
                "Kakapo", "KakapoTLS", "KakapoTestSupport", "kakapo", "kakapo-urlsession-probe",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The entry points the fuzzers drive (tools/fuzz); the tests replay each corpus through them.
        .target(
            name: "KakapoFuzz",
            dependencies: [
                "KakapoCassette", "KakapoHAR", "KakapoRoutesFile", "KakapoEngine", "KakapoProxy", "KakapoTestSupport",
                "KakapoHTTP2", "KakapoGRPC", "KakapoGraphQL", "KakapoUpstream",
            ],
            path: "tools/fuzz/KakapoFuzz"),
        .testTarget(name: "KakapoFuzzTests", dependencies: ["KakapoFuzz"]),
        .testTarget(
            name: "KakapoCLITests",
            dependencies: ["kakapo", "kakapo-example", "kakapo-typed-client", "Kakapo", "KakapoTestSupport"]),
    ]
)

// libFuzzer's driver, built only by tools/fuzz/run (KAKAPO_FUZZ=1 with -sanitize=fuzzer): it has no main
// of its own, so an ordinary build could not link it.
if Context.environment["KAKAPO_FUZZ"] != nil {
    package.targets.append(
        .executableTarget(name: "kakapo-fuzz", dependencies: ["KakapoFuzz"], path: "tools/fuzz/Driver"))
}
