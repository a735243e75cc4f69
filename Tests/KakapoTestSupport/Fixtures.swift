import Foundation

/// Small byte fixtures shared by the tests.
public enum Fixtures {
    /// `{"compressed":true,"items":[1,2,3]}` compressed with gzip.
    public static let gzipJSON: [UInt8] = Array(
        Data(base64Encoded: "H4sIAAAAAAACA6tWSs7PLShKLS5OTVGyKikqTdVRyixJzS1Wsoo21DHSMY6tBQC5Y3ROIwAAAA==")!)

    /// Bytes that are not UTF-8 text: every byte value, twice.
    public static let binary: [UInt8] = (0..<512).map { UInt8($0 % 256) }

    /// A body of `count` bytes with a repeating, checkable pattern.
    public static func large(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    /// A fresh empty folder under the system's temporary folder.
    public static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "kakapo-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
