import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoUpstream

/// Sends every recorded request of a cassette to the live API and gives, per interaction, a verdict on its
/// answer (`ResponseComparison.Verdict`: same, benign or changed). Requests that change things (POST, PUT, PATCH, DELETE) are skipped unless
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

    /// The findings for each interaction, in order, and the live answers (redacted) of those that changed.
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
            do {
                let (answer, milliseconds) = try await ask(request, through: upstream)
                let differences = comparison.classified(
                    recorded: interaction.response, live: answer, volatile: interaction.volatile)
                let verdict = differences.map(\.verdict).max() ?? .same
                let outcome: Drift.Outcome =
                    switch verdict {
                    case .same: .same
                    case .benign: .benign
                    case .changed: .changed
                    }
                // A changed recording lists what changed; a benign one what else differs.
                findings.append(
                    finding(outcome, differences.filter { $0.verdict == verdict }.map(\.text)))
                if verdict == .changed {
                    live[position] = (answer, milliseconds)
                }
            } catch {
                findings.append(finding(.failed, [error.message]))
            }
        }
        return (findings, live)
    }

    /// Sends a recorded request to the live API once more, without the credentials the recording holds
    /// redacted and with `extraHeaders`: its answer, redacted by `redactor` (with the request as sent, so a
    /// live token echoed back is caught too), and how long it took in milliseconds.
    public func ask(_ request: HTTP.Request, through upstream: UpstreamClient) async throws(UpstreamError) -> (
        response: HTTP.Response, milliseconds: Double
    ) {
        var headers = request.headers
        headers.removeAll { $0.value == Redactor.placeholder || $0.value.contains(Redactor.placeholder) }
        for field in extraHeaders { headers.replaceOrAdd(name: field.name, value: field.value) }
        let started = ContinuousClock.now
        let sent = HTTP.Request(method: request.method, target: request.target, headers: headers, body: request.body)
        let raw = try await upstream.send(upstream.prepare(sent))
        let elapsed = ContinuousClock.now - started
        let answer = redactor.redact(
            Interaction(request: sent, response: raw, recordedAt: "", durationMilliseconds: 0)
        ).interaction.response
        return (answer, elapsed / .milliseconds(1))
    }
}
