import KakapoJSON

/// A place outside the process that keeps the documents of Store collections, shared by every Kakapo
/// instance pointed at it (`--store postgres://...`). Ids come from one sequence for every collection
/// and every instance. Every call may fail (the database went away); callers answer 503 then.
public protocol SharedDocumentStore: Sendable {
    /// Where the documents are, for logs and `GET /__kakapo/store` (credentials left out).
    var location: String { get }
    /// Every document of `collection`, in insertion order.
    func all(in collection: String) async throws -> [JSONObject]
    /// The document `id` of `collection`, or nil.
    func find(id: String, in collection: String) async throws -> JSONObject?
    /// Keeps `document`, with a fresh id from the shared sequence when it has none; a document whose id
    /// is taken replaces the one there. Returns it as kept.
    func insert(_ document: JSONObject, into collection: String, idField: String) async throws -> JSONObject
    /// Keeps a new `document`, as `POST` does: nil, with nothing changed, when its id is already taken;
    /// a fresh id from the shared sequence when it has none. Returns it as kept.
    func create(_ document: JSONObject, into collection: String, idField: String) async throws -> JSONObject?
    /// Replaces document `id` (its id member kept); nil when there is none.
    func replace(id: String, with document: JSONObject, in collection: String, idField: String) async throws
        -> JSONObject?
    /// Sets the members of `patch` on document `id` under a row lock, so concurrent merges from any
    /// instance lose nothing; nil when there is none. `check` sees the merged document before it is kept
    /// and may refuse it by throwing (nothing is changed then).
    func merge(
        id: String, with patch: JSONObject, in collection: String, idField: String,
        check: (@Sendable (JSONObject) throws -> JSONObject)?
    ) async throws -> JSONObject?
    /// Removes document `id`; false when there was none.
    func delete(id: String, in collection: String) async throws -> Bool
    /// Puts `documents` in `collection` unless it already holds what these same documents seeded (by
    /// another instance, or before a restart): replicas that start later keep what was written since.
    func seed(_ collection: String, idField: String, with documents: [JSONObject]) async throws
    /// Removes every document of every collection, restarts ids at 0, then seeds `collections`.
    func reset(seeding collections: [(name: String, idField: String, documents: [JSONObject])]) async throws
    /// Everything kept, as `{"store": location, "nextId": n, "entities": {"todos": [...]}}`.
    func snapshot() async throws -> JSONValue
}

extension SharedDocumentStore {
    /// Looks the id up, then inserts. Two instances creating the same id at the same moment may both
    /// succeed (the later one replacing); a store that can refuse a taken id atomically (an
    /// `INSERT ... ON CONFLICT DO NOTHING`) should implement this itself.
    public func create(_ document: JSONObject, into collection: String, idField: String) async throws -> JSONObject? {
        if let id = StoreCollection.id(of: document, idField: idField), try await find(id: id, in: collection) != nil {
            return nil
        }
        return try await insert(document, into: collection, idField: idField)
    }
}
