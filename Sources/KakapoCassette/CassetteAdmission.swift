import KakapoHTTP
import KakapoJSON

/// What may go into a cassette: nothing the reader would refuse. A value the reader refuses (a header with
/// a bare CR, a status of 1000, a duration of 1e300 ms) would make the whole file unloadable, so writers
/// check each interaction first, with the reader's own rules: the interaction, bodies left out (they are
/// encoded in forms the reader always reads, and are the costly part), is encoded and decoded again.
enum CassetteAdmission {
    /// Why the reader would refuse `interaction`; nil when it reads it back.
    static func refusal(of interaction: Interaction) -> CassetteDecodingError? {
        var bare = interaction
        bare.request.body = []
        bare.response.body = []
        bare.chunks = interaction.chunks?.map { ResponseChunk(offsetMilliseconds: $0.offsetMilliseconds, bytes: []) }
        do {
            _ = try CassetteCodec.decodeInteraction(CassetteCodec.encode(bare), at: [])
            return nil
        } catch {
            return error
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

    /// The reader's message with where in the interaction it applies.
    static func describe(_ refusal: CassetteDecodingError) -> String {
        refusal.message + (refusal.path.isEmpty ? "" : " (at \(refusal.path.pointer))")
    }
}
