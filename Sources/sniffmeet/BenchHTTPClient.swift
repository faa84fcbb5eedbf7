import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over one keep-alive TCP connection to 127.0.0.1, for
/// benchmarks that drive a spawned server from threads of their own: no event loop, no
/// dependency, nothing it does shows up in the server's figures.
final class BenchHTTPClient {
    private let descriptor: Int32

    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(port: Int) throws {
        descriptor = try Self.connectLoopback(port: port)
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port` (closed again when the connect fails).
    static func connectLoopback(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "connect to port \(port): \(message)")
        }
        return descriptor
    }

    deinit { close(descriptor) }

    /// Sends one request and reads its whole answer (by `Content-Length`).
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: Data = Data()) throws -> Reply {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try write(Array(head.utf8))
        if !body.isEmpty { try body.withUnsafeBytes { try write($0) } }
        return try readReply()
    }

    private func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        var sent = 0
        while sent < bytes.count {
            let count = Glibc.send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    private var buffer: [UInt8] = []

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw Failure(description: "connection closed") }
        buffer.append(contentsOf: chunk[0..<count])
    }

    private func readReply() throws -> Reply {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if buffer.count >= 4 {
                end = (0...(buffer.count - 4)).first { buffer[$0..<$0 + 4].elementsEqual(separator) }
            }
            if end == nil { try fill() }
        }
        let lines = String(decoding: buffer[0..<end!], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(end! + 4)
        let statusLine = lines.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers["content-length"].flatMap(Int.init) ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return Reply(status: status, headers: headers, body: body)
    }
}
