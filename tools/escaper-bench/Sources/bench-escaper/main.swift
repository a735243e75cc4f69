// Times RawTargetEscaper (copied beside this file by tools/bench-escaper) on an EmbeddedChannel: the
// same pipelined requests, a browser's header set each (about 700 bytes, 14 fields) and every fourth with a
// body, in reads of 4 KiB as a socket hands them over; then a bare pass-through handler for the floor.
import NIOCore
import NIOEmbedded

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

final class PassThrough: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }
}

func requests(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    for index in 0..<count {
        let body = index % 4 == 3 ? "{\"name\":\"Ada Lovelace\",\"note\":\"GET / HTTP/1.1\"}" : ""
        let target = index % 8 == 0 ? "/search?q=café&page=\(index)" : "/api/users/\(index)?include=posts"
        var head = "\(body.isEmpty ? "GET" : "POST") \(target) HTTP/1.1\r\n"
        head += "Host: api.example.test:8080\r\n"
        head +=
            "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n"
        head += "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n"
        head += "Accept-Language: en-GB,en;q=0.9,fr;q=0.8\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n"
        head += "Connection: keep-alive\r\nCache-Control: no-cache\r\nPragma: no-cache\r\n"
        head += "Cookie: session=0123456789abcdef0123456789abcdef; theme=dark; _ga=GA1.1.1234567890.1700000000\r\n"
        head += "Referer: https://api.example.test/dashboard/overview?tab=activity\r\n"
        head += "Sec-Fetch-Dest: empty\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Site: same-origin\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        bytes += Array((head + "\r\n" + body).utf8)
    }
    return bytes
}

func seconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Nanoseconds per request through `handler`, the best of `rounds`.
func measure(_ makeHandler: () -> any ChannelHandler, stream: [UInt8], requests: Int, rounds: Int) throws -> Double {
    let allocator = ByteBufferAllocator()
    let reads = stride(from: 0, to: stream.count, by: 4096).map { start in
        allocator.buffer(bytes: stream[start..<min(start + 4096, stream.count)])
    }
    var best = Double.infinity
    for _ in 0..<rounds {
        let channel = EmbeddedChannel(handler: makeHandler())
        var total = 0
        let start = seconds()
        for read in reads {
            try channel.writeInbound(read)
            while let out = try channel.readInbound(as: ByteBuffer.self) { total += out.readableBytes }
        }
        best = min(best, (seconds() - start) * 1e9 / Double(requests))
        precondition(total >= stream.count)
        _ = try channel.finish()
    }
    return best
}

let count = 20_000
let stream = requests(count)
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 15
let floor = try measure({ PassThrough() }, stream: stream, requests: count, rounds: rounds)
let escaper = try measure({ RawTargetEscaper() }, stream: stream, requests: count, rounds: rounds)
let perRequest = escaper - floor
print(
    "requests \(count), \(stream.count / count) bytes each; pass-through \(Int(floor)) ns/request; "
        + "RawTargetEscaper \(Int(escaper)) ns/request: \(Int(perRequest)) ns of its own "
        + "(\(Int(Double(stream.count / count) / max(perRequest, 0.001) * 1000)) MB/s)")
