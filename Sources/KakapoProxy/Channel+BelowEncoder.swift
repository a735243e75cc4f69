import NIOCore
import NIOHTTP1

extension Channel {
    /// Writes `bytes` below the HTTP response encoder, so they reach the socket as they are (an answer to a
    /// `CONNECT`, a route's malformed-response fault), then closes the channel and runs `done`. Without an
    /// encoder in the pipeline the channel is just closed.
    func writeBelowHTTPEncoderAndClose(_ bytes: ByteBuffer, done: @escaping @Sendable () -> Void) {
        guard let encoder = try? pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            close().whenComplete { _ in done() }
            return
        }
        encoder.writeAndFlush(NIOAny(bytes)).whenComplete { [self] _ in
            close(promise: nil)
            done()
        }
    }
}
