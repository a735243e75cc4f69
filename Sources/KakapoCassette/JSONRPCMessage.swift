import KakapoJSON

/// A JSON-RPC 2.0 request or batch, as matching sees it.
enum JSONRPCMessage {
    /// `json` as it is compared with recordings.
    static func forMatching(_ json: JSONValue) -> JSONValue {
        json
    }
}
