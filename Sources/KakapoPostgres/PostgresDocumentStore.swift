import KakapoJSON
import KakapoStore
import Logging
import NIOCore
import PostgresNIO

/// The documents of Store resources in PostgreSQL, shared by every Kakapo instance pointed at the same
/// database. Documents are kept as the JSON text Kakapo writes (so member order and number spelling
/// survive), by collection and id, in insertion order; ids come from one sequence; replacing and merging
/// happen in a transaction holding the row's lock; seeding and resets take an advisory lock, so replicas
/// starting together seed once. The schema is created on first use and versioned in `kakapo_meta`.
///
/// ```swift
/// let shared = try await PostgresDocumentStore.connect(PostgresURL("postgres://kakapo@127.0.0.1:5432/mocks"))
/// var configuration = ProxyConfiguration(port: 8080)
/// configuration.sharedStore = shared
/// ```
public final class PostgresDocumentStore: SharedDocumentStore {
    /// The schema version this Kakapo writes and reads.
    public static let schemaVersion = 1
    public let url: PostgresURL
    public var location: String { url.description }
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>

    private init(url: PostgresURL, client: PostgresClient, logger: Logger) {
        self.url = url
        self.client = client
        self.logger = logger
        running = Task { await client.run() }
    }

    deinit { running.cancel() }

