import KakapoHTTP
import KakapoJSON

extension HTTP.Response {
    /// A JSON response laid out for people (errors and reports, read in terminals and logs), with a
    /// trailing newline.
    public static func json(_ value: JSONValue, status: Int) -> HTTP.Response {
        HTTP.Response(status: status, headers: ["Content-Type": "application/json"], body: ErrorBody.readable(value))
    }

    /// `{"error": message}` with `status`: the one shape of every error Kakapo answers itself.
    public static func error(_ message: String, status: Int) -> HTTP.Response {
        .json(["error": .string(message)], status: status)
    }

    /// `{"error": message}` with the error's status.
    package static func error(_ error: any HTTPResponseError) -> HTTP.Response {
        .error(error.message, status: error.status)
    }
}
