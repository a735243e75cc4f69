/// A GraphQL executable document as matching sees it: its tokens joined by single spaces (whitespace,
/// commas and comments do not count; strings and block strings are kept exactly; everything else counts)
/// and the operations it defines, in order.
///
/// ```swift
/// let document = GraphQLDocument("query GetUser($id: ID!) {\n  user(id: $id) { name, email }\n}")!
/// document.normalized   // "query GetUser ( $ id : ID ! ) { user ( id : $ id ) { name email } }"
/// document.operations   // [query GetUser]
/// ```
public struct GraphQLDocument: Sendable {
    /// One operation a document defines.
    public struct Operation: Sendable, Equatable {
        /// Query, mutation or subscription.
        public let kind: GraphQLOperationKind
        /// Nil for an anonymous operation.
        public let name: String?
    }

    /// The document as sent.
    public let text: String
    /// The tokens that count, joined by single spaces.
    public let normalized: String
    /// The operations (not fragments) the document defines, in order; at most `operationLimit` of them.
    public let operations: [Operation]

    /// How many operations a document's list keeps: a document of thousands of `{}` is still read, its
    /// operations past these are only counted.
    public static let operationLimit = 64

    /// How many operations the document defines, including those past `operationLimit`.
    public let operationCount: Int

    /// Reads `text`; nil when it is not an executable document (an unterminated string, brackets that do
    /// not close, a top-level definition that is neither an operation nor a fragment, or no definition), so
    /// a search API's `{"query": "red shoes"}` is not taken for GraphQL.
    public init?(_ text: String) {
        var tokenizer = GraphQLTokenizer(Array(text.utf8))
        var normalized: [UInt8] = []
        normalized.reserveCapacity(tokenizer.bytes.count)
        var scan = OperationScan()
        do {
            while let token = try tokenizer.next() {
                if !normalized.isEmpty { normalized.append(UInt8(ascii: " ")) }
                normalized += tokenizer.bytes[token.range]
                guard scan.read(token, in: tokenizer.bytes) else { return nil }
            }
        } catch {
            return nil
        }
        guard scan.isComplete else { return nil }
        self.text = text
        self.normalized = String(decoding: normalized, as: UTF8.self)
        self.operations = scan.operations
        self.operationCount = scan.operationCount
    }

    /// The operation named `name`, or the only one when `name` is nil; nil when there is no such operation.
    public func operation(named name: String?) -> Operation? {
        guard let name else { return operationCount == 1 ? operations.first : nil }
        return operations.first { $0.name == name }
    }

    /// Where this document first differs from `other` once normalised: the line and column of its first
    /// token that differs (or of its end, when `other` has more tokens); nil when they are the same.
    public func firstDifference(from other: GraphQLDocument) -> (line: Int, column: Int)? {
        var mine = GraphQLTokenizer(Array(text.utf8))
        var theirs = GraphQLTokenizer(Array(other.text.utf8))
        // Both documents were read once already, so neither throws here.
        while true {
            let a = try? mine.next()
            let b = try? theirs.next()
            switch (a, b) {
            case (nil, nil): return nil
            case (let a?, let b?):
                if !mine.bytes[a.range].elementsEqual(theirs.bytes[b.range]) { return (a.line, a.column) }
            case (let a?, nil): return (a.line, a.column)
            case (nil, _?): return (mine.line, mine.column)
            }
        }
    }
}

/// Follows the top level of a document token by token to find its operations: a definition starts with
/// `query`, `mutation`, `subscription`, `fragment` or `{` (an anonymous query), and ends when the brackets
/// its selection set opened are closed. Nesting is a counter, not a stack or a recursion.
private struct OperationScan {
    private enum State {
        /// Between definitions.
        case top
        /// After `query`/`mutation`/`subscription`: the next name, if any, names the operation.
        case afterKeyword(GraphQLOperationKind)
        /// In a definition's header (variables, directives, a fragment's type condition).
        case header
        /// Inside the selection set.
        case body
    }

    private var state = State.top
    /// Open brackets: in the header those of variable definitions, in the body those of the selection set.
    private var depth = 0
    private(set) var operations: [GraphQLDocument.Operation] = []
    private(set) var operationCount = 0
    private var definitions = 0

    var isComplete: Bool {
        if case .top = state { return definitions > 0 }
        return false
    }

    /// Takes in the next token; false when the document cannot be an executable document.
    mutating func read(_ token: GraphQLTokenizer.Token, in bytes: [UInt8]) -> Bool {
        let first = bytes[token.range.lowerBound]
        let opens =
            token.kind == .punctuator
            && (first == UInt8(ascii: "{") || first == UInt8(ascii: "(") || first == UInt8(ascii: "["))
        let closes =
            token.kind == .punctuator
            && (first == UInt8(ascii: "}") || first == UInt8(ascii: ")") || first == UInt8(ascii: "]"))
        switch state {
        case .top:
            definitions += 1
            if token.kind == .punctuator, first == UInt8(ascii: "{") {
                add(GraphQLDocument.Operation(kind: .query, name: nil))
                state = .body
                depth = 1
                return true
            }
            guard token.kind == .name else { return false }
            let word = String(decoding: bytes[token.range], as: UTF8.self)
            if let kind = GraphQLOperationKind(rawValue: word) {
                state = .afterKeyword(kind)
            } else if word == "fragment" {
                state = .header
            } else {
                return false
            }
            return true
        case .afterKeyword(let kind):
            if token.kind == .name {
                add(GraphQLDocument.Operation(kind: kind, name: String(decoding: bytes[token.range], as: UTF8.self)))
                state = .header
                return true
            }
            add(GraphQLDocument.Operation(kind: kind, name: nil))
            state = .header
            return read(token, in: bytes)
        case .header:
            if depth == 0, token.kind == .punctuator, first == UInt8(ascii: "{") {
                state = .body
                depth = 1
            } else if opens {
                depth += 1
            } else if closes {
                depth -= 1
                if depth < 0 { return false }
            }
            return true
        case .body:
            if opens {
                depth += 1
            } else if closes {
                depth -= 1
                if depth == 0 { state = .top }
            }
            return true
        }
    }

    private mutating func add(_ operation: GraphQLDocument.Operation) {
        operationCount += 1
        if operations.count < GraphQLDocument.operationLimit { operations.append(operation) }
    }
}
