// swift-tools-version:6.0
// A micro-benchmark of RawTargetEscaper, the byte-level handler in front of NIO's HTTP parser on every
// connection: tools/bench-escaper copies the handler's source (from the work tree or a given commit) into
// this package and times it on an EmbeddedChannel, alone, so that its own per-byte cost is what is seen.
import PackageDescription

let package = Package(
    name: "bench-escaper",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2")],
    targets: [
        .executableTarget(
            name: "bench-escaper",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ])
    ]
)
