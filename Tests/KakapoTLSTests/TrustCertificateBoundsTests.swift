import Foundation
import KakapoTestSupport
import NIOSSL
import Testing

@testable import KakapoTLS

/// Issue 25, "Bounds": the certificates made for intercepted hosts are kept for a bounded number of
/// hosts, however many distinct hosts clients name.
@Suite("Trust: bounded certificate cache")
struct TrustCertificateBoundsTests {
    @Test("certificates for ever new hosts stay within the capacity, and a dropped host gets a new one")
    func boundedByCount() throws {
        let authority = try CertificateAuthority.loadOrCreate(directory: try Fixtures.temporaryDirectory() + "/ca")
        let certificates = InterceptionCertificates(authority: authority, capacity: 8)
        let first = try certificates.context(forHost: "host0.example")
        for index in 1..<40 {
            _ = try certificates.context(forHost: "host\(index).example")
            #expect(certificates.kept <= 8)
        }
        // host0 was dropped long ago: it gets a new certificate, which is then kept.
        let again = try certificates.context(forHost: "host0.example")
        #expect(again !== first)
        #expect(try certificates.context(forHost: "host0.example") === again)
        _ = try certificates.makeServerHandler(forHost: "host0.example")
    }

    @Test("a host in use stays cached while others come and go")
    func recentlyUsedStays() throws {
        let authority = try CertificateAuthority.loadOrCreate(directory: try Fixtures.temporaryDirectory() + "/ca")
        let certificates = InterceptionCertificates(authority: authority, capacity: 4)
        let busy = try certificates.context(forHost: "busy.example")
        for index in 0..<20 {
            _ = try certificates.context(forHost: "other\(index).example")
            #expect(try certificates.context(forHost: "busy.example") === busy)
        }
        #expect(certificates.kept == 4)
    }
}
