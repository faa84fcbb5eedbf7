import Foundation

// URLSession's transport, where Foundation has networking: Apple platforms, and Linux with
// FoundationNetworking.
#if canImport(Darwin) || canImport(FoundationNetworking)
import OpenAPIURLSession

extension SniffMeetClient {
    /// A client for `serverURL` over `URLSession`, the app's usual transport, with the middlewares.
    public static func make(serverURL: URL, state: State, configuration: Configuration = .init()) -> Client {
        make(serverURL: serverURL, transport: URLSessionTransport(), state: state, configuration: configuration)
    }
}
#endif
