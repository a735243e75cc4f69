import CBrotli

/// `Content-Encoding: br` through libbrotli: decoding bounded in output, encoding deterministic.
enum Brotli {
    /// `input` decoded, up to `limit` bytes; with `keeping` false the output is only counted.
    static func decode(_ input: [UInt8], limit: Int, keeping: Bool) -> ContentCoding.Decoding {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return .invalid }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return input.withUnsafeBufferPointer { source -> ContentCoding.Decoding in
            var availableIn = source.count
            var nextIn = source.baseAddress
            while true {
                var availableOut = chunk.count
                let result = chunk.withUnsafeMutableBufferPointer { target -> BrotliDecoderResult in
                    var nextOut = target.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                let produced = chunk.count - availableOut
                total += produced
                if total > limit { return .tooLarge }
                if keeping { output.append(contentsOf: chunk[0..<produced]) }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    // Bytes after the end of the stream are not brotli.
                    return availableIn == 0 ? .decoded(output) : .invalid
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                default:
                    // An error, or input that ends before the stream does.
                    return .invalid
                }
            }
        }
    }

    /// `input` encoded at quality 5 (a tenth of the time of the default 11, within a few per cent of its size),
    /// the same bytes for the same input.
    static func encode(_ input: [UInt8]) -> [UInt8] {
        var size = BrotliEncoderMaxCompressedSize(input.count)
        if size == 0 { size = input.count + 1024 }
        var output = [UInt8](repeating: 0, count: size)
        let done = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                BrotliEncoderCompress(
                    5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, source.count, source.baseAddress, &size,
                    target.baseAddress)
            }
        }
        guard done == BROTLI_TRUE else { return input }
        return Array(output.prefix(size))
    }
}
