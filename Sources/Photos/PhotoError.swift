/// Why an upload was not turned into a photo. Every case is the client's answer, never a 500.
public enum PhotoError: Error, Equatable, Sendable {
    /// A format the server does not take: another `Content-Type`, bytes of another format than
    /// the one named, an animation or a multi-page file (`415 unsupported_image`).
    case unsupported(String)
    /// Not a readable image: no known signature, truncated or corrupt data, more pixels than
    /// allowed (`400 invalid_image`).
    case invalid(String)
    /// Every worker is busy and the queue is full (`503`).
    case busy
}
