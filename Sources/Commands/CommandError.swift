import Domain

/// Why a command was not carried out.
public enum CommandError: Error, Sendable, Equatable {
    /// The domain refused it; `code` is the API's stable code.
    case domain(DomainError)
    /// Other writers kept changing `stream`; the bounded retries ran out.
    case tooManyConflicts(stream: String)

    /// The stable code the API returns.
    public var code: String {
        switch self {
        case .domain(let error): error.code
        case .tooManyConflicts: "conflict"
        }
    }
}
