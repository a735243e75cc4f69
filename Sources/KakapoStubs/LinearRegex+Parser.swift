extension LinearRegex {
    /// A recursive-descent reader of the pattern; nesting is bounded so the recursion is too.
    struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0
        var depth = 0
        static let maximumDepth = 100

        init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

        mutating func parse() throws(SyntaxError) -> Node {
            let node = try alternation()
            if index < scalars.count {
                throw SyntaxError(message: "unmatched ')' at character \(index + 1)")
            }
            return node
        }

        private var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        private mutating func alternation() throws(SyntaxError) -> Node {
            var branches = [try sequence()]
            while peek == "|" {
                index += 1
                branches.append(try sequence())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        private mutating func sequence() throws(SyntaxError) -> Node {
            var items: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                let atom = try self.atom()
                items.append(try quantified(atom))
            }
            if items.isEmpty { return .empty }
            return items.count == 1 ? items[0] : .concat(items)
        }

        private mutating func quantified(_ atom: Node) throws(SyntaxError) -> Node {
            var node = atom
            while let scalar = peek {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let counted = try counts() else { return node }
                    bounds = counted
                    index -= 1  // `counts` consumed the closing brace; the shared step below takes it again
                default: return node
                }
                index += 1
                if case .assertion = node { throw SyntaxError(message: "an anchor cannot be repeated") }
                if case .empty = node { throw SyntaxError(message: "nothing to repeat before '\(scalar)'") }
                if peek == "?" {
                    index += 1  // lazy: the same language, and only whether it matches counts here
                } else if peek == "+" {
                    throw SyntaxError(message: "possessive quantifiers (such as a*+) are not supported")
                }
                node = .repetition(node, minimum: bounds.0, maximum: bounds.1)
            }
            return node
        }

        /// `{m}`, `{m,}` or `{m,n}` at `index`, leaving `index` after the `}`; nil (and `index` unchanged)
        /// when the brace does not start one, so it is a literal `{`.
        private mutating func counts() throws(SyntaxError) -> (Int, Int?)? {
            var cursor = index + 1
            func number(_ cursor: inout Int) -> Int?? {
                var digits = ""
                while cursor < scalars.count, ("0"..."9").contains(scalars[cursor]) {
                    digits.unicodeScalars.append(scalars[cursor])
                    cursor += 1
                }
                if digits.isEmpty { return .some(nil) }
                // Long digit strings are over the limit anyway; keep them from overflowing.
                return digits.count > 6 ? .some(Int.max) : .some(Int(digits))
            }
            guard let minimum = number(&cursor) ?? nil else { return nil }
            var maximum: Int? = minimum
            if cursor < scalars.count, scalars[cursor] == "," {
                cursor += 1
                maximum = number(&cursor) ?? nil
            }
            guard cursor < scalars.count, scalars[cursor] == "}" else { return nil }
            guard minimum <= LinearRegex.maximumRepetition, (maximum ?? 0) <= LinearRegex.maximumRepetition else {
                throw SyntaxError(message: "a repetition count is at most \(LinearRegex.maximumRepetition)")
            }
            if let maximum, maximum < minimum {
                throw SyntaxError(message: "in {\(minimum),\(maximum)} the first count exceeds the second")
            }
            index = cursor + 1
            return (minimum, maximum)
        }

        private mutating func atom() throws(SyntaxError) -> Node {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case ".": return .any
            case "^": return .assertion(.textStart)
            case "$": return .assertion(.lineEnd)
            case "[": return .set(try bracket())
            case "(": return try group()
            case "\\": return try escape()
            case "*", "+", "?": throw SyntaxError(message: "nothing to repeat before '\(scalar)'")
            default: return .scalar(scalar)
            }
        }

        private mutating func group() throws(SyntaxError) -> Node {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Parser.maximumDepth else {
                throw SyntaxError(message: "groups nest at most \(Parser.maximumDepth) deep")
            }
            if peek == "?" {
                index += 1
                let rest = scalars[index...]
                if rest.starts(with: [":"]) {
                    index += 1
                } else if rest.starts(with: ["=" as Unicode.Scalar]) || rest.starts(with: ["!"])
                    || rest.starts(with: ["<", "="]) || rest.starts(with: ["<", "!"])
                {
                    throw SyntaxError(message: "lookahead and lookbehind are not supported (they need backtracking)")
                } else if rest.starts(with: ["<"]) || rest.starts(with: ["P", "<"]) || rest.starts(with: ["'"]) {
                    // A named group: the name does not matter for whether the pattern matches.
                    let close: Unicode.Scalar = rest.first == "'" ? "'" : ">"
                    guard let end = rest.dropFirst().firstIndex(of: close) else {
                        throw SyntaxError(message: "a group name is not closed")
                    }
                    index = end + 1
                } else {
                    throw SyntaxError(
                        message: "unsupported group \"(?\(String(String.UnicodeScalarView(rest.prefix(2)))))\"; "
                            + "use (...) or (?:...), and (?i) only at the start")
                }
            }
            let inner = try alternation()
            guard peek == ")" else { throw SyntaxError(message: "missing ')'") }
            index += 1
            return .group(inner)
        }

        private mutating func escape() throws(SyntaxError) -> Node {
            guard let scalar = peek else { throw SyntaxError(message: "the pattern ends with a lone backslash") }
            switch scalar {
            case "A":
                index += 1
                return .assertion(.textStart)
            case "z", "Z":
                index += 1
                return .assertion(scalar == "z" ? .textEnd : .lineEnd)
            case "b", "B":
                index += 1
                return .assertion(scalar == "b" ? .wordBoundary : .notWordBoundary)
            default:
                if let item = try classEscape() {
                    var set = ScalarClass()
                    set.items = [item]
                    return .set(set)
                }
                return .scalar(try literalEscape())
            }
        }

        /// `\d \D \w \W \s \S` at `index` (after the backslash), or nil for another escape.
        private mutating func classEscape() throws(SyntaxError) -> ScalarClass.Item? {
            guard let scalar = peek else { return nil }
            let item: ScalarClass.Item
            switch scalar {
            case "d": item = .digit(true)
            case "D": item = .digit(false)
            case "w": item = .word(true)
            case "W": item = .word(false)
            case "s": item = .space(true)
            case "S": item = .space(false)
            default: return nil
            }
            index += 1
            return item
        }

        /// The character an escape at `index` (after the backslash) stands for.
        private mutating func literalEscape() throws(SyntaxError) -> Unicode.Scalar {
            guard let scalar = peek else { throw SyntaxError(message: "the pattern ends with a lone backslash") }
            index += 1
            switch scalar {
            case "t": return "\t"
            case "n": return "\n"
            case "r": return "\r"
            case "f": return "\u{0C}"
            case "v": return "\u{0B}"
            case "e": return "\u{1B}"
            case "0": return "\0"
            case "x", "u":
                var digits = ""
                if peek == "{" {
                    index += 1
                    while let next = peek, next != "}" {
                        digits.unicodeScalars.append(next)
                        index += 1
                    }
                    guard peek == "}" else { throw SyntaxError(message: "missing '}' in \\\(scalar){...}") }
                    index += 1
                } else {
                    let count = scalar == "x" ? 2 : 4
                    guard index + count <= scalars.count else {
                        throw SyntaxError(message: "\\\(scalar) needs \(count) hexadecimal digits")
                    }
                    digits = String(String.UnicodeScalarView(scalars[index..<(index + count)]))
                    index += count
                }
                guard digits.count <= 8, let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value)
                else {
                    throw SyntaxError(message: "\\\(scalar)\(digits) is not a valid character")
                }
                return result
            case "1"..."9", "k":
                throw SyntaxError(message: "backreferences are not supported (they need backtracking)")
            default:
                if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                    throw SyntaxError(message: "unsupported escape \\\(scalar)")
                }
                return scalar
            }
        }

        /// A bracket class, `index` just after the `[`.
        private mutating func bracket() throws(SyntaxError) -> ScalarClass {
            var set = ScalarClass()
            if peek == "^" {
                set.negated = true
                index += 1
            }
            var first = true
            while true {
                guard let scalar = peek else { throw SyntaxError(message: "missing ']'") }
                if scalar == "]" && !first {
                    index += 1
                    return set
                }
                first = false
                if scalar == "[" {
                    throw SyntaxError(message: "nested classes and set operations in [...] are not supported")
                }
                let low: Unicode.Scalar
                index += 1
                if scalar == "\\" {
                    if let item = try classEscape() {
                        set.items.append(item)
                        continue
                    }
                    low = try literalEscape()
                } else {
                    low = scalar
                }
                if peek == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    var high = scalars[index]
                    index += 1
                    if high == "\\" { high = try literalEscape() }
                    guard low.value <= high.value else {
                        throw SyntaxError(message: "the range \(low)-\(high) is backwards")
                    }
                    set.items.append(.range(low.value...high.value))
                } else {
                    set.items.append(.range(low.value...low.value))
                }
            }
        }
    }
}
