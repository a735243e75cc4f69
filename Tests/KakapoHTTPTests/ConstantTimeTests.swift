import KakapoHTTP
import Testing

/// The one comparison of secrets (admin token, proxy credentials): equal only for the same bytes, whatever
/// the lengths.
@Suite("Constant-time comparison")
struct ConstantTimeTests {
    @Test("equal only for the same bytes: a prefix, a longer value, one byte off and an empty guess are not")
    func equality() {
        let secret = Array("s3cret-token".utf8)
        #expect(ConstantTime.equal(secret, secret))
        #expect(ConstantTime.equal("s3cret-token".utf8, secret))
        #expect(ConstantTime.equal(secret[...], secret))
        #expect(!ConstantTime.equal(secret.dropLast(), secret))
        #expect(!ConstantTime.equal(secret + [0], secret))
        #expect(!ConstantTime.equal(Array("s3cret-tokeN".utf8), secret))
        #expect(!ConstantTime.equal([UInt8](), secret))
        #expect(ConstantTime.equal([UInt8](), []))
        #expect(!ConstantTime.equal([0], []))
    }

    @Test("a bearer header is checked whole: the scheme, the token, nothing more")
    func bearer() {
        #expect(ConstantTime.isBearer("Bearer abcdefgh", token: "abcdefgh"))
        #expect(!ConstantTime.isBearer("Bearer abcdefg", token: "abcdefgh"))
        #expect(!ConstantTime.isBearer("Bearer abcdefghi", token: "abcdefgh"))
        #expect(!ConstantTime.isBearer("bearer abcdefgh", token: "abcdefgh"))
        #expect(!ConstantTime.isBearer(nil, token: "abcdefgh"))
    }
}
