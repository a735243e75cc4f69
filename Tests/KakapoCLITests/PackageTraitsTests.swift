import Foundation
import KakapoTestSupport
import Testing

/// The manifest as SwiftPM reads it (`swift package dump-package`): the packages that compile BoringSSL,
/// PostgreSQL, OpenAPI or HTTP/2 code are reached only through a package trait, so a package that depends on Kakapo
/// with `traits: []` neither fetches nor builds them (SwiftPM prunes a dependency no enabled trait uses;
/// test targets do not count), while the default traits keep `swift run kakapo` whole. docs/first-build.md
/// has the measurements.
@Suite("Package: heavy dependencies behind traits")
struct PackageTraitsTests {
    /// Packages a user of `Kakapo` or `KakapoTesting` must not need, and the trait each one serves.
    static let heavyPackages: [String: String] = [
        "swift-nio-ssl": "TLS", "swift-certificates": "TLS", "swift-crypto": "TLS", "swift-asn1": "TLS",
        "postgres-nio": "Postgres", "openapikit": "OpenAPI", "swift-nio-http2": "HTTP2",
    ]

    static func dumpPackage() async throws -> [String: Any] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kakapo-dump-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        // A scratch path of its own: the running `swift test` holds the package's .build lock.
        let process = try KakapoProcess(
            ["swift", "package", "--package-path", CLITests.packageRoot, "--scratch-path", scratch, "dump-package"],
            executable: "/usr/bin/env")
        let status = try await process.waitForExit(timeout: .seconds(300))
        #expect(status == 0, "swift package dump-package: \(process.standardError)")
        let json = try JSONSerialization.jsonObject(with: Data(process.standardOutput.utf8))
        return try #require(json as? [String: Any], "dump-package printed no JSON object")
    }

    @Test(
        "every use of swift-nio-ssl, swift-certificates, swift-crypto, PostgresNIO, OpenAPIKit and swift-nio-http2 is behind a trait"
    )
    func heavyDependenciesAreConditional() async throws {
        let manifest = try await Self.dumpPackage()
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        var uses = 0
        for target in targets where target["type"] as? String != "test" {
            let name = target["name"] as? String ?? "?"
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                guard let product = dependency["product"] as? [Any], product.count >= 4,
                    let package = product[1] as? String,
                    let trait = Self.heavyPackages[package.lowercased()]
                else { continue }
                uses += 1
                let condition = product[3] as? [String: Any]
                let traits = condition?["traits"] as? [String] ?? []
                #expect(
                    traits == [trait],
                    "target \(name) uses product \(product[0]) of \(package) without `condition: .when(traits: [\"\(trait)\"])`"
                )
            }
        }
        #expect(uses >= 7, "the manifest no longer names the TLS, Postgres, OpenAPI and HTTP2 products it did")
    }

    @Test(
        "the default traits are TLS, Postgres, OpenAPI and HTTP2, so swift run kakapo keeps HTTPS, PostgreSQL, OpenAPI and HTTP/2"
    )
    func defaultTraitsKeepTheCLIWhole() async throws {
        let manifest = try await Self.dumpPackage()
        let traits = try #require(manifest["traits"] as? [[String: Any]], "Package.swift declares no traits")
        let defaults = traits.first { $0["name"] as? String == "default" }?["enabledTraits"] as? [String] ?? []
        #expect(Set(defaults) == ["TLS", "Postgres", "OpenAPI", "HTTP2"])
    }
}
