import KakapoJSON

extension JSONValue {
    /// This object or array with `replace` applied to each member's value (with its key) or element
    /// (with no key), copied only when a child changed: `replace` returns nil to keep a child as it is,
    /// and the walk returns nil when it kept every child (and for values with no children).
    func replacingChildren(_ replace: (_ key: String?, _ child: JSONValue) -> JSONValue?) -> JSONValue? {
        switch self {
        case .object(let object):
            var members: [(String, JSONValue)]?
            for (index, member) in object.members.enumerated() {
                guard let replaced = replace(member.key, member.value) else { continue }
                if members == nil { members = object.members.map { ($0.key, $0.value) } }
                members?[index].1 = replaced
            }
            return members.map { .object(JSONObject($0)) }
        case .array(let elements):
            var copy: [JSONValue]?
            for (index, element) in elements.enumerated() {
                guard let replaced = replace(nil, element) else { continue }
                if copy == nil { copy = elements }
                copy?[index] = replaced
            }
            return copy.map { .array($0) }
        default:
            return nil
        }
    }
}
