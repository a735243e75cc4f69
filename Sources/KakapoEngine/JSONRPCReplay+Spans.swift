extension JSONRPCReplay {
    /// Where the members and elements of JSON text lie, found without building values: for text the parser
    /// has already accepted, so every scan ends within `end` and every step moves forward.
    struct Spans {
        let bytes: [UInt8]
        let end: Int

        func skippingWhitespace(from start: Int) -> Int {
            var index = start
            while index < end,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
            {
                index += 1
            }
            return index
        }

        /// Whether the key whose characters (between its quotes) lie in `range` is `name`, written without escapes.
        func isKey(_ range: Range<Int>, _ name: String) -> Bool { bytes[range].elementsEqual(name.utf8) }

        /// The key (between its quotes) and value of each member of the object that starts at `start`.
        func members(ofObjectAt start: Int) -> [(key: Range<Int>, value: Range<Int>)] {
            var members: [(key: Range<Int>, value: Range<Int>)] = []
            var index = skippingWhitespace(from: start + 1)
            while index < end, bytes[index] == UInt8(ascii: "\"") {
                let keyEnd = endOfString(at: index)
                let valueStart = skippingWhitespace(from: skippingWhitespace(from: keyEnd) + 1)
                let valueEnd = endOfValue(at: valueStart)
                guard valueEnd > valueStart else { break }
                members.append((key: (index + 1)..<max(index + 1, keyEnd - 1), value: valueStart..<valueEnd))
                index = skippingWhitespace(from: valueEnd)
                guard index < end, bytes[index] == UInt8(ascii: ",") else { break }
                index = skippingWhitespace(from: index + 1)
            }
            return members
        }

        /// Where each element of the array that starts at `start` lies.
        func elements(ofArrayAt start: Int) -> [Range<Int>] {
            var elements: [Range<Int>] = []
            var index = skippingWhitespace(from: start + 1)
            while index < end, bytes[index] != UInt8(ascii: "]") {
                let valueEnd = endOfValue(at: index)
                guard valueEnd > index else { break }
                elements.append(index..<valueEnd)
                index = skippingWhitespace(from: valueEnd)
                guard index < end, bytes[index] == UInt8(ascii: ",") else { break }
                index = skippingWhitespace(from: index + 1)
            }
            return elements
        }

        /// Just past the value that starts at `start`.
        func endOfValue(at start: Int) -> Int {
            guard start < end else { return end }
            switch bytes[start] {
            case UInt8(ascii: "\""):
                return endOfString(at: start)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                var index = start
                while index < end {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        index = endOfString(at: index)
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return index + 1 }
                    default: break
                    }
                    index += 1
                }
                return end
            default:
                var index = start
                while index < end, !Self.endsScalar(bytes[index]) { index += 1 }
                return index
            }
        }

        /// Just past the closing quote of the string that starts at `start`.
        private func endOfString(at start: Int) -> Int {
            var index = start + 1
            while index < end {
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 2
                } else if bytes[index] == UInt8(ascii: "\"") {
                    return index + 1
                } else {
                    index += 1
                }
            }
            return end
        }

        private static func endsScalar(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == 0x20
                || byte == 0x0A || byte == 0x0D || byte == 0x09
        }
    }
}
