import KakapoHTTP
import KakapoJSON

/// What may go into a cassette: nothing the reader would refuse. A value the reader refuses (a header with
/// a bare CR, a status of 1000, a duration of 1e300 ms) would make the whole file unloadable, so writers
/// check each interaction first, with the reader's own rules: the interaction, bodies left out (they are
/// encoded in forms the reader always reads, and are the costly part), is encoded and decoded again.
enum CassetteAdmission {
    /// Why the reader would refuse `interaction`; nil when it reads it back.
    static func refusal(of interaction: Interaction) -> CassetteDecodingError? {
        // Every recording passes here: the common shape is settled by a look at its bytes, and only what
        // that look is unsure of pays for the round trip (it cost about a tenth of a recording's CPU).
        if isPlainlyReadable(interaction) { return nil }
        var bare = interaction
        bare.request.body = []
        bare.response.body = []
        bare.chunks = interaction.chunks?.map { ResponseChunk(offsetMilliseconds: $0.offsetMilliseconds, bytes: []) }
        // A conversation's payloads are written in forms the reader always reads (a JSON string, base64), and
        // its messages may be hundreds of thousands: their one rule, offsets in range and in order, is checked
        // here rather than by a round trip; the rest of the conversation goes through the reader.
        bare.webSocket?.messages = []
        if let messages = interaction.webSocket?.messages, let refusal = refusal(of: messages) { return refusal }
        do {
            _ = try CassetteCodec.decodeInteraction(CassetteCodec.encode(bare), at: [])
            return nil
        } catch {
            return error
        }
    }

    /// Why the reader would refuse a conversation's `messages`: an offset it cannot hold (as written, to
    /// 0.1 ms) or one earlier than the message before; nil when it reads them all.
    static func refusal(of messages: [WebSocketMessage]) -> CassetteDecodingError? {
        var previous = 0.0
        for (index, message) in messages.enumerated() {
            let offset = message.offsetMilliseconds
            // What the writer writes: rounded to 0.1 ms and clamped to the range (CassetteCodec.formatMilliseconds).
            let written =
                offset.isFinite
                ? (min(max(offset, 0), Double(CassetteCodec.largestMilliseconds)) * 10).rounded() / 10 : 0
            guard offset.isFinite, written >= previous else {
                return CassetteDecodingError(
                    path: [.key("websocket"), .key("messages"), .index(index), .key("offsetMs")],
                    message: "\"offsetMs\" must be no earlier than the message before")
            }
            previous = written
        }
        return nil
    }

    /// Whether `interaction` has the shape every reader rule accepts, checked more strictly than the
    /// reader does: a status from 100 to 999, a method of visible ASCII, a path target, header names of
    /// token characters and values without control characters, no chunks, no WebSocket conversation. False
    /// sends it to the full check.
    /// (`TrustCassetteFilesTests.writerReaderProperty` keeps writer and reader in agreement.)
    static func isPlainlyReadable(_ interaction: Interaction) -> Bool {
        guard (100...999).contains(interaction.response.status), interaction.chunks == nil,
            interaction.webSocket == nil,
            interaction.request.origin == nil, interaction.request.target.utf8.first == UInt8(ascii: "/")
        else { return false }
        let method = interaction.request.method.rawValue.utf8
        guard !method.isEmpty, method.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        return isPlain(interaction.request.headers) && isPlain(interaction.response.headers)
    }

    private static func isPlain(_ headers: HTTP.Headers) -> Bool {
        headers.allSatisfy { field in
            !field.name.isEmpty
                && field.name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
                && field.value.utf8.allSatisfy { ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }
        }
    }

    /// Throws, naming the file and the interaction, when the reader would refuse one of `interactions`.
    static func check(_ interactions: [Interaction], file: String) throws(CassetteError) {
        for (position, interaction) in interactions.enumerated() {
            if let refusal = refusal(of: interaction) {
                throw CassetteError(
                    code: .invalid, file: file,
                    message:
                        "interaction #\(position) (\(interaction.request.method) \(interaction.request.url)) cannot be written: \(describe(refusal)); the cassette would not load"
                )
            }
        }
    }

    /// The error reported for a recording of `interaction` left out because the reader refuses it.
    static func error(refusing interaction: Interaction, for refusal: CassetteDecodingError, file: String)
        -> CassetteError
    {
        CassetteError(
            code: .invalid, file: file,
            message: "not recorded: \(interaction.request.method) \(interaction.request.url): \(describe(refusal))")
    }

    /// The reader's message with where in the interaction it applies.
    static func describe(_ refusal: CassetteDecodingError) -> String {
        refusal.message + (refusal.path.isEmpty ? "" : " (at \(refusal.path.pointer))")
    }
}
