import HTTPTypes
import Hummingbird

extension ResponseBody {
    /// The whole body, as the route wrote it (a JSON answer is one buffer, so one write).
    consuming func collected() async throws -> ByteBuffer {
        let collector = Collector()
        try await write(collector)
        return collector.buffer
    }

    private final class Collector: ResponseBodyWriter {
        var buffer = ByteBuffer()
        func write(_ buffer: ByteBuffer) async throws { self.buffer.writeImmutableBuffer(buffer) }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
