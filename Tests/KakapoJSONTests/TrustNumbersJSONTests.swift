import KakapoJSON
import Testing

/// JSON numbers compare by their exact decimal value, up to the usual spellings, never as doubles.
@Suite("Trust: JSON numbers compared exactly")
struct TrustNumbersJSONTests {
    @Test(
        "spellings of one number are equivalent",
        arguments: [
            ("1", "1.0"), ("1", "1e0"), ("1", "10e-1"), ("1", "0.1e1"), ("1", "1.000E+0"), ("0", "-0"), ("0", "0.0e5"),
            ("-0.0", "0"), ("100", "1e2"), ("100", "1E+2"), ("-12.5", "-125e-1"), ("0.001", "1e-3"),
            ("7e999", "70e998"),
            ("12345678901234567890123456789", "1.2345678901234567890123456789e28"), ("007", "7"),
            ("1e0000000000000000000001", "10"),
        ])
    func equivalent(a: String, b: String) {
        #expect(JSONNumber(literal: a).isEquivalent(to: JSONNumber(literal: b)))
        #expect(JSONNumber(literal: b).isEquivalent(to: JSONNumber(literal: a)))
        #expect(JSONValue.number(JSONNumber(literal: a)).isEquivalent(to: .number(JSONNumber(literal: b))))
    }

    @Test(
        "different numbers are never equivalent, however close as doubles",
        arguments: [
            ("7e999", "1e400"), ("12345678901234567890123456789", "12345678901234567890123456788"),
            ("9007199254740993", "9007199254740992"), ("0.1", "0.10000000000000001"), ("1", "-1"), ("1e-400", "0"),
            ("1e99999999999999999999", "1e99999999999999999998"), ("2", "1.9999999999999999999"),
        ])
    func different(a: String, b: String) {
        #expect(!JSONNumber(literal: a).isEquivalent(to: JSONNumber(literal: b)))
        #expect(!JSONNumber(literal: b).isEquivalent(to: JSONNumber(literal: a)))
    }

    @Test("== and hashing stay on the text as written, so they agree with each other and output is what was read")
    func equalityIsTextual() {
        let one = JSONNumber(literal: "1.0")
        #expect(one != JSONNumber(literal: "1"))
        #expect(one == JSONNumber(literal: "1.0"))
        #expect(Set([one, JSONNumber(literal: "1.0"), JSONNumber(literal: "1")]).count == 2)
        #expect(JSONWriter().write(.number(one)) == Array("1.0".utf8))
    }

    @Test("numbers order by exact value: neighbours of long integers, tiny and huge exponents, signs")
    func ordering() {
        let ascending = [
            "-1e99999999999999999999", "-7e999", "-1e400", "-2", "-1.9999999999999999999", "-1e-400",
            "-1e-99999999999999999999", "0", "1e-99999999999999999999", "1e-400", "0.1", "0.10000000000000001", "1",
            "1.9999999999999999999", "2", "9007199254740992", "9007199254740993", "12345678901234567890123456788",
            "12345678901234567890123456789", "1e400", "7e999", "1e99999999999999999998", "1e99999999999999999999",
        ]
        for (i, a) in ascending.enumerated() {
            for (j, b) in ascending.enumerated() {
                let expected = i < j ? -1 : (i > j ? 1 : 0)
                #expect(JSONNumber(literal: a).compare(to: JSONNumber(literal: b)) == expected, "\(a) vs \(b)")
            }
        }
        #expect(JSONNumber(literal: "1.0").compare(to: JSONNumber(literal: "10e-1")) == 0)
        #expect(JSONNumber(literal: "-0").compare(to: JSONNumber(literal: "0.0")) == 0)
    }
}
