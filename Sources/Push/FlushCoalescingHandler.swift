import NIOCore

/// Holds back the flushes of one HTTP/2 stream (one push) until its event loop has run the work
/// already queued, then flushes once.
///
/// Async-http-client flushes a request three times (its headers, its body, the end of the
/// stream), and each flush went down through the connection's HTTP/2 handler and TLS to a
/// `write` of its own: `perf` put a fifth of the connection's event loop in those flushes during
/// `bench push`. Held back, the three frames of a push leave together.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny

    private var flushScheduled = false

    func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            context.flush()
        }
    }

    /// Puts the handler first in a stream's pipeline (on the side of the connection), so every
    /// flush of the stream passes it.
    static func install(on stream: any Channel) -> EventLoopFuture<Void> {
        do {
            try stream.pipeline.syncOperations.addHandler(FlushCoalescingHandler(), position: .first)
            return stream.eventLoop.makeSucceededVoidFuture()
        } catch {
            return stream.eventLoop.makeFailedFuture(error)
        }
    }
}
