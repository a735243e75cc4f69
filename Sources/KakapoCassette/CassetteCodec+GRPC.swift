import Foundation
import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// A gRPC call's `"grpc"` objects (documented in cassettes/README.md): in place of a request's `"body"`,
/// `{"messages": [ENTRY, ...]}`; in place of a response's `"body"` or `"chunks"`, the same with each entry's
/// `"offsetMs"` when the answer was streamed. An entry is `{"base64": "..."}`, or `{"json": {...}}` when a
/// descriptor set (`--proto-descriptor`) knows the message's type and the JSON gives back its bytes exactly;
/// `"compressed": true` marks a message sent compressed. The call's status is in the response's `"trailers"`.
///
/// In memory a gRPC exchange stays an ordinary interaction (the request body is the framed messages, a
/// streamed answer one chunk per message), so matching, `--stream-timing` and the transports need nothing
/// of their own. A body that is not whole frames is written as an ordinary body.
extension CassetteCodec {
    /// The request's `"grpc"` object, or nil when it is not a gRPC call whose body is whole frames.
    static func encodeGRPCRequest(_ interaction: Interaction, schema: GRPCSchema?) -> JSONValue? {
        guard interaction.webSocket == nil, GRPC.isGRPC(interaction.request),
            let messages = try? GRPC.messages(in: interaction.request.body)
        else { return nil }
        let path = interaction.request.path
        return .object([
            "messages": .array(
                messages.map { .object(entry($0, json: schema?.exactJSON(of: $0, path: path, side: .request))) })
        ])
    }

    /// The response's `"grpc"` object, or nil when it is not a gRPC answer whose body is whole frames (then it
    /// is written as an ordinary body or chunks).
    static func encodeGRPCResponse(_ interaction: Interaction, schema: GRPCSchema?) -> JSONValue? {
        guard interaction.webSocket == nil, !interaction.brokenOff, GRPC.isGRPC(interaction.request),
            GRPC.isGRPC(contentType: interaction.response.headers["Content-Type"]),
            let messages = try? GRPC.messages(in: interaction.response.body)
        else { return nil }
        let offsets = interaction.chunks.map { messageOffsets(messages, chunks: $0) }
        let path = interaction.request.path
        return .object([
            "messages": .array(
                messages.enumerated().map { index, message in
                    var object = entry(message, json: schema?.exactJSON(of: message, path: path, side: .response))
                    if let offsets {
                        object["offsetMs"] = .number(JSONNumber(literal: formatMilliseconds(offsets[index])))
                    }
                    return .object(object)
                })
        ])
    }

    /// Each message's offset: that of the chunk its last byte arrived in.
    static func messageOffsets(_ messages: [GRPCMessage], chunks: [ResponseChunk]) -> [Double] {
        var offsets: [Double] = []
        offsets.reserveCapacity(messages.count)
        var chunkIndex = 0
        var chunkEnd = chunks.first?.bytes.count ?? 0
        var end = 0
        for message in messages {
            end += 5 + message.bytes.count
            while chunkEnd < end, chunkIndex + 1 < chunks.count {
                chunkIndex += 1
                chunkEnd += chunks[chunkIndex].bytes.count
            }
            offsets.append(chunks.indices.contains(chunkIndex) ? chunks[chunkIndex].offsetMilliseconds : 0)
        }
        return offsets
    }

    private static func entry(_ message: GRPCMessage, json: JSONValue?) -> JSONObject {
        var object: JSONObject = [:]
        if let json {
            object["json"] = json
        } else {
            object["base64"] = .string(Data(message.bytes).base64EncodedString())
        }
        if message.compressed { object["compressed"] = true }
        return object
    }

    /// A response's headers and trailers as written for a gRPC answer: a Trailers-Only answer's status
    /// fields, which came among its headers, are written (and so replayed) as trailers.
    static func grpcOutcome(_ interaction: Interaction) -> HTTP.Response {
        guard GRPC.isGRPC(interaction.request), GRPC.isGRPC(contentType: interaction.response.headers["Content-Type"])
        else { return interaction.response }
        return GRPC.movingOutcomeToTrailers(interaction.response)
    }

