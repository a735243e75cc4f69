import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoUpstream

/// Sends every recorded request of a cassette to the live API and reports, per interaction, whether the
/// answer is the same. Requests that change things (POST, PUT, PATCH, DELETE) are skipped unless
/// `includeUnsafe`; WebSocket conversations are skipped too. Credentials the cassette holds as `[REDACTED]` are left out of the requests; give
/// real ones with `extraHeaders`.
///
/// Each live answer is redacted by the recorder's rules before it is compared (with the request as sent,
/// so a live token echoed back is caught too): a value the cassette holds redacted is not drift, and no
/// live secret reaches a report or the file.
public struct CassetteVerifier: Sendable {
    public var comparison: ResponseComparison
    public var includeUnsafe: Bool
    /// Headers added to (or replacing) every request, such as `Authorization`.
    public var extraHeaders: HTTP.Headers
    /// The rules live answers are redacted by.
    public var redactor: Redactor

    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS"]

    public init(
        comparison: ResponseComparison = ResponseComparison(), includeUnsafe: Bool = false,
        extraHeaders: HTTP.Headers = [:], redactor: Redactor = Redactor()
    ) {
        self.comparison = comparison
        self.includeUnsafe = includeUnsafe
        self.extraHeaders = extraHeaders
        self.redactor = redactor
    }

    /// The findings for each interaction, in order, and the live answers (redacted) of those that drifted.
    public func verify(_ cassette: Cassette, through upstream: UpstreamClient) async -> (
        findings: [Drift], liveAnswers: [Int: (HTTP.Response, Double)]
    ) {
        var findings: [Drift] = []
        var live: [Int: (HTTP.Response, Double)] = [:]
        for (position, interaction) in cassette.interactions.enumerated() {
            let request = interaction.request
            let method = request.method.rawValue
            func finding(_ outcome: Drift.Outcome, _ details: [String]) -> Drift {
                Drift(position: position, method: method, target: request.target, outcome: outcome, details: details)
            }
            if interaction.webSocket != nil {
                // libcurl cannot hold a conversation, and --update would replace it with a bare answer.
                findings.append(
                    finding(
                        .skipped,
                        [
                            "a WebSocket conversation: verify compares HTTP answers; re-record it with `kakapo record --mode all` to refresh it"
                        ]))
                continue
            }
            if !includeUnsafe && !Self.safeMethods.contains(method.uppercased()) {
                findings.append(finding(.skipped, ["\(method) changes things on the API; --include-unsafe sends it"]))
                continue
            }
            var headers = request.headers
            headers.removeAll { $0.value == Redactor.placeholder || $0.value.contains(Redactor.placeholder) }
            for field in extraHeaders { headers.replaceOrAdd(name: field.name, value: field.value) }
            let started = ContinuousClock.now
            do {
                let sent = HTTP.Request(
                    method: request.method, target: request.target, headers: headers, body: request.body)
                let raw = try await upstream.send(upstream.prepare(sent))
                let elapsed = ContinuousClock.now - started
                let answer = redactor.redact(
                    Interaction(request: sent, response: raw, recordedAt: "", durationMilliseconds: 0)
                ).interaction.response
                let differences = comparison.differences(recorded: interaction.response, live: answer)
                findings.append(finding(differences.isEmpty ? .same : .drift, differences))
                if !differences.isEmpty {
                    live[position] = (
                        answer,
                        elapsed / .milliseconds(1)
                    )
                }
            } catch {
                findings.append(finding(.failed, [error.message]))
            }
        }
        return (findings, live)
    }
}
