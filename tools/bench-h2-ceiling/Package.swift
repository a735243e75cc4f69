// swift-tools-version:6.0
// The ceiling of Kakapo's HTTP/2 stack on this machine: a bare SwiftNIO server speaking h2c with prior
// knowledge that answers every request with the same canned bytes, each stream served through NIOHTTP2's
// HTTP2FramePayloadToHTTP1ServerCodec with the connection settings Kakapo's HTTP2Server uses, and nothing
// else. tools/bench-h2 --ceiling runs it next to Kakapo and nginx: the gap between it and Kakapo is what
// Kakapo's own pipeline costs over HTTP/2, the gap between it and nginx what SwiftNIO's HTTP/2 costs.
import PackageDescription

let package = Package(
    name: "nio-h2-ceiling",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        .executableTarget(
            name: "nio-h2-ceiling",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ])
    ]
)
