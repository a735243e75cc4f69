import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a recording session's cassette file: the interactions loaded from the file (from their encoded
/// form, or copied from the file this session last wrote when none was replaced), the recordings already
/// folded (copied from that file), then the new ones. So a recording never has to keep what it has saved
/// in memory, and each fold costs a copy of the file plus the new recordings.
struct CassetteFold {
    /// Where the parts of a file this session wrote are, in bytes.
    struct Layout: Equatable {
        /// Just after the `[` that opens `interactions`; nil for an empty list (`[]`).
        var itemsStart: Int?
        /// Just after the last loaded interaction (at `itemsStart` when there is none).
        var originalsEnd: Int
        /// Just after the last recording (at `originalsEnd` when there is none).
        var recordingsEnd: Int
        /// Interactions in the file.
        var count: Int
        var originals: Int
        /// The file as written, to tell whether anything else wrote it since.
        var stamp = CassetteFileStamp.absent
    }

    let version: Int
    /// The loaded interactions' encoded form; nil to copy them from the previous file.
    let originals: [[UInt8]]?
    let originalCount: Int
    /// Recordings not yet in the file.
    let recordings: [[UInt8]]
    /// The file this session last wrote; nil before its first fold.
    let previous: Layout?

    /// Writes the file atomically and returns where its parts are.
    func write(to path: String) throws(CassetteError) -> Layout {
        precondition(originals != nil || previous != nil, "the first fold writes the loaded interactions")
        var layout = Layout(itemsStart: nil, originalsEnd: 0, recordingsEnd: 0, count: 0, originals: originalCount)
        let old: Int32 = previous == nil ? -1 : open(path, O_RDONLY)
        if previous != nil && old < 0 {
            throw CassetteError(
                code: .notWritable, file: path, message: "cannot read back: \(CassetteFile.lastError())")
        }
        defer { if old >= 0 { close(old) } }
        // The parts are copied from where this session put them: in a file anything else wrote since (an
        // editor, a checkout), those places hold something else, and the copy would be a broken cassette.
        if let previous, CassetteFileStamp.of(descriptor: old) != previous.stamp {
            throw CassetteError(
                code: .notWritable, file: path,
                message:
                    "the cassette was changed on disk by another program while recording; this run's recordings stay in \(CassetteJournal.path(for: path)), which the next start folds into it"
            )
        }
        layout.stamp = try CassetteFile.writeAtomically(to: path) { emit in
            try withoutActuallyEscaping(emit) { emit in try writeParts(to: emit, old: old, layout: &layout) }
        }
        return layout
    }

    private func writeParts(
        to emit: @escaping (UnsafeRawBufferPointer) throws -> Void, old: Int32, layout: inout Layout
    ) throws {
        var writer = BufferedWriter(emit: emit)
        try writer.write(CassetteCodec.fileHead(version: version))
        let total = originalCount + (previous.map { $0.count - $0.originals } ?? 0) + recordings.count
        if total == 0 {
            try writer.write(CassetteCodec.emptyList)
            try writer.flush()
            return
        }
        try writer.write(CassetteCodec.listOpen)
        let start = writer.offset
        layout.itemsStart = start
        func writeItems(_ chunks: [[UInt8]]) throws {
            for chunk in chunks {
                try writer.write(CassetteCodec.itemSeparator(first: layout.count == 0))
                try writer.write(chunk)
                layout.count += 1
            }
        }
        if let originals {
            try writeItems(originals)
        } else if let previous, let from = previous.itemsStart {
            try writer.copy(from: old, range: from..<previous.originalsEnd)
            layout.count += previous.originals
        }
        layout.originalsEnd = writer.offset
        if let previous, previous.recordingsEnd > previous.originalsEnd {
            try writer.copy(from: old, range: previous.originalsEnd..<previous.recordingsEnd)
            layout.count += previous.count - previous.originals
        }
        try writeItems(recordings)
        layout.recordingsEnd = writer.offset
        try writer.write(CassetteCodec.listClose)
        try writer.flush()
    }

    /// Gathers small pieces into 1 MiB writes and counts what was written.
    private struct BufferedWriter {
        let emit: (UnsafeRawBufferPointer) throws -> Void
        var buffer: [UInt8] = []
        var offset = 0

        init(emit: @escaping (UnsafeRawBufferPointer) throws -> Void) {
            self.emit = emit
            buffer.reserveCapacity(1 << 20)
        }

        mutating func write(_ bytes: [UInt8]) throws {
            if buffer.count + bytes.count > 1 << 20 { try flush() }
            if bytes.count >= 1 << 20 {
                try bytes.withUnsafeBytes(emit)
            } else {
                buffer.append(contentsOf: bytes)
            }
            offset += bytes.count
        }

        mutating func flush() throws {
            try buffer.withUnsafeBytes(emit)
            buffer.removeAll(keepingCapacity: true)
        }

        /// Copies `range` of the file open as `descriptor`.
        mutating func copy(from descriptor: Int32, range: Range<Int>) throws {
            try flush()
            var block = [UInt8](repeating: 0, count: 1 << 20)
            var position = range.lowerBound
            while position < range.upperBound {
                let wanted = min(block.count, range.upperBound - position)
                let count = block.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(position)) }
                guard count > 0 else {
                    throw CassetteError(
                        code: .notWritable, file: "", message: "the cassette changed on disk while recording")
                }
                try block.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                position += count
                offset += count
            }
        }
    }
}
