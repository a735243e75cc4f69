import CZstd

/// `Content-Encoding: zstd` through libzstd: decoding bounded in output (every frame of the body, as RFC 8878
/// allows several), encoding deterministic.
enum Zstd {
    /// The largest window a body may ask for: 8 MiB, as RFC 9659 asks of HTTP decoders (a frame that wants
    /// more would make the decoder allocate it).
    static let maximumWindowLog: Int32 = 23

    /// `input` decoded, up to `limit` bytes; with `keeping` false the output is only counted.
    static func decode(_ input: [UInt8], limit: Int, keeping: Bool) -> ContentCoding.Decoding {
        guard !input.isEmpty, let stream = ZSTD_createDStream() else { return .invalid }
        defer { ZSTD_freeDStream(stream) }
        guard ZSTD_isError(ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, maximumWindowLog)) == 0 else {
            return .invalid
        }
        var output: [UInt8] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return input.withUnsafeBufferPointer { source -> ContentCoding.Decoding in
            var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            var remaining = 1
            while inBuffer.pos < inBuffer.size || remaining != 0 {
                let (result, produced) = chunk.withUnsafeMutableBufferPointer { target -> (Int, Int) in
                    var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
                    let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                    return (result, outBuffer.pos)
                }
                if ZSTD_isError(result) != 0 { return .invalid }
                remaining = result
                total += produced
                if total > limit { return .tooLarge }
                if keeping { output.append(contentsOf: chunk[0..<produced]) }
                // Input used up with a frame unfinished, and nothing more coming out: cut short.
                if inBuffer.pos == inBuffer.size && remaining != 0 && produced < chunk.count { return .invalid }
            }
            return .decoded(output)
        }
    }

    /// `input` encoded at level 3 (zstd's default), the same bytes for the same input.
    static func encode(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                ZSTD_compress(target.baseAddress, target.count, source.baseAddress, source.count, 3)
            }
        }
        guard ZSTD_isError(size) == 0 else { return input }
        return Array(output.prefix(size))
    }
}
