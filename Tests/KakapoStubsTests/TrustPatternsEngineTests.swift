import Foundation
import KakapoStubs
import Testing

/// `LinearRegex` against `NSRegularExpression` on the patterns people write, and on the ones that make a
/// backtracking engine take exponential time.
@Suite("Trust: the linear-time pattern engine")
struct TrustPatternsEngineTests {
    static let patterns = [
        "abc", "a.c", "^ab", "bc$", "a|b|cd", "(ab)+c", "a*b*c", "colou?r", "[a-c]+x", "[^0-9]+", "\\d{2,3}",
        "\\w+@\\w+\\.com", "^\\s*$", "x{2}", "x{2,}", "(?:ab|cd){1,2}e", "[\\d\\-]+", "\\bcat\\b", "\\Bat",
        "a.*z", "^(a|b)*$", "[.]", "\\.", "(?<word>ab)c", "visa|amex", "ab+c", "^RE", "[A-Fa-f0-9]{4}", "é+",
        "\\x41", "\\u00e9", "a{,2}", "a{", "}", "]", "[]a]", "[a-]", "(|a)b", "\\AA", "a\\z",
    ]
    static let inputs = [
        "", "abc", "xabcx", "ac", "abbbc", "color", "colour", "colouur", "bbx", "abcx", "12", "1234", "a@b.com",
        "   ", "\n", "xx", "xxx", "abcde", "cdabe", "1-2-3", "a cat sat", "concat", "bat", "a\nz", "azzz", "abab",
        "abc.", "abcd", "visa", "amex", "mastercard", "RELEASE", "review", "BEEF", "caf\u{e9}\u{e9}", "A", "a{",
        "}", "]", "a-", "b", "ab\n",
    ]

    @Test("agrees with NSRegularExpression on everyday patterns, searching and whole-value, in any case or not")
    func agreesWithFoundation() throws {
        for pattern in Self.patterns {
            for caseInsensitive in [false, true] {
                let linear = try LinearRegex(pattern, caseInsensitive: caseInsensitive)
                let whole = try LinearRegex(pattern, caseInsensitive: caseInsensitive, wholeValue: true)
                let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
                guard let foundation = try? NSRegularExpression(pattern: pattern, options: options),
                    let foundationWhole = try? NSRegularExpression(pattern: "^(?:" + pattern + ")\\z", options: options)
                else { continue }
                for input in Self.inputs {
                    let range = NSRange(input.startIndex..., in: input)
                    #expect(
                        linear.matches(input) == (foundation.firstMatch(in: input, range: range) != nil),
                        "\(pattern) on \(input.debugDescription), any case: \(caseInsensitive)")
                    #expect(
                        whole.matches(input) == (foundationWhole.firstMatch(in: input, range: range) != nil),
                        "whole \(pattern) on \(input.debugDescription), any case: \(caseInsensitive)")
                }
            }
        }
    }

    @Test("patterns that backtrack exponentially match a long text in well under two seconds (a debug build)")
    func pathological() throws {
        let text = String(repeating: "a", count: 5_000)
        for pattern in ["((a*)*)*b", "(a+)+b", "(a|aa)+c", "(a|a)*b", "(.*a){20}b", "^(a?){25}a{25}$"] {
            let regex = try LinearRegex(pattern)
            let started = ContinuousClock.now
            #expect(!regex.matches(text) || pattern.hasPrefix("^(a?)"), "\(pattern)")
            #expect(ContinuousClock.now - started < .seconds(2), "\(pattern) took \(ContinuousClock.now - started)")
        }
        #expect(try LinearRegex("^(a?){25}a{25}$").matches(String(repeating: "a", count: 25)))
    }

    @Test(
        "what needs backtracking, and patterns too large, are refused with a reason",
        arguments: [
            ("(a)\\1", "backreferences"), ("\\k<x>", "backreferences"), ("(?=a)", "lookahead"),
            ("(?!a)", "lookahead"), ("(?<=a)b", "lookbehind"), ("(?<!a)b", "lookbehind"), ("a*+", "possessive"),
            ("(a", "missing ')'"), ("a)", "unmatched ')'"), ("[a", "missing ']'"), ("*a", "nothing to repeat"),
            ("a{5,2}", "exceeds"), ("a{1001}", "at most 1000"), ("(a{1000}){3}", "too large"),
            ("\\p{L}", "unsupported"),
            ("[z-a]", "backwards"), (String(repeating: "(", count: 150), "nest"),
            (String(repeating: "a", count: 1_001), "at most 1000 characters"),
        ])
    func refused(pattern: String, reason: String) {
        #expect {
            _ = try LinearRegex(pattern)
        } throws: { error in
            (error as? LinearRegex.SyntaxError)?.message.contains(reason) == true
        }
    }
}
