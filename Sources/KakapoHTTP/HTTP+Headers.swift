extension HTTP {
    /// An ordered list of header fields. Names keep their original spelling and order; lookups ignore case.
    /// Repeated fields (two `Set-Cookie`) stay separate entries.
    public struct Headers: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
        /// One header field as it appeared on the wire.
        public struct Field: Hashable, Sendable {
            public var name: String
            public var value: String
            public init(name: String, value: String) {
                self.name = name
                self.value = value
            }
        }

        public private(set) var fields: [Field]

        public init(_ fields: [Field] = []) { self.fields = fields }

        public init(_ pairs: [(String, String)]) {
            self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
        }

        public init(dictionaryLiteral elements: (String, String)...) {
            self.init(elements)
        }

        public var count: Int { fields.count }
        public var isEmpty: Bool { fields.isEmpty }

        public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

        /// The first value for `name`, compared case-insensitively.
        public subscript(name: String) -> String? {
            fields.first { $0.name.caseInsensitiveEquals(name) }?.value
        }

        /// Every value for `name`, in order.
        public func values(for name: String) -> [String] {
            fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
        }

        public func contains(_ name: String) -> Bool {
            fields.contains { $0.name.caseInsensitiveEquals(name) }
        }

        /// Appends a field, keeping any existing fields with the same name.
        public mutating func add(name: String, value: String) {
            fields.append(Field(name: name, value: value))
        }

        /// Replaces every field named `name` by one field, at the position of the first one (or at the end).
        public mutating func replaceOrAdd(name: String, value: String) {
            guard let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
                add(name: name, value: value)
                return
            }
            fields[index].value = value
            var position = fields.count - 1
            while position > index {
                if fields[position].name.caseInsensitiveEquals(name) { fields.remove(at: position) }
                position -= 1
            }
        }

        /// Removes every field named `name`.
        public mutating func remove(name: String) {
            fields.removeAll { $0.name.caseInsensitiveEquals(name) }
        }

        /// Removes the fields for which `shouldRemove` returns true.
        public mutating func removeAll(where shouldRemove: (Field) -> Bool) {
            fields.removeAll(where: shouldRemove)
        }
    }
}

extension String {
    /// ASCII case-insensitive comparison, which is what HTTP field names need.
    @inlinable
    public func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x + 32 : x
            let ly = (y >= 65 && y <= 90) ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }
}

extension HTTP.Headers {
    /// Whether `Content-Type` announces server-sent events (`text/event-stream`): an answer Kakapo
    /// streams through and records event by event, with timing.
    public var announcesEventStream: Bool {
        guard let type = self["Content-Type"] else { return false }
        return type.utf8.count >= 17 && type.lowercased().hasPrefix("text/event-stream")
    }
}
