import KakapoHTTP
import KakapoJSON

/// A value in a parsed cassette that has the wrong shape, with the path to it.
/// `CassetteFile` turns it into a `CassetteError` with a line and column.
struct CassetteDecodingError: KakapoError {
    let path: [JSONPathComponent]
    let message: String

    var code: ErrorCode { .invalid }
}
