// swift-tools-version:6.1
// The measurement behind "Why Kakapo has its own HTTP types" (docs/architecture.md, issue 29): how many real
// header fields survive a round trip through swift-http-types' HTTPFields byte for byte, and what each
// representation costs per request head, next to Kakapo's HTTP.Headers. tools/http-types-check.sh runs it.
// swift-http-types stays out of the main Package.swift: only this check depends on it.
import PackageDescription

let package = Package(
    name: "http-types-check",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Kakapo itself, without the TLS, PostgreSQL and OpenAPI packages. Only its smallest product that
        // holds KakapoHTTP is built (KakapoClient), so the check does not depend on the proxy's modules.
        .package(path: "../..", traits: []),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // NIOHTTPTypesHTTP1: the NIOHTTP1 <-> HTTPTypes conversion that Hummingbird 2 runs on every request.
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
    ],
    targets: [
        .executableTarget(
            name: "http-types-check",
            dependencies: [
                .product(name: "KakapoClient", package: "main"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ])
    ]
)
