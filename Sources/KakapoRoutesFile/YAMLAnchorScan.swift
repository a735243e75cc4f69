import CYaml

/// Finds the first anchor (`&name`) or alias (`*name`) in YAML text by reading libyaml's parser events,
/// which costs time linear in the text and builds nothing. A routes file has no need of either, and an
/// alias is how a small file becomes a huge document ("billion laughs"): Yams's composer shares aliased
/// nodes but hashes mapping keys in full, and any walk of the tree expands them. So a file is scanned and
/// refused before it is composed.
enum YAMLAnchorScan {
    /// One anchor or alias and where it starts (1-based line and column).
    struct Finding {
        let isAlias: Bool
        let name: String
        let line: Int
        let column: Int
    }

    /// The first anchor or alias in `text`; nil when there is none or the text is not valid YAML (the
    /// composer then reports the syntax error).
    static func first(in text: String) -> Finding? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> Finding? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                let anchor: UnsafeMutablePointer<yaml_char_t>?
                switch event.type {
                case YAML_STREAM_END_EVENT: return nil
                case YAML_ALIAS_EVENT: anchor = event.data.alias.anchor
                case YAML_SCALAR_EVENT: anchor = event.data.scalar.anchor
                case YAML_SEQUENCE_START_EVENT: anchor = event.data.sequence_start.anchor
                case YAML_MAPPING_START_EVENT: anchor = event.data.mapping_start.anchor
                default: anchor = nil
                }
                if let anchor {
                    return Finding(
                        isAlias: event.type == YAML_ALIAS_EVENT, name: String(cString: anchor),
                        line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                }
            }
        }
    }
}
