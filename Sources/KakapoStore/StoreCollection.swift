import KakapoJSON

/// A named collection of JSON objects in a `Store`: the model behind resources declared in a routes file.
/// A document's id is the string form of its `idField` (`1` and `"1"` are the same document). New ids follow
/// the kind of the collection's ids: numbers after the highest number, or strings from the store's one
/// counter (so typed entities and such documents never share an id). Every call is atomic.
///
/// ```swift
/// let todos = store.collection("todos")
/// let created = try todos.create(["title": "write docs"])   // {"title":"write docs","id":"0"}
/// todos.merge(id: "0", with: ["done": true])            // {"title":"write docs","id":"0","done":true}
/// ```
public struct StoreCollection: Sendable {
    public let store: Store
    public let name: String
    /// The member that holds the id; `id` unless the resource says otherwise.
    public let idField: String

    /// The id of `document` as a string, or nil when it has none that can name a document.
    public func id(of document: JSONObject) -> String? {
        StoreCollection.id(of: document, idField: idField)
    }

    /// The string form of `document[idField]` (a string, or a number as written), or nil when it has none
    /// that can name a document. Every store, in memory or shared, names documents this way.
    public static func id(of document: JSONObject, idField: String) -> String? {
        switch document[idField] {
        case .string(let text)?: return text
        case .number(let number)?: return number.literal
        default: return nil
        }
    }

    /// Every document, in insertion order.
    public func all() -> [JSONObject] {
        store.state.withLock { $0.collections[name]?.all ?? [] }
    }

    /// The document with `id`, or nil.
    public func find(id: String) -> JSONObject? {
        store.state.withLock { $0.collections[name]?.byID[id] }
    }

    /// Keeps `document`, giving it a fresh id when it has none; returns it as kept.
    /// A document whose id is already taken replaces the one there (seeding); `create(_:)` refuses instead.
    @discardableResult
    public func insert(_ document: JSONObject) -> JSONObject {
        store.state.withLock { insert(document, into: &$0) }
    }

    /// Keeps a new `document`, as `POST` does: one whose id is already taken is refused with a `conflict`
    /// error and nothing changes. A document without an id gets a fresh one of the kind the collection's
    /// first document had: a number (the highest number id ever kept, plus one) or a string (the next
    /// free one from the store's counter, `"0"`, `"1"`, ...).
    public func create(_ document: JSONObject) throws(StoreError) -> JSONObject {
        try store.state.withLock { (state) throws(StoreError) -> JSONObject in
            if let id = self.id(of: document), state.collections[name]?.byID[id] != nil {
                throw StoreError(
                    code: .conflict,
                    message: "\(name) already holds an entity with \(idField) \"\(id)\"; "
                        + "change it with PUT or PATCH, or POST without an \(idField) to get a new one")
            }
            return insert(document, into: &state)
        }
    }

    private func insert(_ document: JSONObject, into state: inout Store.State) -> JSONObject {
        var document = document
        var table = state.collections[name] ?? DocumentTable()
        let id: String
        if let given = self.id(of: document) {
            id = given
        } else if let number = table.nextNumber() {
            id = String(number)
            document[idField] = .number(JSONNumber(number))
        } else {
            id = state.freshID { table.byID[$0] != nil }
            document[idField] = .string(id)
        }
        table.put(document, id: id, idField: idField)
        state.collections[name] = table
        return document
    }

    /// Replaces the whole document `id` (its id member is kept); nil when there is none.
    public func replace(id: String, with document: JSONObject) -> JSONObject? {
        store.state.withLock { state in
            guard let existing = state.collections[name]?.byID[id] else { return nil }
            var replaced = document
            replaced[idField] = existing[idField]
            state.collections[name]!.put(replaced, id: id, idField: idField)
            return replaced
        }
    }

    /// Sets the members of `patch` on document `id`, keeping the others, in one step: two merges at once
    /// never lose each other's members. Nil when there is no such document.
    public func merge(id: String, with patch: JSONObject) -> JSONObject? {
        store.state.withLock { state in
            guard var merged = state.collections[name]?.byID[id] else { return nil }
            let kept = merged[idField]
            for (key, value) in patch { merged[key] = value }
            merged[idField] = kept
            state.collections[name]!.put(merged, id: id, idField: idField)
            return merged
        }
    }

    /// Removes document `id`; false when there was none.
    @discardableResult
    public func delete(id: String) -> Bool {
        store.state.withLock { $0.collections[name]?.remove(id) ?? false }
    }

    /// Replaces the collection's contents with `documents` (ids given where missing), in order, in one step.
    public func reset(to documents: [JSONObject]) {
        store.state.withLock { state in
            state.collections[name] = DocumentTable()
            for document in documents { _ = insert(document, into: &state) }
        }
    }
}

extension Store {
    /// The collection `name` (created empty on first write).
    public func collection(_ name: String, idField: String = "id") -> StoreCollection {
        StoreCollection(store: self, name: name, idField: idField)
    }
}
