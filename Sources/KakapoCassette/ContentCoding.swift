import CZlib
import KakapoHTTP

/// The `Content-Encoding`s a cassette stores decoded and re-encodes on replay: gzip and deflate
/// (zlib, with raw deflate accepted when decoding). Others (br, zstd) are stored as the wire bytes.
public enum ContentCoding: String, Sendable, CaseIterable {
    case gzip
    case deflate

    /// The coding named by a `Content-Encoding` value, if it is a single one Kakapo can handle.
    public init?(header: String?) {
        guard let header else { return nil }
        let name = header.trimmingSpaces().lowercased()
        switch name {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default: return nil
        }
    }

    /// The decoded bytes, or nil when `bytes` are not valid in this coding.
    public func decode(_ bytes: [UInt8]) -> [UInt8]? {
        switch self {
        case .gzip: return Zlib.inflate(bytes, windowBits: 15 + 16)
        case .deflate: return Zlib.inflate(bytes, windowBits: 15) ?? Zlib.inflate(bytes, windowBits: -15)
        }
    }

    /// The bytes encoded in this coding (deterministic: same input, same output).
    public func encode(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .gzip: return Zlib.deflate(bytes, windowBits: 15 + 16)
        case .deflate: return Zlib.deflate(bytes, windowBits: 15)
        }
    }
}

enum Zlib {
    static func inflate(_ input: [UInt8], windowBits: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard kakapo_inflate_init(&stream, windowBits) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        let (output, status) = run(&stream, input) { CZlib.inflate(&$0, Z_NO_FLUSH) }
        return status == Z_STREAM_END ? output : nil
    }

    static func deflate(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        guard kakapo_deflate_init(&stream, Z_DEFAULT_COMPRESSION, windowBits) == Z_OK else { return input }
        defer { deflateEnd(&stream) }
        return run(&stream, input) { CZlib.deflate(&$0, Z_FINISH) }.output
    }

    /// Feeds `input` through `step` in 64 KiB output chunks until it stops returning `Z_OK` (or makes no
    /// progress), and returns what it produced with the last status.
    private static func run(_ stream: inout z_stream, _ input: [UInt8], step: (inout z_stream) -> Int32) -> (
        output: [UInt8], status: Int32
    ) {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
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
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if result == Z_BUF_ERROR && stream.avail_in == 0 { break }
            } while result == Z_OK
            return result
        }
        return (output, status)
    }
}

extension ContentCoding {
    /// `body` decoded in the coding `headers` name, with that coding; the body as it is and nil when they
    /// name no coding Kakapo handles or the bytes do not decode.
    public static func decoding(_ body: [UInt8], headers: HTTPHeaders) -> (content: [UInt8], coding: ContentCoding?) {
        guard let coding = ContentCoding(header: headers["Content-Encoding"]), let decoded = coding.decode(body) else {
            return (body, nil)
        }
        return (decoded, coding)
    }
}
