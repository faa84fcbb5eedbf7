import Domain
import Hummingbird

extension DomainError {
    /// The HTTP answer of a refused command (codes and statuses of API.md).
    public var apiError: APIError {
        let status: HTTPResponse.Status =
            switch self {
            case .validationFailed, .cannotRequestSelf: .badRequest
            case .invalidDropToken, .notAddressee, .notRequester, .notSender: .forbidden
            case .dropTokenExpired, .walkExpired, .editWindowPassed: .gone
            case .notFound, .userNotFound: .notFound
            case .nicknameTaken, .alreadyMates, .notPending, .notMates, .alreadyAnswered, .alreadyExists, .messageUnsent: .conflict
            }
        return APIError(status, code, message, field: field)
    }
}
