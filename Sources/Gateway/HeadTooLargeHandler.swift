import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request head past the decoder's limits (`SNIFFMEET_MAX_HEADER_BYTES`, 100 fields)
/// with `431` and the JSON error body every other refusal has, then closes the connection.
///
/// The decoder reports both limits as `HTTPParserError.headerOverflow`, which Hummingbird would
/// answer with a bare `400`; this handler sits between the codec and Hummingbird's request loop
/// and takes that error before it gets there. A request read earlier on the same connection
/// (pipelined) is answered first, so the `431` never stands in for another request's answer.
final class HeadTooLargeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Request heads read whose answer has not ended yet.
    private var unanswered = 0
    /// The decoder has refused a head; the connection ends after its `431`.
    private var overflowed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { unanswered += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd {
            unanswered = max(0, unanswered - 1)
            if overflowed, unanswered == 0 { answer(context: context) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow else {
            context.fireErrorCaught(error)
            return
        }
        // The decoder reads nothing more after an error; one answer is enough.
        guard !overflowed else { return }
        overflowed = true
        if unanswered == 0 { answer(context: context) }
    }

    private func answer(context: ChannelHandlerContext) {
        let error = APIError.requestHeadTooLarge
        let body = ByteBuffer(bytes: error.bodyData)
        var head = HTTPResponse(status: error.status)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        // Only the output is shut: a full close with the rest of the oversized head unread would
        // reset the connection, and the client could lose the answer. The client closes on
        // `Connection: close` (as after Hummingbird's own parse errors), else the idle timeout does.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(mode: .output, promise: nil) }
    }
}
