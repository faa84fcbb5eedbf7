import Foundation
import XCTest

@testable import Domain

/// The stored JSON of the chat events, pinned byte for byte (see `EventJSONGoldenTests`).
final class ChatEventJSONGoldenTests: XCTestCase {
    static let a = "a0000000-0000-4000-8000-00000000000a"
    static let b = "b0000000-0000-4000-8000-00000000000b"
    static let m = "f0000000-0000-4000-8000-000000000001"
    static let p = "f1000000-0000-4000-8000-000000000001"
    static let at = "2027-01-15T08:00:00.000Z"

    static let goldens: [(Event, String)] = [
        (
            .messageSent(MessageSent(messageID: message1, from: alice, to: bob, seq: 7, text: "East gate", photoID: photo1, sentAt: t0)),
            #"{"from":"\#(a)","message_id":"\#(m)","photo_id":"\#(p)","sent_at":"\#(at)","seq":7,"text":"East gate","to":"\#(b)"}"#
        ),
        (
            .messageSent(MessageSent(messageID: message1, from: alice, to: bob, seq: 1, text: nil, photoID: photo1, sentAt: t0)),
            #"{"from":"\#(a)","message_id":"\#(m)","photo_id":"\#(p)","sent_at":"\#(at)","seq":1,"text":null,"to":"\#(b)"}"#
        ),
        (
            .messageEdited(MessageEdited(messageID: message1, from: alice, to: bob, text: "West gate", editedAt: t0)),
            #"{"edited_at":"\#(at)","from":"\#(a)","message_id":"\#(m)","text":"West gate","to":"\#(b)"}"#
        ),
        (
            .messageUnsent(MessageUnsent(messageID: message1, from: alice, to: bob, at: t0)),
            #"{"at":"\#(at)","from":"\#(a)","message_id":"\#(m)","to":"\#(b)"}"#
        ),
    ]

    func testEveryChatEventEncodesToItsGoldenJSON() {
        for (event, json) in Self.goldens {
            XCTAssertEqual(String(decoding: event.encodedData(), as: UTF8.self), json, event.typeName)
        }
    }

    func testEveryChatEventRoundTripsThroughItsJSON() throws {
        for (event, json) in Self.goldens {
            XCTAssertEqual(try Event.decode(typeName: event.typeName, schemaVersion: 1, data: Data(json.utf8)), event, event.typeName)
        }
    }

    /// Text and photo id are never in the clear part; ids, seq and times always are.
    func testChatClearPartHoldsNoTextOrPhoto() throws {
        for (event, json) in Self.goldens {
            let whole = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
            let clear = try JSONSerialization.jsonObject(with: event.encodedData(.clear)) as! [String: Any]
            let personal = try JSONSerialization.jsonObject(with: event.encodedData(.personal)) as! [String: Any]
            XCTAssertEqual(Set(clear.keys).union(personal.keys), Set(whole.keys), event.typeName)
            XCTAssertTrue(Set(clear.keys).isDisjoint(with: personal.keys), event.typeName)
            XCTAssertNil(clear["text"], event.typeName)
            XCTAssertNil(clear["photo_id"], event.typeName)
            XCTAssertNotNil(clear["message_id"], event.typeName)
            XCTAssertEqual(Event.personalTypeNames.contains(event.typeName), event.personalDataOwner != nil, event.typeName)
        }
    }

    /// A message whose key is gone still decodes from its clear part: its place and sender stay.
    func testMessageSentClearPartAloneDecodesWithoutTextOrPhoto() throws {
        let clear = Self.goldens[0].0.encodedData(.clear)
        guard case .messageSent(let sent) = try Event.decode(typeName: "message_sent", schemaVersion: 1, data: clear) else {
            return XCTFail("not a message")
        }
        XCTAssertEqual(sent.seq, 7)
        XCTAssertNil(sent.text)
        XCTAssertNil(sent.photoID)
    }

    /// A report naming a message stores its id in the clear; reports filed without one keep
    /// their JSON (no `message_id` key) and decode with none.
    func testUserReportedNamingAMessageWritesItsIDAndOlderReportsDecodeWithout() throws {
        let r = "d0000000-0000-4000-8000-000000000001"
        let named = Event.userReported(
            UserReported(
                reportID: request1,
                reporter: bob,
                reported: alice,
                reason: .spam,
                walkID: nil,
                messageID: message1,
                note: nil,
                at: t0
            )
        )
        let json =
            #"{"at":"\#(Self.at)","message_id":"\#(Self.m)","reason":"spam","report_id":"\#(r)","reported":"\#(Self.a)","reporter":"\#(Self.b)","walk_id":null}"#
        XCTAssertEqual(String(decoding: named.encodedData(), as: UTF8.self), json)
        XCTAssertEqual(String(decoding: named.encodedData(.clear), as: UTF8.self), json)
        XCTAssertEqual(try Event.decode(typeName: "user_reported", schemaVersion: 1, data: Data(json.utf8)), named)
        let older =
            #"{"at":"\#(Self.at)","reason":"spam","report_id":"\#(r)","reported":"\#(Self.a)","reporter":"\#(Self.b)","walk_id":null}"#
        guard case .userReported(let e) = try Event.decode(typeName: "user_reported", schemaVersion: 1, data: Data(older.utf8)) else {
            return XCTFail("not a report")
        }
        XCTAssertNil(e.messageID)
        XCTAssertEqual(String(decoding: Event.userReported(e).encodedData(), as: UTF8.self), older)
    }
}
