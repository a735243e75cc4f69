import Foundation
import KakapoGRPC
import KakapoHTTP

/// What redaction could not read (issue 42): `kakapo cassette lint` never calls clean bytes it did not
/// inspect. A body is not inspected when its content coding is one Kakapo cannot decode, when it does not
/// decode or decodes past the limit, when it is XML the scan could not follow or too large, or when it is a
/// compressed or encrypted blob (an archive's magic number, or bytes as random as a cipher's). A binary body
/// with no credential shape in it is inspected: its printable runs were searched. Pictures, sound, video and
/// fonts are compressed by nature and hold no credentials: they are not listed.
extension Redactor {
    /// One body (or message) that was not inspected, and why.
    public struct Uninspected: Sendable, Equatable {
        /// `request` or `response`.
        public let side: String
        public let reason: String
    }

    /// The bodies of `interaction` redaction could not read.
    public func uninspected(in interaction: Interaction) -> [Uninspected] {
        var found: [Uninspected] = []
        let grpc = Self.isGRPCCall(interaction)
        for (side, body, headers) in [
            ("request", interaction.request.body, interaction.request.headers),
            ("response", interaction.response.body, interaction.response.headers),
        ] where !body.isEmpty && !grpc {
            if let reason = uninspectedReason(body, headers: headers) {
                found.append(Uninspected(side: side, reason: reason))
            }
        }
        return found
    }

    /// Why a body was not inspected, or nil when it was.
    func uninspectedReason(_ body: [UInt8], headers: HTTP.Headers) -> String? {
        var content = body
        if let header = headers["Content-Encoding"], !header.trimmingSpaces().isEmpty,
            header.trimmingSpaces().lowercased() != "identity"
        {
            guard let coding = ContentCoding(header: header) else {
                return "its Content-Encoding \(header) is not one Kakapo decodes, so it was stored as sent"
            }
            switch coding.decoding(body) {
            case .decoded(let decoded): content = decoded
            case .invalid: return "it is not valid \(coding.rawValue), so it was stored as sent"
            case .tooLarge:
                return
                    "it decodes to more than \(ContentCoding.maximumDecodedBytes >> 20) MiB, so it was stored as sent"
            }
        }
        let contentType = headers["Content-Type"]?.lowercased() ?? ""
        if Self.isXML(contentType: contentType, content) {
            var secrets: Set<String> = []
            var kinds: [String] = []
            if case .notInspected(let reason) = redactXML(content, side: .response, secrets: &secrets, noting: &kinds) {
                return "\(reason) was not scanned by element (only for credential shapes)"
            }
            return nil
        }
        guard !Self.isText(contentType), !Self.isMedia(contentType) else { return nil }
        if content.count > Self.maximumBinaryBytes {
            return "a binary body larger than \(Self.maximumBinaryBytes >> 20) MiB is not searched"
        }
        if let archive = Self.archiveName(content) { return "it is \(archive) data, which Kakapo does not open" }
        if Self.looksRandom(content) {
            return
                "it looks compressed or encrypted (its bytes are as random as a cipher's), so nothing in it can be read"
        }
        return nil
    }

    /// Pictures, sound, video and fonts: compressed by nature, not where credentials are carried.
    static func isMedia(_ contentType: String) -> Bool {
        contentType.hasPrefix("image/") || contentType.hasPrefix("audio/") || contentType.hasPrefix("video/")
            || contentType.hasPrefix("font/")
    }

    /// The name of the compressed format `bytes` start with, by its magic number.
    static func archiveName(_ bytes: [UInt8]) -> String? {
        let magics: [([UInt8], String)] = [
            ([0x1F, 0x8B], "gzip"), ([0x50, 0x4B, 0x03, 0x04], "zip"), ([0x28, 0xB5, 0x2F, 0xFD], "zstd"),
            ([0x42, 0x5A, 0x68], "bzip2"), ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "xz"),
            ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "7-Zip"),
        ]
        return magics.first { bytes.starts(with: $0.0) }?.1
    }

    /// Whether the first 64 KiB of `bytes` (at least 1 KiB of them) have more than 7.5 bits of entropy per byte:
    /// compressed or encrypted data. Text is under 5, machine code and protobuf under 7.
    static func looksRandom(_ bytes: [UInt8]) -> Bool {
        let sample = bytes.prefix(64 << 10)
        guard sample.count >= 1024 else { return false }
        var counts = [Int](repeating: 0, count: 256)
        for byte in sample { counts[Int(byte)] += 1 }
        let total = Double(sample.count)
        var entropy = 0.0
        for count in counts where count > 0 {
            let p = Double(count) / total
            entropy -= p * log2(p)
        }
        return entropy > 7.5
    }
}
