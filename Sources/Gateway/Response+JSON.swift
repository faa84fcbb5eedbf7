import HTTPTypes
import Hummingbird

extension Response {
    /// A JSON answer from its finished text, with the command's `Log-Position` if it has one.
    /// Every JSON answer of the API (fresh or replayed) is made here, so their headers agree.
    static func json(_ bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok, logPosition: String? = nil) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if let logPosition { headers[.logPosition] = logPosition }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `204 No Content`, with the command's `Log-Position` if it has one.
    static func noContent(logPosition: String?) -> Response {
        var headers = HTTPFields()
        if let logPosition { headers[.logPosition] = logPosition }
        return Response(status: .noContent, headers: headers)
    }
}
