/// Bounds on what hostile input can make the reader and writer do.
enum ProtoLimits {
    /// The deepest nesting of messages (and groups, and JSON objects written as messages) accepted, so
    /// input cannot exhaust the stack; real schemas rarely pass 20.
    static let maximumDepth = 100
}
