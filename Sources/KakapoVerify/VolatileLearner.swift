import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoUpstream

/// Learns which values of a cassette's recordings change from call to call (`VolatileFields`): sends each
/// recorded request to the live API once more and marks the response's headers and JSON pointers whose
/// values differ from the recording's, and the request's query parameters, form fields and JSON values of a
/// volatile shape (`ValueShape`: a UUID, a time of sending, a nonce), which the client will send afresh.
/// Requests that change things (POST, PUT, PATCH, DELETE) are not sent again unless `includeUnsafe` (their
/// request places are still marked); WebSocket conversations and streams are passed over. Markings already
/// in the cassette are kept.
public struct VolatileLearner: Sendable {
    /// Sends the requests (its `includeUnsafe`, `extraHeaders` and `redactor` apply).
    public var verifier: CassetteVerifier

    public init(verifier: CassetteVerifier) { self.verifier = verifier }

    /// What was learned about one recording.
    public struct Finding: Sendable {
        public let position: Int
        public let method: String
        public let target: String
        /// The places newly marked.
        public let learned: [VolatileFields.Place]
        /// Why it was passed over, or why its request failed; nil when it was compared.
        public let note: String?

        /// `#0 GET /users/1: body /id, body /at`, or what happened instead.
        public var text: String {
            let head = "#\(position) \(method) \(target): "
            if let note { return head + note }
            return head + (learned.isEmpty ? "nothing volatile" : learned.map(\.text).joined(separator: ", "))
        }
    }

    /// `cassette` with the volatile places learned for the recordings at `positions` (all when nil), and
    /// what was learned about each.
    public func learn(
        _ cassette: Cassette, positions: [Int]? = nil, through upstream: UpstreamClient
    ) async -> (cassette: Cassette, findings: [Finding]) {
        var result = cassette
        var findings: [Finding] = []
        for position in positions ?? Array(cassette.interactions.indices) where position < cassette.interactions.count {
            let interaction = cassette.interactions[position]
            let request = interaction.request
            func finding(_ learned: [VolatileFields.Place], _ note: String? = nil) -> Finding {
                Finding(
                    position: position, method: request.method.rawValue, target: request.target, learned: learned,
                    note: note)
            }
            if interaction.webSocket != nil || interaction.chunks != nil {
                findings.append(finding([], "passed over: a stream or a WebSocket conversation"))
                continue
            }
            var volatile = interaction.volatile
            let requestPlaces = Self.requestPlaces(of: interaction).filter(\.isWritable)
            var learned = requestPlaces.filter { !volatile.request.contains($0) }
            volatile.request = Array(Set(volatile.request + requestPlaces).prefix(VolatileFields.limit)).sorted()
            var note: String?
            if !verifier.includeUnsafe && !CassetteVerifier.safeMethods.contains(request.method.rawValue.uppercased()) {
                note = "\(request.method.rawValue) changes things on the API; --include-unsafe sends it"
            } else {
                do {
                    let (answer, _) = try await verifier.ask(request, through: upstream)
                    if answer.status == interaction.response.status {
                        let places = ResponseComparison.differingPlaces(interaction.response, answer).filter(
                            \.isWritable)
                        learned += places.filter { !volatile.response.contains($0) }
                        volatile.response = Array(Set(volatile.response + places).prefix(VolatileFields.limit))
                            .sorted()
                    } else {
                        note =
                            "the live API answered \(answer.status), not \(interaction.response.status): nothing learned from it"
                    }
                } catch {
                    note = "failed: \(error.message)"
                }
            }
            result.interactions[position].volatile = volatile
            findings.append(finding(learned.sorted(), learned.isEmpty ? note : nil))
        }
        return (result, findings)
    }

    /// The places of `interaction`'s request whose values are of a volatile shape at the time it was sent.
    static func requestPlaces(of interaction: Interaction) -> [VolatileFields.Place] {
        let request = interaction.request
        let sentAt = ISOTime.parse(interaction.recordedAt)?.seconds
        var places: [VolatileFields.Place] = []
        for item in request.queryItems {
            guard let value = item.value?.removingPercentEncodingLeniently(),
                ValueShape.of(value, sentAt: sentAt) != nil
            else { continue }
            places.append(.query(item.name.removingPercentEncodingLeniently()))
        }
        if RequestAlignment.isForm(request) {
            for item in QueryItem.parse(String(decoding: request.body, as: UTF8.self)) {
                guard let value = item.value?.removingPercentEncodingLeniently(),
                    ValueShape.of(value, sentAt: sentAt) != nil
                else { continue }
                places.append(.body(JSONPointer(components: [item.name.removingPercentEncodingLeniently()])))
            }
        } else if JSONParser.looksLikeContainer(request.body), let json = try? JSONParser.parse(request.body) {
            var visited = 0
            collect(json, at: [], sentAt: sentAt, into: &places, visited: &visited)
        }
        return Array(Set(places)).sorted()
    }

    private static func collect(
        _ value: JSONValue, at path: [String], sentAt: Int64?, into places: inout [VolatileFields.Place],
        visited: inout Int
    ) {
        visited += 1
        guard visited <= 100_000, places.count < VolatileFields.limit else { return }
        switch value {
        case .object(let object):
            for (key, member) in object {
                collect(member, at: path + [key], sentAt: sentAt, into: &places, visited: &visited)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                collect(element, at: path + [String(index)], sentAt: sentAt, into: &places, visited: &visited)
            }
        case .string(let text):
            if !path.isEmpty, ValueShape.of(text, sentAt: sentAt) != nil {
                places.append(.body(JSONPointer(components: path)))
            }
        case .number(let number):
            if !path.isEmpty, ValueShape.of(number.literal, sentAt: sentAt) != nil {
                places.append(.body(JSONPointer(components: path)))
            }
        default:
            break
        }
    }
}