    /// Connects to `url` once to check that the database is there and takes the credentials, creates or
    /// checks the schema, then keeps a pool of up to `maximumConnections` for requests.
    public static func connect(
        _ url: PostgresURL, maximumConnections: Int = 16, logger: Logger = Logger(label: "kakapo.postgres")
    ) async throws(SharedStoreError) -> PostgresDocumentStore {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: connectionConfiguration(url), id: 0, logger: logger)
        } catch {
            throw SharedStoreError("cannot connect to \(url): \(reason(error))")
        }
        do {
            try await createSchema(on: connection, logger: logger)
            try await connection.close()
        } catch let error as SharedStoreError {
            try? await connection.close()
            throw error
        } catch {
            try? await connection.close()
            throw SharedStoreError("cannot set up the store's tables in \(url): \(reason(error))")
        }
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(3)
        return PostgresDocumentStore(url: url, client: PostgresClient(configuration: configuration), logger: logger)
    }

    /// Stops the pool.
    public func shutdown() {
        running.cancel()
    }

    private static func connectionConfiguration(_ url: PostgresURL) -> PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: .disable)
    }

    /// What went wrong, in the server's words when it said something.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    // MARK: - Schema

    private static let schemaLock: Int64 = 0x6B_616B_6170_6F01  // "kakapo" 1

    static func createSchema(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(schemaLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS kakapo_meta (key text PRIMARY KEY, value text NOT NULL)", logger: logger)
            var version: String?
            for try await value in try await connection.query(
                "SELECT value FROM kakapo_meta WHERE key = 'schema_version'", logger: logger
            ).decode(String.self) {
                version = value
            }
            if let version {
                guard version == String(schemaVersion) else {
                    throw SharedStoreError(
                        "the database holds a Kakapo store of schema version \(version); this Kakapo knows version \(schemaVersion)"
                    )
                }
                return
            }
            try await connection.query(
                "CREATE SEQUENCE IF NOT EXISTS kakapo_ids MINVALUE 0 START WITH 0", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS kakapo_documents (
                    collection text NOT NULL, id text NOT NULL, position bigserial NOT NULL, document text NOT NULL,
                    PRIMARY KEY (collection, id))
                """, logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS kakapo_seeds (collection text PRIMARY KEY, seed text NOT NULL)",
                logger: logger)
            try await connection.query(
                "INSERT INTO kakapo_meta (key, value) VALUES ('schema_version', \(String(schemaVersion)))",
                logger: logger)
        }
    }

    // MARK: - Documents

    public func all(in collection: String) async throws -> [JSONObject] {
        try await documents(
            client.query(
                "SELECT document FROM kakapo_documents WHERE collection = \(collection) ORDER BY position",
                logger: logger))
    }

    public func find(id: String, in collection: String) async throws -> JSONObject? {
        try await documents(
            client.query(
                "SELECT document FROM kakapo_documents WHERE collection = \(collection) AND id = \(id)", logger: logger)
        ).first
    }

    public func insert(_ document: JSONObject, into collection: String, idField: String) async throws -> JSONObject {
        try await client.withConnection { connection in
            try await self.insert(document, into: collection, idField: idField, on: connection)
        }
    }

    /// Keeps a new `document` in one statement (`ON CONFLICT DO NOTHING`), so two instances posting the same
    /// id at the same moment cannot both succeed: nil, with nothing changed, when the id is taken.
    public func create(_ document: JSONObject, into collection: String, idField: String) async throws -> JSONObject? {
        guard let id = StoreCollection.id(of: document, idField: idField) else {
            return try await insert(document, into: collection, idField: idField)
        }
        return try await client.withConnection { connection in
            try await self.insertUnlessTaken(document, id: id, into: collection, on: connection) ? document : nil
        }
    }

    public func replace(id: String, with document: JSONObject, in collection: String, idField: String) async throws
        -> JSONObject?
    {
        try await update(id: id, in: collection) { existing in
            var replaced = document
            replaced[idField] = existing[idField]
            return replaced
        }
    }

    public func merge(
        id: String, with patch: JSONObject, in collection: String, idField: String,
        check: (@Sendable (JSONObject) throws -> JSONObject)?
    ) async throws -> JSONObject? {
        try await update(id: id, in: collection) { existing in
            var merged = existing
            let kept = merged[idField]
            for (key, value) in patch { merged[key] = value }
            merged[idField] = kept
            return try check?(merged) ?? merged
        }
    }

    public func delete(id: String, in collection: String) async throws -> Bool {
        var deleted = false
        for try await _ in try await client.query(
            "DELETE FROM kakapo_documents WHERE collection = \(collection) AND id = \(id) RETURNING id", logger: logger
        ).decode(String.self) {
            deleted = true
        }
        return deleted
    }

    public func seed(_ collection: String, idField: String, with documents: [JSONObject]) async throws {
        let seed = Self.seedText(idField: idField, documents: documents)
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(collection)))", logger: self.logger)
            var recorded: String?
            for try await text in try await connection.query(
                "SELECT seed FROM kakapo_seeds WHERE collection = \(collection)", logger: self.logger
            ).decode(String.self) {
                recorded = text
            }
            guard recorded != seed else { return }
            try await connection.query(
                "DELETE FROM kakapo_documents WHERE collection = \(collection)", logger: self.logger)
            try await self.put(documents, into: collection, idField: idField, seed: seed, on: connection)
        }
    }

    public func reset(seeding collections: [(name: String, idField: String, documents: [JSONObject])]) async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLock))", logger: self.logger)
            try await connection.query("DELETE FROM kakapo_documents", logger: self.logger)
            try await connection.query("DELETE FROM kakapo_seeds", logger: self.logger)
            try await connection.query("ALTER SEQUENCE kakapo_ids RESTART WITH 0", logger: self.logger)
            for collection in collections {
                let seed = Self.seedText(idField: collection.idField, documents: collection.documents)
                try await self.put(
                    collection.documents, into: collection.name, idField: collection.idField, seed: seed, on: connection
                )
            }
        }
    }

    public func snapshot() async throws -> JSONValue {
        var entities = JSONObject()
        for try await (collection, text) in try await client.query(
            "SELECT collection, document FROM kakapo_documents ORDER BY collection, position", logger: logger
        ).decode((String, String).self) {
            var list = entities[collection]?.arrayValue ?? []
            list.append((try? JSONParser.parse(Array(text.utf8))) ?? .string(text))
            entities[collection] = .array(list)
        }
        var nextID = 0
        for try await (last, called) in try await client.query(
            "SELECT last_value, is_called FROM kakapo_ids", logger: logger
        ).decode((Int, Bool).self) {
            nextID = called ? last + 1 : last
        }
        return ["store": .string(location), "nextId": .number(JSONNumber(nextID)), "entities": .object(entities)]
    }

    // MARK: - Helpers

    /// Runs `body` in a transaction; an error `body` throws comes out as itself (a refused document stays
    /// a 400, not a database failure).
    private func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> sending Result)
        async throws -> Result
    {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    private func documents(_ rows: PostgresRowSequence) async throws -> [JSONObject] {
        var documents: [JSONObject] = []
        for try await text in rows.decode(String.self) {
            if case .object(let object) = try JSONParser.parse(Array(text.utf8)) { documents.append(object) }
        }
        return documents
    }

    /// Reads document `id` under its row lock, lets `change` make the new one, and writes it, in one
    /// transaction. Nil when there is no such document.
    private func update(id: String, in collection: String, _ change: @Sendable (JSONObject) throws -> JSONObject)
        async throws -> JSONObject?
    {
        try await transaction { connection in
            let rows = try await connection.query(
                "SELECT document FROM kakapo_documents WHERE collection = \(collection) AND id = \(id) FOR UPDATE",
                logger: self.logger)
            guard let existing = try await self.documents(rows).first else { return nil }
            let updated = try change(existing)
            let text = String(decoding: JSONWriter().write(.object(updated)), as: UTF8.self)
            try await connection.query(
                "UPDATE kakapo_documents SET document = \(text) WHERE collection = \(collection) AND id = \(id)",
                logger: self.logger)
            return updated
        }
    }

    /// Inserts `document`: with its own id it replaces what has that id; without one it takes the next
    /// id from the sequence that no document of the collection has.
    private func insert(
        _ document: JSONObject, into collection: String, idField: String, on connection: PostgresConnection
    )
        async throws -> JSONObject
    {
        if let id = StoreCollection.id(of: document, idField: idField) {
            let text = String(decoding: JSONWriter().write(.object(document)), as: UTF8.self)
            try await connection.query(
                """
                INSERT INTO kakapo_documents (collection, id, document) VALUES (\(collection), \(id), \(text))
                ON CONFLICT (collection, id) DO UPDATE SET document = EXCLUDED.document
                """, logger: logger)
            return document
        }
        while true {
            var fresh = document
            var next = 0
            for try await value in try await connection.query("SELECT nextval('kakapo_ids')", logger: logger).decode(
                Int.self)
            {
                next = value
            }
            let id = String(next)
            fresh[idField] = .string(id)
            if try await insertUnlessTaken(fresh, id: id, into: collection, on: connection) { return fresh }
        }
    }

    /// Inserts `document` as `id` in one statement, unless a document of the collection has that id: false
    /// then, with nothing changed.
    private func insertUnlessTaken(
        _ document: JSONObject, id: String, into collection: String, on connection: PostgresConnection
    ) async throws -> Bool {
        let text = String(decoding: JSONWriter().write(.object(document)), as: UTF8.self)
        var inserted = false
        for try await _ in try await connection.query(
            """
            INSERT INTO kakapo_documents (collection, id, document) VALUES (\(collection), \(id), \(text))
            ON CONFLICT (collection, id) DO NOTHING RETURNING id
            """, logger: logger
        ).decode(String.self) {
            inserted = true
        }
        return inserted
    }

    private func put(
        _ documents: [JSONObject], into collection: String, idField: String, seed: String,
        on connection: PostgresConnection
    ) async throws {
        for document in documents {
            _ = try await insert(document, into: collection, idField: idField, on: connection)
        }
        try await connection.query(
            """
            INSERT INTO kakapo_seeds (collection, seed) VALUES (\(collection), \(seed))
            ON CONFLICT (collection) DO UPDATE SET seed = EXCLUDED.seed
            """, logger: logger)
    }

    /// What identifies a seed: its id member and documents, as JSON text.
    static func seedText(idField: String, documents: [JSONObject]) -> String {
        String(
            decoding: JSONWriter().write([
                "idField": .string(idField), "documents": .array(documents.map { .object($0) }),
            ]),
            as: UTF8.self)
    }
}
