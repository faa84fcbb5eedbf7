import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The console's templates (`Console/Templates/*.mustache`, read once) and stylesheet, and the
/// answers made of them, rendered from `ConsoleView`s. `{{ }}` escapes HTML; templates never use `{{{ }}}`, so everything a
/// user wrote shows as text.
struct ConsolePages: Sendable {
    let library: MustacheLibrary
    let stylesheet: ByteBuffer

    init() throws {
        guard let resources = Bundle.module.resourceURL else { throw ConsoleError.notFound }
        let templates = resources.appendingPathComponent("Templates")
        let css = resources.appendingPathComponent("Static/console.css")
        MustacheContentTypes.register(ConsoleHTML(), named: ConsoleHTML.name)
        var library = MustacheLibrary()
        for file in try FileManager.default.contentsOfDirectory(atPath: templates.path) where file.hasSuffix(".mustache") {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            // Every template (a partial starts with the renderer's own HTML escaping) escapes with `ConsoleHTML`.
            try library.register("{{% CONTENT_TYPE: \(ConsoleHTML.name)}}\n" + text, named: String(file.dropLast(".mustache".count)))
        }
        self.library = library
        self.stylesheet = ByteBuffer(data: try Data(contentsOf: css))
    }

    /// Page `template` with `values`, and the frame's values (`operator`, `csrf`, `title`).
    func page(
        _ template: String,
        title: String,
        session: OperatorStore.Session?,
        status: HTTPResponse.Status = .ok,
        _ values: [String: Any?] = [:]
    ) -> Response {
        let html = html(template, title: title, session: session, values)
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The HTML of page `template` with `values` and the frame's values.
    func html(_ template: String, title: String, session: OperatorStore.Session?, _ values: [String: Any?]) -> String {
        var context = values
        context["title"] = title
        context["operator"] = session?.name
        context["csrf"] = session?.csrfToken
        return library.render(ConsoleView(context), withTemplate: template)
            ?? "<!doctype html><title>SniffMeet console</title><p>Missing page."
    }

    /// An error as a page.
    func error(_ error: ConsoleError, operator session: OperatorStore.Session?, status: HTTPResponse.Status? = nil) -> Response {
        page(
            "error",
            title: "Refused",
            session: session,
            status: status ?? error.status,
            ["code": error.code, "message": error.message]
        )
    }

    /// `303 See Other` to `path` (after a form, or to the sign-in page).
    static func redirect(_ path: String, cookie: String? = nil) -> Response {
        var headers = HTTPFields()
        headers[.location] = path
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: .seeOther, headers: headers)
    }
}
