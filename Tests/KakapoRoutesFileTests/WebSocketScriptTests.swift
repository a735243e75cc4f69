import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRoutesFile
import KakapoStubs
import Testing

/// Routes that answer a WebSocket upgrade with a script: reading them, where their errors are, and what
/// the script says for each event (the transport's side is WebSocketRoutesTests, end to end).
@Suite("Routes files: websocket scripts")
struct WebSocketScriptTests {
    static let chat = """
        routes:
          - id: chat
            path: /chat/:room
            websocket:
              subprotocol: [chat.v2, chat]
              send: [{text: "welcome to {{params.room}}"}]
              on:
                - when: {fields: {/type: ping}}
                  send: [{json: {type: pong, room: "{{params.room}}", echo: "{{message.json.payload.id}}"}}]
                - when: {text: {matches: "^bye"}}
                  send: [{text: see you}]
                  close: {code: 4001, reason: done}
                - when: {text: hello}
                  send: [{base64: AAEC}]
                - when: {base64: AQI=}
                  send: [{text: "got bytes, text '{{message.text}}'"}]
                - send: [{text: "unknown: {{message.text}} {{query.user}}"}]
          - path: /chat/:room
            response: {text: "not a websocket"}
        """

    /// The upgrade request a WebSocket client sends for `target`, offering `subprotocols`.
    static func upgrade(_ target: String, subprotocols: [String] = []) -> HTTP.Request {
        var headers: HTTP.Headers = [
            "Host": "localhost", "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        ]
        if !subprotocols.isEmpty {
            headers.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", "))
        }
        return HTTP.Request(method: .get, target: target, headers: headers)
    }

    /// The routes of `yaml`, as the server's table holds them.
    static func table(_ yaml: String) throws -> StubTable {
        StubTable(try RoutesFile.load(try RoutesFileTests.write(yaml, name: "routes.yaml")).routes)
    }

    /// The script the routes of `yaml` answer `request` with.
    static func script(_ yaml: String, _ request: HTTP.Request) throws -> WebSocketScriptAnswer {
        try #require(try table(yaml).answer(request)?.webSocket)
    }

    @Test("the opening and each rule answer with their messages, templates read the upgrade and the message")
    func conversation() throws {
        let script = try Self.script(Self.chat, Self.upgrade("/chat/lobby?user=ada", subprotocols: ["chat"]))
        #expect(script.route == "chat")
        #expect(script.opened() == [.send(.text("welcome to lobby"), after: .zero)])
        let pong = try #require(script.received(.text(#"{ "type" : "ping", "payload": {"id": 7} }"#)))
        #expect(pong.rule == 0)
        guard case .send(.text(let text), .zero)? = pong.steps.first, pong.steps.count == 1 else {
            Issue.record("\(pong.steps)")
            return
        }
        // A string that is one tag takes the type of its value: the number 7 stays a number.
        #expect(try JSONParser.parse(text) == ["type": "pong", "room": "lobby", "echo": 7])
        let bye = try #require(script.received(.text("bye now")))
        #expect(bye.rule == 1)
        #expect(bye.steps == [.send(.text("see you"), after: .zero), .close(code: 4001, reason: "done", after: .zero)])
        #expect(script.received(.text("hello"))?.steps == [.send(.binary([0, 1, 2]), after: .zero)])
        #expect(script.received(.binary([1, 2]))?.steps == [.send(.text("got bytes, text ''"), after: .zero)])
        // The default: "hello!" is not exactly hello; the regex is not anchored at the end but is at the start.
        #expect(script.received(.text("hello!"))?.steps == [.send(.text("unknown: hello! ada"), after: .zero)])
        #expect(script.received(.text("say bye"))?.rule == 4)
        #expect(script.received(.binary([9]))?.rule == 4)
    }

    @Test("a JSON when compares as JSON: key order and number spelling do not count, extra members do")
    func jsonWhen() throws {
        let yaml = """
            routes:
              - path: /j
                websocket:
                  on:
                    - when: {json: {type: ping, n: 1, tags: [a]}}
                      send: [{json: "{{message.json}}"}]
            """
        let script = try Self.script(yaml, Self.upgrade("/j"))
        #expect(script.received(.text(#"{"tags":["a"],"n":1.0,"type":"ping"}"#))?.rule == 0)
        #expect(script.received(.text(#"{"tags":["a"],"n":1,"type":"ping","x":0}"#)) == nil)
        #expect(script.received(.text(#"{"tags":["a"],"n":1,"type":"ping""#)) == nil)
        #expect(script.received(.binary(Array(#"{"tags":["a"],"n":1,"type":"ping"}"#.utf8))) == nil)
        let whole = try #require(script.received(.text(#"{"type":"ping","n":1,"tags":["a"]}"#)))
        guard case .send(.text(let text), _)? = whole.steps.first else {
            Issue.record("\(whole.steps)")
            return
        }
        #expect(try JSONParser.parse(text) == ["type": "ping", "n": 1, "tags": ["a"]])
    }

    @Test("a fields when looks at the pointers it names in a JSON message: equal, matching, present or absent")
    func fieldsWhen() throws {
        let yaml = """
            routes:
              - path: /f
                websocket:
                  on:
                    - when: {fields: {/type: ping, /id: {present: true}, /user/name: {matches: "a.*"}, /debug: {present: false}}}
                      send: [{json: {pong: "{{message.json.id}}"}}]
            """
        let script = try Self.script(yaml, Self.upgrade("/f"))
        let pong = try #require(script.received(.text(#"{"type":"ping","id":[1],"user":{"name":"ada"},"x":0}"#)))
        #expect(pong.steps == [.send(.text(#"{"pong":[1]}"#), after: .zero)])
        #expect(script.received(.text(#"{"type":"ping","user":{"name":"ada"}}"#)) == nil)
        #expect(script.received(.text(#"{"type":"ping","id":1,"user":{"name":"bob"}}"#)) == nil)
        #expect(script.received(.text(#"{"type":"ping","id":1,"user":{"name":"ada"},"debug":false}"#)) == nil)
        #expect(script.received(.text(#"{"type":"pong","id":1,"user":{"name":"ada"}}"#)) == nil)
        #expect(script.received(.text("ping")) == nil)
    }

    @Test("values the message lacks render as in responses: nothing in text, null as a whole JSON string")
    func missingValues() throws {
        let yaml = """
            routes:
              - path: /m
                websocket:
                  on:
                    - send:
                        - {text: "[{{message.json.a.b}}][{{headers.x-none}}][{{message.json.list.1}}]"}
                        - {json: {v: "{{message.json.a.b}}", s: "x{{message.json.a.b}}y", all: "{{message.text}}"}}
            """
        let script = try Self.script(yaml, Self.upgrade("/m"))
        let steps = try #require(script.received(.text(#"{"list": [1, {"k": true}]}"#))).steps
        #expect(steps.count == 2)
        #expect(steps.first == .send(.text(#"[][][{"k":true}]"#), after: .zero))
        guard case .send(.text(let text), _) = steps[1] else {
            Issue.record("\(steps)")
            return
        }
        #expect(
            try JSONParser.parse(text) == ["v": nil, "s": "xy", "all": .string(#"{"list": [1, {"k": true}]}"#)])
    }

    @Test("delays add up down a list, the close's after the last message; a uniform delay is drawn each time")
    func delays() throws {
        let yaml = """
            routes:
              - path: /d
                websocket:
                  send: [{text: a, delay: 250ms}, {text: b}, {text: c, delay: 0.1s}]
                  close: {delay: 50, reason: bye}
                  on:
                    - send: [{text: x, delay: {uniform: [10ms, 20ms]}}]
            """
        let script = try Self.script(yaml, Self.upgrade("/d"))
        #expect(
            script.opened() == [
                .send(.text("a"), after: .milliseconds(250)), .send(.text("b"), after: .milliseconds(250)),
                .send(.text("c"), after: .milliseconds(350)),
                .close(code: 1000, reason: "bye", after: .milliseconds(400)),
            ])
        guard case .send(_, let after)? = script.received(.text("?"))?.steps.first else {
            Issue.record("no step")
            return
        }
        #expect(after >= .milliseconds(10) && after <= .milliseconds(20))
    }

    @Test("the subprotocol is the route's first one the client offers, none when it offers none of them")
    func subprotocols() throws {
        let table = try Self.table(Self.chat)
        func chosen(_ offered: [String]) throws -> String? {
            try #require(table.answer(Self.upgrade("/chat/a", subprotocols: offered))?.webSocket).subprotocol
        }
        #expect(try chosen(["chat", "chat.v2"]) == "chat.v2")
        #expect(try chosen(["other", "chat"]) == "chat")
        #expect(try chosen(["other"]) == nil)
        #expect(try chosen([]) == nil)
    }

    @Test("a plain request to a websocket route's path goes on to the next route (or layer)")
    func plainRequestPassesOn() throws {
        let table = try Self.table(Self.chat)
        let plain = try #require(table.answer(HTTP.Request(method: .get, target: "/chat/lobby")))
        #expect(plain.webSocket == nil)
        #expect(plain.response?.body == Array("not a websocket".utf8))
        let alone = try Self.table("routes:\n  - path: /ws\n    websocket: {}\n")
        #expect(alone.answer(HTTP.Request(method: .get, target: "/ws")) == nil)
        #expect(alone.answer(Self.upgrade("/ws"))?.webSocket?.opened() == [])
    }

    @Test("a route's latency holds back the handshake, its when and fault apply to the upgrade")
    func latencyWhenFault() throws {
        let yaml = """
            routes:
              - path: /ws
                latency: 40ms
                when: {query: {token: secret}}
                websocket: {send: [{text: hi}]}
              - path: /down
                fault: {status: 503}
                websocket: {}
            """
        let table = try Self.table(yaml)
        let answer = try #require(table.answer(Self.upgrade("/ws?token=secret")))
        #expect(answer.delay == .milliseconds(40))
        #expect(answer.webSocket?.opened() == [.send(.text("hi"), after: .zero)])
        #expect(table.answer(Self.upgrade("/ws?token=wrong")) == nil)
        let down = try #require(table.answer(Self.upgrade("/down")))
        #expect(down.webSocket == nil)
        #expect(down.response?.status == 503)
    }

    @Test("a pattern that backtracks exponentially elsewhere judges a long message in bounded time")
    func hostilePattern() throws {
        let yaml = """
            routes:
              - path: /r
                websocket:
                  on:
                    - when: {text: {matches: "^(a|a)*(a*)*b$"}}
                      send: [{text: matched}]
                    - send: [{text: default}]
            """
        let script = try Self.script(yaml, Self.upgrade("/r"))
        let started = ContinuousClock.now
        let answer = script.received(.text(String(repeating: "a", count: 200_000)))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(answer?.steps == [.send(.text("default"), after: .zero)])
    }

    @Test("a route with both a response and a websocket is refused at the websocket's line and column")
    func bothAnswers() throws {
        let message = try RoutesFileTests.failure(
            """
            routes:
              - path: /ws
                response: {text: hi}
                websocket:
                  send: [{text: hi}]
            """, name: "routes.yaml")
        #expect(
            message
                == "routes.yaml:5:7: routes[0].websocket: a route answers with response or with a websocket script, not both",
            "\(message)")
    }

    @Test("a mistake deep in a script points at its YAML line and column")
    func deepError() throws {
        let message = try RoutesFileTests.failure(
            """
            routes:
              - path: /chat/:room
                websocket:
                  on:
                    - when: {json: {type: ping}}
                      send: [{json: {type: pong, room: "{{params.rooom}}"}}]
            """, name: "routes.yaml")
        #expect(
            message
                == "routes.yaml:6:25: routes[0].websocket.on[0].send[0].json: {{params.rooom}}: route ANY /chat/:room has parameters: room",
            "\(message)")
    }

    @Test(
        "every invalid script names what is wrong, where",
        arguments: [
            (
                #"{"path": "/a", "websocket": {"sned": []}}"#,
                "routes[0].websocket.sned: unknown key; expected one of subprotocol"
            ),
            (#"{"path": "/a", "websocket": []}"#, "routes[0].websocket: expected an object, found an array"),
            (
                #"{"path": "/a", "method": "POST", "websocket": {}}"#,
                "routes[0].method: a WebSocket upgrade is a GET request"
            ),
            (
                #"{"path": "/a", "responses": [{}], "websocket": {}}"#,
                "routes[0].websocket: a route answers with responses or"
            ),
            (
                #"{"path": "/a", "websocket": {"subprotocol": "a b"}}"#,
                "routes[0].websocket.subprotocol: \"a b\" is not a subprotocol name"
            ),
            (
                #"{"path": "/a", "websocket": {"subprotocol": [1]}}"#,
                "routes[0].websocket.subprotocol[0]: expected a string"
            ),
            (
                #"{"path": "/a", "websocket": {"send": [{}]}}"#,
                "routes[0].websocket.send[0]: a message to send needs one of text, json, base64"
            ),
            (
                #"{"path": "/a", "websocket": {"send": [{"text": "a", "base64": "AA=="}]}}"#,
                "routes[0].websocket.send[0]: a message to send takes only one of text, base64"
            ),
            (
                #"{"path": "/a", "websocket": {"send": [{"base64": "@@"}]}}"#,
                "routes[0].websocket.send[0].base64: not valid base64"
            ),
            (
                #"{"path": "/a", "websocket": {"send": [{"text": "a", "delay": "2h"}]}}"#,
                "routes[0].websocket.send[0].delay: expected a duration from 0 to 1 hour"
            ),
            (
                #"{"path": "/a", "websocket": {"send": [{"text": "{{message.text}}"}]}}"#,
                "routes[0].websocket.send[0].text: a {{message...}} tag reads the client's WebSocket message"
            ),
            (
                #"{"path": "/a", "response": {"text": "{{message.json.a}}"}}"#,
                "routes[0].response.text: a {{message...}} tag reads"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"send": [{"text": "{{message.json..a}}"}]}]}}"#,
                "routes[0].websocket.on[0].send[0].text: unknown template tag {{message.json..a}}"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"send": [{"text": "{{message}}"}]}]}}"#,
                "routes[0].websocket.on[0].send[0].text: unknown template tag {{message}}"
            ),
            (#"{"path": "/a", "websocket": {"on": {}}}"#, "routes[0].websocket.on: expected an array, found an object"),
            (
                #"{"path": "/a", "websocket": {"on": [{"if": {}}]}}"#,
                "routes[0].websocket.on[0].if: unknown key; expected one of when, send, close"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {}}]}}"#,
                "routes[0].websocket.on[0].when: a websocket rule's when needs one of text, json, fields, base64"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"text": "a", "json": 1}}]}}"#,
                "routes[0].websocket.on[0].when: a websocket rule's when takes only one of text, json"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"text": {"matches": "("}}}]}}"#,
                "routes[0].websocket.on[0].when.text.matches: not a valid regular expression: ("
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"text": {"like": "a"}}}]}}"#,
                "routes[0].websocket.on[0].when.text.like: unknown key; expected one of matches"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"text": 3}}]}}"#,
                "routes[0].websocket.on[0].when.text: expected a string, found a number"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"text": "{{message.text}}"}}]}}"#,
                "routes[0].websocket.on[0].when.text: a when compares the client's message as written"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"json": {"id": ["{{params.x}}"]}}}]}}"#,
                "routes[0].websocket.on[0].when.json.id[0]: a when compares the client's message as written"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"fields": {"type": 1}}}]}}"#,
                "routes[0].websocket.on[0].when.fields.type: a JSON pointer starts with '/'"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"fields": {}}}]}}"#,
                "routes[0].websocket.on[0].when.fields: expected at least one field"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"when": {"fields": {"/a": {"matches": "("}}}}]}}"#,
                "routes[0].websocket.on[0].when.fields./a.matches: not a valid regular expression"
            ),
            (
                #"{"path": "/a", "websocket": {"close": {"code": 1005}}}"#,
                "routes[0].websocket.close.code: expected a close code: 1000-1003, 1007-1014 or 3000-4999"
            ),
            (
                #"{"path": "/a", "websocket": {"close": {"code": 2000}}}"#,
                "routes[0].websocket.close.code: expected a close code"
            ),
            (
                #"{"path": "/a", "websocket": {"close": {"code": 1e400}}}"#,
                "routes[0].websocket.close.code: expected a close code"
            ),
            (
                #"{"path": "/a", "websocket": {"close": {"code": 1000.5}}}"#,
                "routes[0].websocket.close.code: expected a close code"
            ),
            (
                #"{"path": "/a", "websocket": {"close": {"reason": "\#(String(repeating: "é", count: 62))"}}}"#,
                "routes[0].websocket.close.reason: a close reason is at most 123 bytes of UTF-8 (it has 124)"
            ),
            (
                #"{"path": "/a", "websocket": {"on": [{"close": {"delay": -1}}]}}"#,
                "routes[0].websocket.on[0].close.delay: expected a duration"
            ),
        ])
    func invalidScripts(route: String, expected: String) throws {
        let message = try RoutesFileTests.failure(#"{"routes": [\#(route)]}"#)
        #expect(message.hasPrefix("routes.json:1:"), "\(message)")
        #expect(message.contains(": " + expected), "\(message)")
    }

    @Test("routes lint finds every script error of a file, each with its line and column")
    func checkFindsAll() throws {
        let path = try RoutesFileTests.write(
            """
            routes:
              - path: /a
                websocket: {on: [{when: {text: {matches: "["}}}]}
              - path: /b
                websocket: {close: {code: 999}}
              - path: /c
                websocket: {send: {text: fine}}
            """, name: "routes.yaml")
        let (definition, errors) = RoutesFile.check(path)
        #expect(definition.routes.count == 1)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/"
        let lines = errors.map { $0.description.replacingOccurrences(of: directory, with: "") }
        #expect(lines.count == 2)
        #expect(
            lines.first?.hasPrefix("routes.yaml:3:46: routes[0].websocket.on[0].when.text.matches: ") == true,
            "\(lines)")
        #expect(lines.last?.hasPrefix("routes.yaml:5:31: routes[1].websocket.close.code: ") == true, "\(lines)")
    }
}
