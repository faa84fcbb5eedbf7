import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A console request as `ConsoleMiddleware` found it: the signed-in operator (nil on the public
/// pages) and the form of a POST.
struct ConsoleRequest: Sendable {
    var session: OperatorStore.Session?
    /// The session's cookie secret (to end it on sign-out).
    var cookie: String?
    var form: [String: String] = [:]
}

/// Why a console request was refused; each a page with its status.
enum ConsoleError: Error, Equatable {
    case badRequest(String)
    case forbidden(String)
    case notFound
    case wrongPassword
    case tooManyTries
    case gone(String)

    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: .badRequest
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .wrongPassword: .unauthorized
        case .tooManyTries: .tooManyRequests
        case .gone: .gone
        }
    }

    /// A stable code, shown on the page.
    var code: String {
        switch self {
        case .badRequest: "bad_request"
        case .forbidden: "forbidden"
        case .notFound: "not_found"
        case .wrongPassword: "wrong_password"
        case .tooManyTries: "too_many_tries"
        case .gone: "gone"
        }
    }

    var message: String {
        switch self {
        case .badRequest(let text), .forbidden(let text), .gone(let text): text
        case .notFound: "Nothing here."
        case .wrongPassword: "Wrong name or password."
        case .tooManyTries: "Too many failed sign-ins; wait a few minutes."
        }
    }
}

/// In front of every console route: the security headers on every answer (errors included,
/// rendered as pages, never JSON), a POST from another site's `Origin` refused, and on the
/// signed-in pages the session from the cookie (none: a redirect to the sign-in page, never
/// data) and the form's CSRF token checked on every POST.
struct ConsoleMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let services: GatewayServices
    let pages: ConsolePages
    let signedIn: Bool

    static let cookieName = "sniffmeet_console"
    /// Forms are small: names, passwords, reasons.
    static let maxFormBytes = 16 * 1024

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await admit(request, context: context, next: next)
        } catch let error as ConsoleError {
            response = pages.error(error, operator: context.console?.session)
        } catch let error as HTTPResponseError {
            let status = error.status
            response = pages.error(
                status.code < 500 ? .badRequest("The request was refused (\(status.code)).") : .badRequest("Try again shortly."),
                operator: context.console?.session,
                status: status
            )
        }
        Self.secure(&response.headers)
        return response
    }

    /// The headers of every console answer.
    static func secure(_ headers: inout HTTPFields) {
        headers[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[.cacheControl] = "no-store"
    }

    private func admit(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        var console = ConsoleRequest()
        if signedIn {
            if let cookie = Self.cookie(Self.cookieName, in: request.headers) {
                console.cookie = cookie
                console.session = try await services.gate.withConnection(services.pool) { try OperatorStore.session(cookie, on: $0) }
            }
            guard console.session != nil else { return ConsolePages.redirect("/console/sign-in") }
        }
        var request = request
        if request.method == .post {
            try checkOrigin(request)
            console.form = try await Self.form(&request)
            if let session = console.session {
                guard let offered = console.form["csrf"],
                    SessionStore.constantTimeEqual(Array(offered.utf8), Array(session.csrfToken.utf8))
                else { throw ConsoleError.forbidden("The form's CSRF token is missing or wrong; reload the page.") }
            }
        }
        context.console = console
        context.operatorName = console.session?.name
        return try await next(request, context)
    }

    /// A POST must come from this site: an `Origin` (or `Sec-Fetch-Site`) naming another is refused.
    private func checkOrigin(_ request: Request) throws {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], !["same-origin", "none"].contains(site) {
            throw ConsoleError.forbidden("Forms are accepted from this site only.")
        }
        guard let origin = request.headers[HTTPField.Name("Origin")!]?.lowercased() else { return }
        let host = (request.head.authority ?? request.headers[HTTPField.Name("Host")!])?.lowercased()
        let allowed = [services.configuration.console.publicOrigin] + ["http", "https"].map { scheme in host.map { "\(scheme)://\($0)" } }
        guard allowed.contains(origin) else { throw ConsoleError.forbidden("Forms are accepted from this site only.") }
    }

    /// The body of a POST as `application/x-www-form-urlencoded` fields.
    static func form(_ request: inout Request) async throws -> [String: String] {
        let data = try await BodyReader(limit: maxFormBytes).bytes(&request)
        var fields: [String: String] = [:]
        for pair in String(decoding: data, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else {
                throw ConsoleError.badRequest("The form is malformed.")
            }
            fields[name] = value
        }
        return fields
    }

    /// The value of cookie `name`.
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        for header in headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}
