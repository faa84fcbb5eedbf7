import Commands
import Domain
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Postgres
import Projections
import Push

/// The operator console under `/console`: server-rendered pages and plain forms (API.md
/// "Operator console"). Actions are POSTs only, each checked for its session, origin and CSRF
/// token by `ConsoleMiddleware`, and each an event naming the operator.
struct ConsoleController {
    let services: GatewayServices
    let admin: AdminController
    let pages: ConsolePages
    let limiter: SignInLimiter

    /// Rows per page of the lists.
    static let pageSize = 50

    init(services: GatewayServices, admin: AdminController) {
        self.services = services
        self.admin = admin
        // The templates ship with the binary; a build without them is broken, not a runtime case.
        self.pages = try! ConsolePages()
        self.limiter = SignInLimiter(
            burst: services.configuration.console.signInBurst,
            refillPerSecond: services.configuration.console.signInRefillPerSecond
        )
    }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let open = router.group().add(middleware: ConsoleMiddleware(services: services, pages: pages, signedIn: false))
        open.get("/console/console.css", use: stylesheet)
        open.get("/console/sign-in", use: signInPage)
        open.post("/console/sign-in", use: signIn)
        open.get("/console/set-password", use: setPasswordPage)
        open.post("/console/set-password", use: setPassword)
        let signedIn = router.group().add(middleware: ConsoleMiddleware(services: services, pages: pages, signedIn: true))
        signedIn.get("/console", use: home)
        signedIn.post("/console/sign-out", use: signOut)
        signedIn.get("/console/reports", use: reports)
        signedIn.post("/console/reports/{id}/resolve", use: resolve)
        signedIn.get("/console/users/{id}", use: user)
        signedIn.post("/console/users/{id}/suspend", use: suspend)
        signedIn.post("/console/users/{id}/lift", use: lift)
        signedIn.get("/console/audit", use: audit)
        signedIn.get("/console/projections", use: projections)
        signedIn.get("/console/push", use: push)
        signedIn.get("/console/charts/lag/{name}", use: lagChart)
        signedIn.get("/console/charts/push", use: pushChart)
        // Any other path under /console is a console page too: signed out the sign-in
        // redirect, signed in a 404 page, both with the console's headers (never JSON).
        signedIn.get("/console/**", use: notFound)
        // An action's path is no page: a GET there is the same 404 page (never an action).
        for action in ["/console/sign-out", "/console/reports/{id}/resolve", "/console/users/{id}/suspend", "/console/users/{id}/lift"] {
            signedIn.get(RouterPath(action), use: notFound)
        }
        signedIn.post("/console/**", use: notFound)
    }

    @Sendable func notFound(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        throw ConsoleError.notFound
    }

    // MARK: Signing in

    @Sendable func stylesheet(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/css; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: pages.stylesheet))
    }

    @Sendable func signInPage(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        pages.page("sign-in", title: "Sign in", session: nil, ["passwordSet": request.uri.queryParameters["done"] != nil])
    }

    @Sendable func signIn(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let form = context.console?.form ?? [:]
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let password = form["password"] ?? ""
        let address = request.clientAddress(context, trustForwardedFor: services.configuration.trustForwardedFor)
        guard limiter.allows(name: name, address: address) else { throw ConsoleError.tooManyTries }
        // scrypt takes tens of milliseconds of CPU: it runs on the connection's thread with the
        // read, never on Swift's cooperative threads. Unknown names cost a hash too, so the
        // answer's time does not tell which names exist.
        let matches = try await services.gate.withConnection(services.pool) { connection in
            let stored = try OperatorStore.passwordHash(of: name, on: connection)
            return PasswordHash.verify(password, against: stored ?? PasswordHash.decoy) && stored != nil
        }
        guard matches else {
            limiter.failed(name: name, address: address)
            return pages.page("sign-in", title: "Sign in", session: nil, status: .unauthorized, ["failed": true, "name": name])
        }
        let opened = try await services.gate.withConnection(services.pool) { try OperatorStore.openSession(for: name, on: $0) }
        return ConsolePages.redirect(
            "/console/reports",
            cookie: cookie(opened.token, request: request, maxAge: Int(OperatorStore.sessionLifetime))
        )
    }

    @Sendable func signOut(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        if let cookie = context.console?.cookie {
            try await services.gate.withConnection(services.pool) { try OperatorStore.endSession(cookie, on: $0) }
        }
        return ConsolePages.redirect("/console/sign-in", cookie: cookie("", request: request, maxAge: 0))
    }

    /// The session cookie: `HttpOnly; SameSite=Strict; Path=/console`, `Secure` behind TLS.
    func cookie(_ value: String, request: Request, maxAge: Int) -> String {
        let settings = services.configuration.console
        let secure =
            settings.secureCookies
            ?? (settings.publicURL.lowercased().hasPrefix("https:")
                || (services.configuration.trustForwardedFor && request.headers[HTTPField.Name("X-Forwarded-Proto")!] == "https"))
        return "\(ConsoleMiddleware.cookieName)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    @Sendable func setPasswordPage(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let link = request.uri.queryParameters["link"].map(String.init) ?? ""
        let name = try await services.gate.withConnection(services.pool) { try OperatorStore.linkOwner(link, on: $0) }
        guard let name else { throw ConsoleError.gone("This link has expired or was used; ask for a new one.") }
        return pages.page("set-password", title: "Set your password", session: nil, ["name": name, "link": link])
    }

    @Sendable func setPassword(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let form = context.console?.form ?? [:]
        let link = form["link"] ?? ""
        let password = form["password"] ?? ""
        guard password == form["confirm"] else { throw ConsoleError.badRequest("The two passwords differ.") }
        guard (12...200).contains(password.count) else { throw ConsoleError.badRequest("A password has 12 to 200 characters.") }
        let name = try await services.gate.withConnection(services.pool) {
            try OperatorStore.setPassword(link: link, password: password, on: $0)
        }
        guard name != nil else { throw ConsoleError.gone("This link has expired or was used; ask for a new one.") }
        return ConsolePages.redirect("/console/sign-in?done=1")
    }

    // MARK: Pages

    @Sendable func home(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        ConsolePages.redirect("/console/reports")
    }

    @Sendable func reports(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let after = try Self.cursor(request)
        let rows = try await services.gate.run(ConsoleQueries.openReports(after: after, limit: Self.pageSize + 1), on: services.pool)
        let now = Date()
        let shown = rows.prefix(Self.pageSize)
        return pages.page(
            "reports",
            title: "Open reports",
            session: context.console?.session,
            [
                "reports": shown.map { Self.report($0, now: now) },
                "empty": rows.isEmpty,
                "next": rows.count > Self.pageSize ? shown.last.map { Self.cursorText($0.key) } ?? "" : false,
            ]
        )
    }

    @Sendable func user(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let id = UUID(uuidString: context.parameters.get("id") ?? "") else { throw ConsoleError.notFound }
        let pool = services.pool
        let found = try await services.gate.withConnection(pool) { connection in
            try connection.run(ConsoleQueries.user(id)).map { user in
                (
                    user,
                    try connection.run(ConsoleQueries.reports(of: id, about: true, limit: Self.pageSize)),
                    try connection.run(ConsoleQueries.reports(of: id, about: false, limit: Self.pageSize)),
                    try connection.run(ConsoleQueries.actions(about: id, after: nil, limit: Self.pageSize))
                )
            }
        }
        guard let (user, about, by, actions) = found else { throw ConsoleError.notFound }
        let now = Date()
        return pages.page(
            "user",
            title: user.card.dogName ?? "User",
            session: context.console?.session,
            [
                "card": Self.card(user.card),
                "suspended": user.card.suspended,
                "blockedBy": user.blockedBy,
                "blockedByMany": user.blockedBy >= 3,
                "about": about.map { Self.report($0, now: now) },
                "by": by.map { Self.report($0, now: now) },
                "actions": actions.map(Self.action),
            ]
        )
    }

    @Sendable func audit(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let after = try Self.cursor(request)
        let rows = try await services.gate.run(ConsoleQueries.actions(after: after, limit: Self.pageSize + 1), on: services.pool)
        let shown = rows.prefix(Self.pageSize)
        return pages.page(
            "audit",
            title: "Audit log",
            session: context.console?.session,
            [
                "actions": shown.map(Self.action),
                "empty": rows.isEmpty,
                "next": rows.count > Self.pageSize ? shown.last.map { Self.cursorText($0.key) } ?? "" : false,
            ]
        )
    }

    @Sendable func projections(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let statuses = try await services.progress.status()
        let head = try await services.gate.admitted { [log = services.log] in try await log.head() }
        return pages.page(
            "projections",
            title: "Projections",
            session: context.console?.session,
            [
                "head": head.description,
                "projectors": statuses.map { status in
                    ConsoleView([
                        "name": status.name, "state": status.progress.rawValue.replacingOccurrences(of: "_", with: " "),
                        "checkpoint": status.checkpoint.description,
                        "lagEvents": status.lagEvents, "lagSeconds": String(format: "%.1f", status.lagSeconds),
                        "error": status.lastError, "behind": status.lagEvents > 0,
                    ])
                },
            ]
        )
    }

    @Sendable func push(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let summary = try await services.gate.withConnection(services.pool) { try PushSummary.read(on: $0) }
        return pages.page(
            "push",
            title: "Push",
            session: context.console?.session,
            [
                "configured": services.configuration.apns != nil,
                "states": ["pending", "retrying", "delivered", "failed", "dropped"].map {
                    ConsoleView(["state": $0, "count": summary.counts[$0] ?? 0])
                },
                "oldestWaiting": String(format: "%.0f", summary.oldestWaitingSeconds),
                "failures": summary.failures.map { ConsoleView(["reason": $0.reason, "count": $0.count]) },
            ]
        )
    }

    /// `GET /console/charts/lag/{name}`: the projector's lag in events over the last hour.
    @Sendable func lagChart(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = context.parameters.get("name") ?? ""
        guard Projectors.names.contains(name) else { throw ConsoleError.notFound }
        let now = Date()
        let points = services.lagSamples.samples(of: name).map { (now.timeIntervalSince($0.at), Double($0.lagEvents)) }
        return Self.svg(SVGChart.line(points, span: LagSamples.window, unit: "events", title: "\(name) lag"))
    }

    /// `GET /console/charts/push`: pushes delivered per minute over the last hour.
    @Sendable func pushChart(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let minutes = try await services.gate.withConnection(services.pool) { connection in
            try connection.execute(
                """
                SELECT m, count(p.push_id) FROM generate_series(0, 59) AS m
                LEFT JOIN push_outbox p ON p.state = 'delivered' AND p.finished_at > now() - (m + 1) * interval '1 minute'
                                       AND p.finished_at <= now() - m * interval '1 minute'
                GROUP BY m ORDER BY m DESC
                """
            ).rows.map { (Double(try $0.int(0)) * 60 + 30, Double(try $0.int(1))) }
        }
        return Self.svg(SVGChart.line(minutes, span: 3600, unit: "per minute", title: "deliveries"))
    }

    static func svg(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "image/svg+xml"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: Actions

    @Sendable func resolve(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, name) = try target(context)
        let position = try await admin.resolve(id, by: name, .firstUse(actor: nil))
        try await services.progress.waitUntil(position, projectors: Self.shown, timeout: .seconds(3))
        return ConsolePages.redirect("/console/reports")
    }

    @Sendable func suspend(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, name) = try target(context)
        let reason = (context.console?.form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw ConsoleError.badRequest("A suspension needs a reason.") }
        let position = try await admin.suspend(id, reason: reason, by: name, .firstUse(actor: nil))
        try await services.progress.waitUntil(position, projectors: Self.shown, timeout: .seconds(3))
        return ConsolePages.redirect("/console/users/\(id.lowercasedString)")
    }

    @Sendable func lift(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, name) = try target(context)
        let position = try await admin.lift(id, by: name, .firstUse(actor: nil))
        try await services.progress.waitUntil(position, projectors: Self.shown, timeout: .seconds(3))
        return ConsolePages.redirect("/console/users/\(id.lowercasedString)")
    }

    /// The read models the page after an action shows: it waits for them, so the operator sees
    /// what they just did.
    static let shown = ["profiles", "safety", "audit"]

    /// The route's `{id}` and the signed-in operator.
    func target(_ context: GatewayRequestContext) throws -> (UUID, String) {
        guard let id = UUID(uuidString: context.parameters.get("id") ?? "") else { throw ConsoleError.notFound }
        guard let name = context.console?.session?.name else { throw ConsoleError.forbidden("Sign in first.") }
        return (id, name)
    }

    // MARK: Views

    /// `?after=<micros>.<uuid>`: where a list continues.
    static func cursor(_ request: Request) throws -> TimeKey? {
        guard let text = request.uri.queryParameters["after"].map(String.init) else { return nil }
        let parts = text.split(separator: ".")
        guard parts.count == 2, let micros = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else {
            throw ConsoleError.badRequest("The page's position is malformed.")
        }
        return TimeKey(micros: micros, id: id)
    }

    static func cursorText(_ key: TimeKey) -> String { "\(key.micros).\(key.id.lowercasedString)" }

    static func card(_ card: ConsoleCard) -> ConsoleView {
        ConsoleView([
            "id": card.userID.lowercasedString,
            "dogName": card.dogName ?? "(no profile)",
            "nickname": card.nickname ?? "",
            "age": card.age,
            "size": card.size ?? "",
            // The card names its photo by id; the thumbnail is served here (the page's policy
            // allows images from this site only).
            "photo": card.profileImage.flatMap(UUID.init(uuidString:)).map { "/v1/photos/\($0.lowercasedString)/thumbnail" },
            "suspended": card.suspended,
        ])
    }

    static func report(_ row: ConsoleReportRow, now: Date) -> ConsoleView {
        let age = now.timeIntervalSince(row.createdAt)
        return
            ConsoleView([
                "id": row.reportID.lowercasedString,
                "reporter": card(row.reporter),
                "reported": card(row.reported),
                "reason": row.reason,
                "note": row.note,
                "walkMessage": row.walkMessage,
                "messageText": row.messageText,
                "open": row.status == "open",
                "status": row.status,
                "created": iso(row.createdAt),
                "age": ageText(age),
                "overdue": age > 24 * 3600,
            ])
    }

    static func action(_ row: OperatorActionRow) -> ConsoleView {
        ConsoleView([
            "operator": row.operatorName,
            "action": row.action,
            "user": row.userID.lowercasedString,
            "report": row.reportID?.lowercasedString,
            "at": iso(row.at),
        ])
    }

    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
    }

    static func ageText(_ seconds: TimeInterval) -> String {
        let minutes = Int(max(0, seconds) / 60)
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes / (24 * 60)) days"
    }
}

extension PasswordHash {
    /// Checked against when the name is unknown, so a wrong name costs what a wrong password does.
    static let decoy = (try? make("decoy password that matches nothing")) ?? "scrypt$15$8$1$AAAA$AAAA"
}
