// swift-tools-version:6.0
// The ceiling of Kakapo's server stack on this machine: a bare SwiftNIO HTTP/1.1 server that answers
// every request with the same canned bytes (what Kakapo's replay of one recording sends), with the same
// NIO pipeline Kakapo uses and nothing else. tools/bench-nio-ceiling runs it in the peers harness's S1.
// And the ceiling of forwarding on the same stack: nio-forwarder, a bare forwarder whose upstream
// connections live on the client's event loop (tools/bench-forwarder runs it in S3).
import PackageDescription

let nio: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
]

let package = Package(
    name: "nio-ceiling",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2")],
    targets: [
        .target(name: "BenchServer", dependencies: nio),
        .executableTarget(name: "nio-ceiling", dependencies: nio + ["BenchServer"]),
        .executableTarget(name: "nio-forwarder", dependencies: nio + ["BenchServer"]),
    ]
)
