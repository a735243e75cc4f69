/// A gRPC status code (`grpc-status`), as the gRPC spec numbers them.
public struct GRPCStatus: Hashable, Sendable, CustomStringConvertible {
    /// The number carried in `grpc-status`.
    public let code: Int

    public init(code: Int) { self.code = code }

    public static let ok = GRPCStatus(code: 0)
    public static let cancelled = GRPCStatus(code: 1)
    public static let unknown = GRPCStatus(code: 2)
    public static let invalidArgument = GRPCStatus(code: 3)
    public static let deadlineExceeded = GRPCStatus(code: 4)
    public static let notFound = GRPCStatus(code: 5)
    public static let alreadyExists = GRPCStatus(code: 6)
    public static let permissionDenied = GRPCStatus(code: 7)
    public static let resourceExhausted = GRPCStatus(code: 8)
    public static let failedPrecondition = GRPCStatus(code: 9)
    public static let aborted = GRPCStatus(code: 10)
    public static let outOfRange = GRPCStatus(code: 11)
    public static let unimplemented = GRPCStatus(code: 12)
    public static let `internal` = GRPCStatus(code: 13)
    public static let unavailable = GRPCStatus(code: 14)
    public static let dataLoss = GRPCStatus(code: 15)
    public static let unauthenticated = GRPCStatus(code: 16)

    private static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// The code's name (`NOT_FOUND`), or nil for a number the spec does not define.
    public var name: String? { Self.names.indices.contains(code) ? Self.names[code] : nil }

    /// `5 (NOT_FOUND)`, or the number alone when it has no name.
    public var description: String { name.map { "\(code) (\($0))" } ?? String(code) }

    /// The status a `grpc-status` value holds; nil when it is not a decimal number of at most 9 digits.
    public init?(field: String) {
        guard !field.isEmpty, field.utf8.count <= 9, field.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let code = Int(field)
        else { return nil }
        self.code = code
    }

    /// The status an HTTP status maps to when a gRPC call gets a non-gRPC answer (the gRPC spec's
    /// "HTTP to gRPC Status Code Mapping").
    public init(httpStatus: Int) {
        switch httpStatus {
        case 400: self = .internal
        case 401: self = .unauthenticated
        case 403: self = .permissionDenied
        case 404: self = .unimplemented
        case 429, 502, 503, 504: self = .unavailable
        default: self = .unknown
        }
    }
}
