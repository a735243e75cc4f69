import Foundation
import KakapoHTTP

/// The credentials Kakapo's own forward proxy requires (`--proxy-auth USER:PASSWORD`): requests it handles
/// as a proxy must carry `Proxy-Authorization: Basic base64(USER:PASSWORD)`, or, to name a cassette session
/// at the same time, `base64(USER+SESSION:PASSWORD)`. Checked in constant time; never written anywhere.
public struct ProxyCredentials: Sendable, CustomStringConvertible {
    /// The user name clients give.
    public let user: String
    private let userBytes: [UInt8]
    private let passwordBytes: [UInt8]

    /// The shortest password accepted: a forward proxy is open to anyone who can reach its port, and Basic
    /// credentials can be tried as fast as the network allows (NIST SP 800-63B sets the same floor).
    public static let minimumPasswordLength = 8
    /// The most bytes `USER:PASSWORD` may hold, so the header a client must send stays small.
    public static let maximumBytes = 512
    /// The most bytes of a session id named in the user name (`USER+SESSION`).
    static let maximumSessionBytes = 128
    /// The challenge a refused request gets in `Proxy-Authenticate`.
    public static let challenge = "Basic realm=\"kakapo\""

    /// Credentials from `USER:PASSWORD` (split at the first `:`); throws naming what is wrong (never
    /// echoing the password): an empty user name, a password shorter than `minimumPasswordLength`, a
    /// control character, more than `maximumBytes`.
    public init(_ text: String) throws(ProxyError) {
        func invalid(_ why: String) -> ProxyError { ProxyError(code: .configuration, message: why) }
        guard let colon = text.firstIndex(of: ":") else { throw invalid("takes USER:PASSWORD (no ':' found)") }
        let (user, password) = (String(text[..<colon]), String(text[text.index(after: colon)...]))
        if user.isEmpty { throw invalid("takes USER:PASSWORD with a user name before the ':'") }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw invalid("may not hold control characters")
        }
        if password.count < Self.minimumPasswordLength {
            throw invalid(
                "needs a password of at least \(Self.minimumPasswordLength) characters: anyone who reaches the port can guess"
            )
        }
        if text.utf8.count > Self.maximumBytes { throw invalid("may be at most \(Self.maximumBytes) bytes") }
        self.user = user
        self.userBytes = Array(user.utf8)
        self.passwordBytes = Array(password.utf8)
    }

    /// Never the password.
    public var description: String { "\(user):***" }

    /// What a request's `Proxy-Authorization` values say.
    package enum Verdict: Equatable {
        /// The credentials are these, naming `session` when the user name was `USER+SESSION`.
        case accepted(session: String?)
        case refused
    }

    /// Checks the `Proxy-Authorization` values of a request (exactly one is accepted). The user name and
    /// the password are compared in constant time; a session id after `USER+` may hold letters, digits,
    /// `.`, `_` and `-`, up to 128 of them.
    package func verdict(_ values: [String]) -> Verdict {
        guard values.count == 1, let decoded = Self.basic(values[0]),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return .refused }
        let name = decoded[..<colon]
        let nameMatches = ConstantTime.equal(name.prefix(userBytes.count), userBytes)
        let passwordMatches = ConstantTime.equal(decoded[(colon + 1)...], passwordBytes)
        guard nameMatches && passwordMatches else { return .refused }
        let rest = name.dropFirst(userBytes.count)
        guard let plus = rest.first else { return .accepted(session: nil) }
        let session = rest.dropFirst()
        guard plus == UInt8(ascii: "+"), (1...Self.maximumSessionBytes).contains(session.count),
            session.allSatisfy(Self.isSessionByte)
        else { return .refused }
        return .accepted(session: String(decoding: session, as: UTF8.self))
    }

    /// The bytes of `Basic <base64>` credentials; nil for another scheme or more than 1 KiB of base64.
    package static func basic(_ value: String) -> [UInt8]? {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", parts[1].utf8.count <= 1024,
            let decoded = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces))
        else { return nil }
        return Array(decoded)
    }

    private static func isSessionByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
