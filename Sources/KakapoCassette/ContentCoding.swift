import CBrotli
import CZlib
import CZstd
import KakapoHTTP

/// The `Content-Encoding`s a cassette stores decoded and re-encodes on replay: gzip and deflate (zlib, with
/// raw deflate accepted when decoding), br (brotli) and zstd (Zstandard), through the system libraries. Others,
/// and stacked codings (`gzip, br`), are stored as the wire bytes, and `cassette lint` lists them as not
/// inspected.
public enum ContentCoding: String, Sendable, CaseIterable {
    case gzip
    case deflate
    case br
    case zstd

    /// The coding named by a `Content-Encoding` value, if it is a single one Kakapo can handle.
    public init?(header: String?) {
        guard let header else { return nil }
        let name = header.trimmingSpaces().lowercased()
        switch name {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        case "br": self = .br
        case "zstd": self = .zstd
        default: return nil
        }
    }

    /// The most bytes a body is decoded to: 16 MiB. A body that decodes to more (a compression bomb: 400 KB
    /// of gzip can hold 400 MB) is not decoded anywhere: it is kept, matched and replayed as sent.
    public static let maximumDecodedBytes = 16 << 20

    /// What decoding a body gave.
    public enum Decoding: Sendable, Equatable {
        case decoded([UInt8])
        /// The bytes are not valid in this coding.
        case invalid
        /// The bytes decode to more than the limit: nothing past it was kept.
        case tooLarge
    }

    /// The decoded bytes, or nil when `bytes` are not valid in this coding or decode to more than
    /// `maximumDecodedBytes`.
    public func decode(_ bytes: [UInt8]) -> [UInt8]? {
        guard case .decoded(let content) = decoding(bytes) else { return nil }
        return content
    }

    /// `bytes` decoded, up to `limit` bytes.
    public func decoding(_ bytes: [UInt8], limit: Int = ContentCoding.maximumDecodedBytes) -> Decoding {
        decoding(bytes, limit: limit, keeping: true)
    }

    /// Whether `bytes` decode to more than `maximumDecodedBytes` (so they are kept as sent), found
    /// without keeping what they decode to.
    public func decodesPastLimit(_ bytes: [UInt8]) -> Bool {
        decoding(bytes, limit: ContentCoding.maximumDecodedBytes, keeping: false) == .tooLarge
    }

    /// Whether `bytes` are valid in this coding and decode to at most `maximumDecodedBytes`, found without
    /// keeping what they decode to.
    public func decodesWithinLimit(_ bytes: [UInt8]) -> Bool {
        decoding(bytes, limit: ContentCoding.maximumDecodedBytes, keeping: false) == .decoded([])
    }

    private func decoding(_ bytes: [UInt8], limit: Int, keeping: Bool) -> Decoding {
        switch self {
        case .gzip: return Zlib.inflate(bytes, windowBits: 15 + 16, limit: limit, keeping: keeping)
        case .deflate:
            let zlib = Zlib.inflate(bytes, windowBits: 15, limit: limit, keeping: keeping)
            return zlib == .invalid ? Zlib.inflate(bytes, windowBits: -15, limit: limit, keeping: keeping) : zlib
        case .br: return Brotli.decode(bytes, limit: limit, keeping: keeping)
        case .zstd: return Zstd.decode(bytes, limit: limit, keeping: keeping)
        }
    }

    /// The bytes encoded in this coding (deterministic: same input, same output).
    public func encode(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .gzip: return Zlib.deflate(bytes, windowBits: 15 + 16)
        case .deflate: return Zlib.deflate(bytes, windowBits: 15)
        case .br: return Brotli.encode(bytes)
        case .zstd: return Zstd.encode(bytes)
        }
    }
}

enum Zlib {
    /// `input` inflated, up to `limit` bytes; with `keeping` false the output is only counted (and the
    /// result of a valid input is `.decoded([])`).
    static func inflate(_ input: [UInt8], windowBits: Int32, limit: Int, keeping: Bool = true)
        -> ContentCoding.Decoding
    {
        var stream = z_stream()
        guard kakapo_inflate_init(&stream, windowBits) == Z_OK else { return .invalid }
        defer { inflateEnd(&stream) }
        let (output, status, exceeded) = run(&stream, input, limit: limit, keeping: keeping) {
            CZlib.inflate(&$0, Z_NO_FLUSH)
        }
        if exceeded { return .tooLarge }
        return status == Z_STREAM_END ? .decoded(output) : .invalid
    }

    static func deflate(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        guard kakapo_deflate_init(&stream, Z_DEFAULT_COMPRESSION, windowBits) == Z_OK else { return input }
        defer { deflateEnd(&stream) }
        return run(&stream, input, limit: .max, keeping: true) { CZlib.deflate(&$0, Z_FINISH) }.output
    }

    /// Feeds `input` through `step` in 64 KiB output chunks until it stops returning `Z_OK` (or makes no
    /// progress, or has produced more than `limit` bytes: `exceeded`), and returns what it produced (when
    /// `keeping`) with the last status.
    private static func run(
        _ stream: inout z_stream, _ input: [UInt8], limit: Int, keeping: Bool, step: (inout z_stream) -> Int32
    ) -> (output: [UInt8], status: Int32, exceeded: Bool) {
        var output: [UInt8] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        var exceeded = false
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            var result = Z_OK
            repeat {
                result = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return step(&stream)
                }
                let produced = chunk.count - Int(stream.avail_out)
                total += produced
                if total > limit {
                    exceeded = true
                    break
                }
                if keeping { output.append(contentsOf: chunk[0..<produced]) }
                if result == Z_BUF_ERROR && stream.avail_in == 0 { break }
            } while result == Z_OK
            return result
        }
        return (exceeded ? [] : output, status, exceeded)
    }
}

extension ContentCoding {
    /// `body` decoded in the coding `headers` name, with that coding; the body as it is and nil when they
    /// name no coding Kakapo handles or the bytes do not decode.
    public static func decoding(_ body: [UInt8], headers: HTTP.Headers) -> (content: [UInt8], coding: ContentCoding?) {
        guard let coding = ContentCoding(header: headers["Content-Encoding"]), let decoded = coding.decode(body) else {
            return (body, nil)
        }
        return (decoded, coding)
    }
}
