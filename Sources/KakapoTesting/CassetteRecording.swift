import Foundation
import KakapoEngine
import KakapoProxy
import KakapoUpstream

/// How per-test cassettes record, read from the environment as VCR's users expect:
/// `KAKAPO_RECORD=all|new|once|none` (default `once`, or `none` when `CI` is set, so CI never records)
/// and `KAKAPO_UPSTREAM=URL` (the API to record from when a test does not name one).
public enum CassetteRecording {
    /// The mode for per-test cassettes in this process.
    public static func mode(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(CassetteTestError)
        -> ProxyMode
    {
        if let value = environment["KAKAPO_RECORD"], !value.isEmpty {
            guard let mode = ProxyMode(rawValue: value.lowercased()), mode != .passthrough else {
                throw CassetteTestError("KAKAPO_RECORD must be all, new, once or none, not \"\(value)\"")
            }
            return mode
        }
        if let ci = environment["CI"], !ci.isEmpty, ci != "0", ci.lowercased() != "false" { return .replay }
        return .once
    }

    /// The upstream named by `KAKAPO_UPSTREAM`, if any.
    public static func upstream(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment["KAKAPO_UPSTREAM"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A per-test cassette that cannot be used, or requests of the test that no recording answered.
public struct CassetteTestError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
