import KakapoHTTP

/// Recorded answers to JSON-RPC 2.0 requests, replayed with the ids of the requests they answer.
enum JSONRPCReplay {
    /// `answer`, a recording replayed to `request`.
    static func answer(_ answer: Answer, to request: HTTP.Request) -> Answer {
        answer
    }
}
