/// What the read callback needs: the body, and the transfer's sink (its resumer, its quiet-gap clock).
final class UploadSource {
    let stream: RequestBodyStream
    let sink: ResponseSink

    init(stream: RequestBodyStream, sink: ResponseSink) {
        self.stream = stream
        self.sink = sink
    }
}
