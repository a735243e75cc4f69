import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// Converts between `Cassette` and its JSON form (documented field by field in `cassettes/README.md`).
package enum CassetteCodec {
    /// The JSON value of `cassette`, with members in a fixed order so saving is deterministic.
    package static func encode(_ cassette: Cassette) -> JSONValue {
        .object([
            "version": .number(JSONNumber(cassette.version)),
            "interactions": .array(cassette.interactions.map { encode($0) }),
        ])
    }

    /// The bytes of the cassette file: readable layout and a trailing newline. Equal to
    /// `JSONWriter(layout: .readable).write(encode(cassette))` plus a newline, but built from one chunk per
    /// interaction, so a recording session encodes each interaction once.
    package static func encodeFile(_ cassette: Cassette) -> [UInt8] {
        assemble(version: cassette.version, chunks: cassette.interactions.map(encodeChunk))
    }

    /// The file's bytes as `encodeFile(_:)` makes them, gRPC messages written as JSON where `schema` allows.
    package static func encodeFile(_ cassette: Cassette, schema: GRPCSchema?) -> [UInt8] {
        assemble(version: cassette.version, chunks: cassette.interactions.map { encodeChunk($0, schema: schema) })
    }

    /// One interaction as it appears in the file (indented for its place in the `interactions` array).
    static func encodeChunk(_ interaction: Interaction) -> [UInt8] { encodeChunk(interaction, schema: nil) }

    /// One interaction as it appears in the file; with `schema`, gRPC messages it knows are written as JSON.
    static func encodeChunk(_ interaction: Interaction, schema: GRPCSchema?) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter(layout: .readable).write(encode(interaction, schema: schema), level: 2, into: &bytes)
        return bytes
    }

    /// The file from its interaction chunks.
    static func assemble(version: Int, chunks: [[UInt8]]) -> [UInt8] {
        var bytes = fileHead(version: version)
        if chunks.isEmpty {
            bytes += emptyList
            return bytes
        }
        bytes.reserveCapacity(chunks.reduce(64) { $0 + $1.count + 6 })
        bytes += listOpen
        for (offset, chunk) in chunks.enumerated() {
            bytes += itemSeparator(first: offset == 0)
            bytes += chunk
        }
        bytes += listClose
        return bytes
    }

    // The file around its interaction chunks; `CassetteFold` writes the same pieces.

    /// The file up to the `interactions` list.
    static func fileHead(version: Int) -> [UInt8] { Array("{\n  \"version\": \(version),\n  \"interactions\": ".utf8) }
    /// The rest of a file without interactions.
    static let emptyList = Array("[]\n}\n".utf8)
    static let listOpen = Array("[".utf8)
    /// What comes before each interaction's chunk.
    static func itemSeparator(first: Bool) -> [UInt8] { first ? Array("\n    ".utf8) : Array(",\n    ".utf8) }
    /// The rest of the file after the last interaction.
    static let listClose = Array("\n  ]\n}\n".utf8)

    static func encode(_ interaction: Interaction, schema: GRPCSchema? = nil) -> JSONValue {
        var request: JSONObject = [
            "method": .string(interaction.request.method.rawValue),
            // Absolute (`https://api.example.com/users`) when the origin is known: a forward proxy's cassette
            // holds several hosts.
            "url": .string(interaction.request.url),
            "headers": encode(interaction.request.headers),
        ]
        if let grpc = encodeGRPCRequest(interaction, schema: schema) {
            request["grpc"] = grpc
        } else if let body = BodyCoding.encode(interaction.request.body, headers: interaction.request.headers) {
            request["body"] = body
        }
        let outcome = grpcOutcome(interaction)
        var response: JSONObject = [
            "status": .number(JSONNumber(interaction.response.status)),
            "headers": encode(outcome.headers),
        ]
        if let version = interaction.response.version { response["httpVersion"] = .string(version) }
        if !outcome.trailers.isEmpty { response["trailers"] = encode(outcome.trailers) }
        if let grpc = encodeGRPCResponse(interaction, schema: schema) {
            response["grpc"] = grpc
            if interaction.abandoned && interaction.chunks != nil { response["abandoned"] = true }
        } else if let chunks = interaction.chunks {
            // One entry per event, text when it is text: what a person edits is what is replayed.
            response["chunks"] = .array(
                chunks.map { chunk in
                    var entry: JSONObject = [
                        "offsetMs": .number(JSONNumber(literal: formatMilliseconds(chunk.offsetMilliseconds)))
                    ]
                    if let text = String(validating: chunk.bytes, as: UTF8.self) {
                        entry["text"] = .string(text)
                    } else {
                        for (key, value) in BodyCoding.form(of: chunk.bytes) { entry[key] = value }
                    }
                    return .object(entry)
                })
            if interaction.brokenOff { response["brokenOff"] = true }
            if interaction.abandoned { response["abandoned"] = true }
        } else if let body = BodyCoding.encode(interaction.response.body, headers: interaction.response.headers) {
            response["body"] = body
        }
        var object: JSONObject = [
            "request": .object(request),
            "response": .object(response),
        ]
        if let conversation = interaction.webSocket { object["websocket"] = encode(conversation) }
        if !interaction.echoSources.isEmpty { object["echoes"] = .array(interaction.echoSources.map { .string($0) }) }
        if !interaction.volatile.isEmpty { object["volatile"] = interaction.volatile.json }
        object["recordedAt"] = .string(interaction.recordedAt)
        object["durationMs"] = .number(JSONNumber(literal: formatMilliseconds(interaction.durationMilliseconds)))
        return .object(object)
    }

    static func encode(_ headers: HTTP.Headers) -> JSONValue {
        .array(headers.fields.map { .array([.string($0.name), .string($0.value)]) })
    }

    /// The largest `offsetMs` or `durationMs` a cassette may hold: a week. Larger values (`1e300`) would
    /// overflow where they are scheduled or written back.
    package static let largestMilliseconds = 604_800_000

    /// A time in milliseconds read from a cassette, when it is from 0 to `largestMilliseconds`.
    static func milliseconds(_ number: JSONNumber) -> Double? {
        guard let value = Double(number.literal), value >= 0, value <= Double(largestMilliseconds) else { return nil }
        return value
    }

    /// Checks that a timed piece of a streamed answer (a `chunk`, a gRPC `message`) comes no earlier than the
    /// one before it, and makes it the one before for the next. Pieces are sent in file order at their
    /// offsets: one earlier than the piece before would be sent late, after pieces that follow it.
    static func checkOrder(of offset: Double, after previous: inout Double, piece: String, at path: [JSONPathComponent])
        throws(CassetteDecodingError)
    {
        guard offset >= previous else {
            throw CassetteDecodingError(
                path: path + [.key("offsetMs")],
                message:
                    "\"offsetMs\" must be no earlier than the \(piece) before (\(formatMilliseconds(previous))), not \(formatMilliseconds(offset))"
            )
        }
        previous = offset
    }

    static func formatMilliseconds(_ value: Double) -> String {
        // Times come from the clock or from `milliseconds(_:)`; clamp anyway so writing never traps.
        guard value.isFinite else { return "0" }
        let rounded = (min(max(value, 0), Double(largestMilliseconds)) * 10).rounded() / 10
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        return String(rounded)
    }

    /// Checks the top level of a cassette document whose interactions were decoded while it was parsed
    /// (its `interactions` array is then empty) and puts them together; errors carry the path to the
    /// offending value.
    static func decode(_ value: JSONValue, streamed interactions: [Interaction]) throws(CassetteDecodingError)
        -> Cassette
    {
        let root = try object(value, at: [])
        let versionValue = try required(root, "version", at: [])
        guard let version = versionValue.numberValue?.intValue else {
            throw CassetteDecodingError(
                path: [.key("version")],
                message: "\"version\" must be an integer, found \(versionValue.kindDescription)")
        }
        guard version >= 1 && version <= Cassette.currentVersion else {
            throw CassetteDecodingError(
                path: [.key("version")],
                message: "unsupported cassette version \(version); this build reads version \(Cassette.currentVersion)")
        }
        let list = try required(root, "interactions", at: [])
        guard list.arrayValue != nil else {
            throw CassetteDecodingError(
                path: [.key("interactions")],
                message: "\"interactions\" must be an array, found \(list.kindDescription)")
        }
        return Cassette(version: version, interactions: interactions)
    }

    /// Decodes one interaction; `interner`, when given, shares equal headers with earlier interactions.
    /// With `schema`, gRPC messages written as JSON are read; without it they are an error that names the flag.
    static func decodeInteraction(
        _ value: JSONValue, at path: [JSONPathComponent], interner: HeaderInterner? = nil, schema: GRPCSchema? = nil
    ) throws(CassetteDecodingError) -> Interaction {
        let object = try object(value, at: path)
        let requestPath = path + [.key("request")]
        let request = try self.object(try required(object, "request", at: path), at: requestPath)
        let responsePath = path + [.key("response")]
        let response = try self.object(try required(object, "response", at: path), at: responsePath)

        let method = try string(try required(request, "method", at: requestPath), at: requestPath + [.key("method")])
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw CassetteDecodingError(
                path: requestPath + [.key("method")], message: "\"method\" must be an HTTP method such as \"GET\"")
        }
        var url = try string(try required(request, "url", at: requestPath), at: requestPath + [.key("url")])
        var origin: String?
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            guard let split = RequestOrigin.split(absoluteURL: url) else {
                throw CassetteDecodingError(
                    path: requestPath + [.key("url")], message: "\"url\" is not a valid http:// or https:// URL")
            }
            (origin, url) = (split.origin, split.target)
        } else if !url.hasPrefix("/") {
            throw CassetteDecodingError(
                path: requestPath + [.key("url")],
                message: "\"url\" must start with '/' (path and query as sent) or be an http(s):// URL")
        }
        var requestHeaders = try headers(request["headers"], at: requestPath + [.key("headers")])
        if let interner { requestHeaders = interner.intern(requestHeaders) }
        var requestBody = try BodyCoding.decode(request["body"], path: requestPath + [.key("body")])
        if let grpc = request["grpc"] {
            guard request["body"] == nil else {
                throw CassetteDecodingError(
                    path: requestPath + [.key("grpc")], message: "a request has \"body\" or \"grpc\", not both")
            }
            let target = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            requestBody = try decodeGRPCRequest(
                grpc, target: String(target), schema: schema, at: requestPath + [.key("grpc")])
        }

        let statusValue = try required(response, "status", at: responsePath)
        guard let status = statusValue.numberValue?.intValue, (100...999).contains(status) else {
            throw CassetteDecodingError(
                path: responsePath + [.key("status")], message: "\"status\" must be an integer from 100 to 999")
        }
        var responseHeaders = try headers(response["headers"], at: responsePath + [.key("headers")])
        if let interner { responseHeaders = interner.intern(responseHeaders) }
        var responseBody = try BodyCoding.decode(response["body"], path: responsePath + [.key("body")])
        var chunks: [ResponseChunk]?
        if let list = response["chunks"] {
            let chunksPath = responsePath + [.key("chunks")]
            guard response["body"] == nil else {
                throw CassetteDecodingError(
                    path: chunksPath, message: "a response has \"body\" or \"chunks\", not both")
            }
            guard let entries = list.arrayValue else {
                throw CassetteDecodingError(path: chunksPath, message: "\"chunks\" must be an array")
            }
            var previous = 0.0
            chunks = try entries.enumerated().map { (index, entry) throws(CassetteDecodingError) in
                let entryPath = chunksPath + [.index(index)]
                guard let offset = entry.objectValue?["offsetMs"]?.numberValue.flatMap(milliseconds) else {
                    throw CassetteDecodingError(
                        path: entryPath,
                        message:
                            "a chunk needs \"offsetMs\", a number of milliseconds from 0 to \(largestMilliseconds) (a week)"
                    )
                }
                try checkOrder(of: offset, after: &previous, piece: "chunk", at: entryPath)
                return ResponseChunk(offsetMilliseconds: offset, bytes: try BodyCoding.decode(entry, path: entryPath))
            }
            responseBody = chunks?.joinedBytes ?? []
        }
        if let grpc = response["grpc"] {
            guard response["body"] == nil, response["chunks"] == nil else {
                throw CassetteDecodingError(
                    path: responsePath + [.key("grpc")],
                    message: "a response has \"grpc\" in place of \"body\" and \"chunks\", not beside them")
            }
            let target = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            (responseBody, chunks) = try decodeGRPCResponse(
                grpc, target: String(target), schema: schema, at: responsePath + [.key("grpc")])
        }
        let brokenOff = try streamMark("brokenOff", response["brokenOff"], hasChunks: chunks != nil, at: responsePath)
        // A gRPC call cancelled before any message came has no message to carry an offset: its empty "grpc"
        // is a stream all the same.
        let noMessages = response["grpc"] != nil && chunks == nil && responseBody.isEmpty
        let abandoned = try streamMark(
            "abandoned", response["abandoned"], hasChunks: chunks != nil || noMessages, at: responsePath)
        if abandoned && chunks == nil { chunks = [] }
        var trailers = HTTP.Headers()
        if let value = response["trailers"] { trailers = try headers(value, at: responsePath + [.key("trailers")]) }
        var version: String?
        if let value = response["httpVersion"] {
            guard let text = value.stringValue, ["1.0", "1.1", "2", "3"].contains(text) else {
                throw CassetteDecodingError(
                    path: responsePath + [.key("httpVersion")],
                    message: "\"httpVersion\" must be \"1.0\", \"1.1\", \"2\" or \"3\"")
            }
            version = text
        }
        var conversation: WebSocketConversation?
        if let value = object["websocket"], !value.isNull {
            conversation = try decodeConversation(value, status: status, at: path + [.key("websocket")])
        }

        var recordedAt = ""
        if let value = object["recordedAt"] { recordedAt = try string(value, at: path + [.key("recordedAt")]) }
        var duration = 0.0
        if let value = object["durationMs"] {
            guard let milliseconds = value.numberValue.flatMap(milliseconds) else {
                throw CassetteDecodingError(
                    path: path + [.key("durationMs")],
                    message: "\"durationMs\" must be a number of milliseconds from 0 to \(largestMilliseconds) (a week)"
                )
            }
            duration = milliseconds
        }
        var interaction = Interaction(
            request: HTTP.Request(
                method: HTTP.Method(method), target: url, headers: requestHeaders, body: requestBody, origin: origin),
            response: HTTP.Response(
                status: status, headers: responseHeaders, body: responseBody, trailers: trailers, version: version),
            recordedAt: recordedAt,
            durationMilliseconds: duration, chunks: chunks, brokenOff: brokenOff, webSocket: conversation,
            abandoned: abandoned)
        if let echoes = object["echoes"] {
            interaction.echoSources = try echoSources(echoes, at: path + [.key("echoes")])
        }
        if let volatile = object["volatile"] {
            interaction.volatile = try volatileFields(volatile, at: path + [.key("volatile")])
        }
        return interaction
    }

    /// The `volatile` of an interaction: `{"request": [...], "response": [...]}`, each a list of at most
    /// `VolatileFields.limit` places written `query NAME`, `header NAME` or `body /pointer`, of 1 to 1024 bytes.
    static func volatileFields(
        _ value: JSONValue, at path: [JSONPathComponent]
    ) throws(CassetteDecodingError) -> VolatileFields {
        guard case .object(let object) = value else {
            throw CassetteDecodingError(
                path: path, message: "\"volatile\" must be an object with \"request\" and \"response\" lists")
        }
        var fields = VolatileFields()
        for (key, list) in object {
            guard key == "request" || key == "response" else {
                throw CassetteDecodingError(
                    path: path + [.key(key)], message: "\"volatile\" has \"request\" and \"response\" only")
            }
            guard case .array(let elements) = list, elements.count <= VolatileFields.limit else {
                throw CassetteDecodingError(
                    path: path + [.key(key)],
                    message: "\"volatile\" \"\(key)\" must be a list of at most \(VolatileFields.limit) places")
            }
            var places: [VolatileFields.Place] = []
            for (index, element) in elements.enumerated() {
                guard let text = element.stringValue, (1...1024).contains(text.utf8.count),
                    let place = VolatileFields.Place(text)
                else {
                    throw CassetteDecodingError(
                        path: path + [.key(key), .index(index)],
                        message: "a volatile place is \"query NAME\", \"header NAME\" or \"body /json/pointer\"")
                }
                places.append(place)
            }
            if key == "request" { fields.request = places } else { fields.response = places }
        }
        return fields
    }

    /// The `echoes` of an interaction: at most 256 sources, each a string of 1 to 256 bytes.
    static func echoSources(_ value: JSONValue, at path: [JSONPathComponent]) throws(CassetteDecodingError) -> [String]
    {
        guard case .array(let elements) = value, elements.count <= 256 else {
            throw CassetteDecodingError(path: path, message: "\"echoes\" must be an array of at most 256 sources")
        }
        var sources: [String] = []
        for (index, element) in elements.enumerated() {
            guard let source = element.stringValue, (1...256).contains(source.utf8.count) else {
                throw CassetteDecodingError(
                    path: path + [.index(index)], message: "an echo's source must be a string of 1 to 256 bytes")
            }
            sources.append(source)
        }
        return sources
    }

    /// A response's `"brokenOff"` or `"abandoned"` (`name`): true only beside `"chunks"` (or a `"grpc"` whose
    /// messages have offsets), a stream recorded broken off or left by its client; missing is false.
    static func streamMark(_ name: String, _ value: JSONValue?, hasChunks: Bool, at path: [JSONPathComponent])
        throws(CassetteDecodingError) -> Bool
    {
        switch value {
        case nil, .bool(false)?:
            return false
        case .bool(true)? where hasChunks:
            return true
        case .bool(true)?:
            throw CassetteDecodingError(
                path: path + [.key(name)],
                message:
                    "\"\(name)\" belongs to a streamed response (one with \"chunks\", or \"grpc\" messages with \"offsetMs\"), not one with a \"body\""
            )
        case let other?:
            throw CassetteDecodingError(
                path: path + [.key(name)], message: "\"\(name)\" must be true or false, found \(other.kindDescription)")
        }
    }

    static func headers(_ value: JSONValue?, at path: [JSONPathComponent]) throws(CassetteDecodingError) -> HTTP.Headers
    {
        guard let value else { return HTTP.Headers() }
        guard let pairs = value.arrayValue else {
            throw CassetteDecodingError(path: path, message: "\"headers\" must be an array of [name, value] pairs")
        }
        var headers = HTTP.Headers()
        for (index, pair) in pairs.enumerated() {
            guard let items = pair.arrayValue, items.count == 2, let name = items[0].stringValue,
                let fieldValue = items[1].stringValue
            else {
                throw CassetteDecodingError(
                    path: path + [.index(index)], message: "a header must be a [name, value] pair of strings")
            }
            guard !name.isEmpty, !name.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: ":") || $0 >= 0x7F })
            else {
                throw CassetteDecodingError(path: path + [.index(index)], message: "invalid header name \"\(name)\"")
            }
            guard !fieldValue.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
                throw CassetteDecodingError(
                    path: path + [.index(index)], message: "header \"\(name)\" has a line break in its value")
            }
            headers.add(name: name, value: fieldValue)
        }
        return headers
    }

    static func object(_ value: JSONValue, at path: [JSONPathComponent]) throws(CassetteDecodingError) -> JSONObject {
        guard let object = value.objectValue else {
            throw CassetteDecodingError(path: path, message: "expected an object, found \(value.kindDescription)")
        }
        return object
    }

    static func string(_ value: JSONValue, at path: [JSONPathComponent]) throws(CassetteDecodingError) -> String {
        guard let string = value.stringValue else {
            throw CassetteDecodingError(path: path, message: "expected a string, found \(value.kindDescription)")
        }
        return string
    }

    static func required(_ object: JSONObject, _ key: String, at path: [JSONPathComponent])
        throws(CassetteDecodingError)
        -> JSONValue
    {
        guard let value = object[key] else {
            throw CassetteDecodingError(path: path, message: "missing \"\(key)\"")
        }
        return value
    }
}
