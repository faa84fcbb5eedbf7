import XCTest

@testable import Gateway

/// The console's rendering: what users wrote is escaped, and a value a page lacks shows as
/// nothing, never as a same-named value of an enclosing object.
final class ConsolePagesTests: XCTestCase {
    static func card(dogName: String?, age: Int?) -> ConsoleView {
        ConsoleView([
            "id": "6f1c0c3e-0000-4000-8000-000000000001", "dogName": dogName ?? "(no profile)", "nickname": "ana", "age": age,
            "size": "small", "photo": nil, "suspended": false,
        ])
    }

    static func reportsPage(reporter: ConsoleView, reported: ConsoleView, note: String?) throws -> String {
        let report = ConsoleView([
            "id": "6f1c0c3e-0000-4000-8000-0000000000aa", "reporter": reporter, "reported": reported, "reason": "spam",
            "note": note, "walkMessage": nil, "messageText": nil, "open": true, "status": "open",
            "created": "2026-11-25T17:00:00Z", "age": "12 min", "overdue": false,
        ])
        return try ConsolePages().html(
            "reports",
            title: "Open reports",
            session: nil,
            ["reports": [report], "empty": false, "next": false]
        )
    }

    func testACardWithoutAnAgeDoesNotShowItsReportsAge() throws {
        let html = try Self.reportsPage(
            reporter: Self.card(dogName: "Bori", age: 4),
            reported: Self.card(dogName: nil, age: nil),
            note: nil
        )
        XCTAssertTrue(html.contains("4 y · small"), html)
        XCTAssertTrue(html.contains("(no profile)"), html)
        XCTAssertFalse(html.contains("12 min y"), "the card borrowed its report's age")
        XCTAssertTrue(html.contains(#"<div class="nophoto">"#), "an absent photo shows the placeholder")
        XCTAssertFalse(html.contains("<img"), "an absent photo is no image")
        XCTAssertFalse(html.contains(#"class="evidence""#), "no note, walk message or chat message: no evidence")
        XCTAssertFalse(html.contains("false"), html)
    }

    func testWhatUsersWroteIsEscaped() throws {
        let note = #"it's "<img src=x onerror=alert(1)>" & more"#
        let html = try Self.reportsPage(
            reporter: Self.card(dogName: "<b>Rex</b>", age: 2),
            reported: Self.card(dogName: "Bori", age: 4),
            note: note
        )
        XCTAssertTrue(html.contains("&lt;b&gt;Rex&lt;/b&gt;"), html)
        XCTAssertTrue(html.contains("it&#39;s &quot;&lt;img src=x onerror=alert(1)&gt;&quot; &amp; more"), html)
        XCTAssertFalse(html.contains("<b>Rex"))
        XCTAssertFalse(html.contains("<img src=x"))
    }

    func testTheEscapingMatchesTheRenderersOwn() {
        let texts = ["", "plain", "<>&\"'", "ünïcödé <b> &amp; 🐕 'x'", "\u{0}<\u{1F}>", String(repeating: "a&", count: 1000)]
        for text in texts {
            let expected = text.map { character -> String in
                switch character {
                case "<": "&lt;"
                case ">": "&gt;"
                case "&": "&amp;"
                case "\"": "&quot;"
                case "'": "&#39;"
                default: String(character)
                }
            }.joined()
            XCTAssertEqual(ConsoleHTML().escapeText(text), expected)
        }
    }
}