    /// The framed messages of a request's `"grpc"` at `path`; `target` is the request's path, which names the
    /// method whose type JSON entries are read with.
    static func decodeGRPCRequest(
        _ value: JSONValue, target: String, schema: GRPCSchema?, at path: [JSONPathComponent]
    ) throws(CassetteDecodingError) -> [UInt8] {
        let entries = try grpcEntries(value, at: path)
        var messages: [GRPCMessage] = []
        messages.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let entryPath = path + [.key("messages"), .index(index)]
            messages.append(
                try decodeEntry(entry, target: target, side: .request, schema: schema, at: entryPath).message)
        }
        return messages.framed
    }

    /// The body of a response's `"grpc"` at `path`, and its chunks (one per message) when its entries have
    /// offsets: all of them or none.
    static func decodeGRPCResponse(
        _ value: JSONValue, target: String, schema: GRPCSchema?, at path: [JSONPathComponent]
    ) throws(CassetteDecodingError) -> (body: [UInt8], chunks: [ResponseChunk]?) {
        let entries = try grpcEntries(value, at: path)
        var chunks: [ResponseChunk] = []
        var body: [UInt8] = []
        var timed: Bool?
        var previous = 0.0
        for (index, entry) in entries.enumerated() {
            let entryPath = path + [.key("messages"), .index(index)]
            let (message, offset) = try decodeEntry(
                entry, target: target, side: .response, schema: schema, at: entryPath)
            if let timed, timed != (offset != nil) {
                throw CassetteDecodingError(
                    path: entryPath,
                    message:
                        "either every message of a response has \"offsetMs\" (a streamed answer) or none has (a whole one)"
                )
            }
            timed = offset != nil
            if let offset {
                try checkOrder(of: offset, after: &previous, piece: "message", at: entryPath)
                chunks.append(ResponseChunk(offsetMilliseconds: offset, bytes: message.framed))
            }
            message.append(to: &body)
        }
        return (body, timed == true ? chunks : nil)
    }

    private static func grpcEntries(_ value: JSONValue, at path: [JSONPathComponent]) throws(CassetteDecodingError)
        -> [JSONValue]
    {
        let object = try self.object(value, at: path)
        for key in object.keys where key != "messages" {
            throw CassetteDecodingError(
                path: path + [.key(key)], message: "\"grpc\" holds \"messages\" only, not \"\(key)\"")
        }
        guard let list = object["messages"] else { return [] }
        guard let entries = list.arrayValue else {
            throw CassetteDecodingError(
                path: path + [.key("messages")], message: "\"messages\" must be an array, found \(list.kindDescription)"
            )
        }
        return entries
    }

    private static func decodeEntry(
        _ value: JSONValue, target: String, side: GRPCSchema.Side, schema: GRPCSchema?, at path: [JSONPathComponent]
    ) throws(CassetteDecodingError) -> (message: GRPCMessage, offset: Double?) {
        let object = try self.object(value, at: path)
        var compressed = false
        if let flag = object["compressed"] {
            guard let value = flag.boolValue else {
                throw CassetteDecodingError(
                    path: path + [.key("compressed")], message: "\"compressed\" must be true or false")
            }
            compressed = value
        }
        var offset: Double?
        if let value = object["offsetMs"] {
            guard side == .response else {
                throw CassetteDecodingError(
                    path: path + [.key("offsetMs")], message: "a request's messages have no \"offsetMs\"")
            }
            guard let milliseconds = value.numberValue.flatMap(milliseconds) else {
                throw CassetteDecodingError(
                    path: path + [.key("offsetMs")],
                    message: "\"offsetMs\" must be a number of milliseconds from 0 to \(largestMilliseconds) (a week)")
            }
            offset = milliseconds
        }
        let bytes: [UInt8]
        switch (object["base64"], object["json"]) {
        case (let base64?, nil):
            let text = try string(base64, at: path + [.key("base64")])
            guard let data = Data(base64Encoded: text) else {
                throw CassetteDecodingError(path: path + [.key("base64")], message: "\"base64\" is not valid base64")
            }
            bytes = Array(data)
        case (nil, let json?):
            guard !compressed else {
                throw CassetteDecodingError(
                    path: path + [.key("json")],
                    message: "a compressed message is written as \"base64\" (its bytes as sent), not \"json\"")
            }
            guard let schema else {
                throw CassetteDecodingError(
                    path: path + [.key("json")],
                    message:
                        "a message written as JSON needs the descriptor set of its service: run with --proto-descriptor FILE (from protoc --descriptor_set_out)"
                )
            }
            do {
                bytes = try schema.message(from: json, path: target, side: side)
            } catch {
                throw CassetteDecodingError(path: path + [.key("json")], message: error.message)
            }
        case (.some, .some):
            throw CassetteDecodingError(path: path, message: "a message has \"base64\" or \"json\", not both")
        case (nil, nil):
            throw CassetteDecodingError(
                path: path, message: "a message needs \"base64\" (its bytes) or \"json\" (with --proto-descriptor)")
        }
        guard bytes.count <= GRPCMessage.largestLength else {
            throw CassetteDecodingError(path: path, message: "a message holds at most 4 GiB")
        }
        return (GRPCMessage(compressed: compressed, bytes: bytes), offset)
    }
}
