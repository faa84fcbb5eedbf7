import APNsDouble
import Foundation
import Gateway
import Photos
import Push
import XCTest

/// Chat pushes through the outbox against the APNs double: one per message and device of the
/// mate, `thread-id` the conversation, `apns-collapse-id` the message, the dog's name and the
/// text (or "📷"); none to a device whose live stream shows the conversation.
final class ChatPushTests: XCTestCase {
    func testADeviceViewingTheConversationGetsNoPushWhileTheMatesOtherDeviceDoes() async throws {
        let (double, key) = try await PushTests.startDouble()
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("apns-double-\(UUID().uuidString).pem")
        try APNsDouble.certificatePEM.write(to: ca, atomically: true, encoding: .utf8)
        var settings = APNsSettings(
            keyPEM: key.pemRepresentation,
            keyID: PushTests.keyID,
            teamID: PushTests.teamID,
            topic: PushTests.topic,
            baseURL: double.url,
            caFile: ca.path
        )
        settings.lease = 5
        let fixture = try GatewayFixture("chat_push") {
            $0.apns = settings
            $0.streamMaxDuration = .seconds(4)
        }
        try await fixture.run { client in
            let ana = try await client.signUp("pushana", dog: "Bori")
            let ben = try await client.signUp("pushben", dog: "Kongsu")
            let benPhone2 = try await client.secondPhone(ben)
            let viewingDevice = PushTests.deviceToken(0xC1)
            let otherDevice = PushTests.deviceToken(0xC2)
            try await PushTests.register(client, ben.token, viewingDevice, locale: "ko")
            try await PushTests.register(client, benPhone2, otherDevice, locale: "en")
            try await client.makeMates(ana, ben)
            try await PushTests.eventually("the mate request's pushes") { double.deliveries.count >= 2 }
            let before = double.deliveries.count

            // Ben's first phone shows the conversation with Ana.
            async let viewing = client.send(.get, "/v1/me/stream?viewing=\(ana.id)", token: ben.token)
            // The stream has opened once its device is marked as viewing.
            try await PushTests.eventually("the viewing stream") {
                (try? client.sql("SELECT count(*) FROM chat_viewing"))?.first?.first == "1"
            }
            let sent = try await client.send(.post, "/v1/chats/\(ben.id)/messages", token: ana.token, json: #"{"text": "Running late"}"#)
            XCTAssertEqual(sent.status, 201, sent.text)
            let messageID = try XCTUnwrap(sent.json["message_id"] as? String)
            let photo = try await client.send(
                .post,
                "/v1/chats/\(ben.id)/photos",
                token: ana.token,
                body: try SyntheticPhoto.make(width: 64, height: 48, .jpeg()),
                headers: ["Content-Type": "image/jpeg"]
            )
            let photoSent = try await client.send(
                .post,
                "/v1/chats/\(ben.id)/messages",
                token: ana.token,
                json: #"{"photo_id": "\#(photo.json["photo_id"] as! String)"}"#
            )
            XCTAssertEqual(photoSent.status, 201, photoSent.text)
            try await PushTests.eventually("the chat pushes") { double.deliveries.count >= before + 2 }
            try await Task.sleep(for: .milliseconds(800))  // and no more
            let chat = double.deliveries.dropFirst(before)
            XCTAssertEqual(chat.map(\.deviceToken), [otherDevice, otherDevice], "only the device not viewing the conversation")
            // Delivered in batches, in either order: each is found by its collapse id (the message id).
            let first = try XCTUnwrap(chat.first { $0.headers["apns-collapse-id"] == messageID }, "no push for the text")
            let photoID = try XCTUnwrap(photoSent.json["message_id"] as? String)
            let photoPush = try XCTUnwrap(chat.first { $0.headers["apns-collapse-id"] == photoID }, "no push for the photo")
            let aps = try XCTUnwrap(first.json["aps"] as? [String: Any])
            XCTAssertEqual(aps["thread-id"] as? String, ana.id, "thread-id is the conversation")
            let alert = try XCTUnwrap(aps["alert"] as? [String: Any])
            XCTAssertEqual(alert["title"] as? String, "Bori")
            XCTAssertEqual(alert["body"] as? String, "Running late")
            XCTAssertEqual((first.json["notification"] as? [String: Any])?["category"] as? String, "chat_message")
            let photoAlert = (photoPush.json["aps"] as? [String: Any])?["alert"] as? [String: Any]
            XCTAssertEqual(photoAlert?["body"] as? String, "📷")
            let stream = try await viewing
            XCTAssertTrue(stream.text.contains("Running late"), "the viewing device saw it live")

            // Once that stream is closed, the first phone is pushed again.
            try await Task.sleep(for: .milliseconds(300))
            let after = double.deliveries.count
            let later = try await client.send(.post, "/v1/chats/\(ben.id)/messages", token: ana.token, json: #"{"text": "Here now"}"#)
            XCTAssertEqual(later.status, 201)
            try await PushTests.eventually("both devices") { double.deliveries.count >= after + 2 }
            XCTAssertEqual(Set(double.deliveries.dropFirst(after).map(\.deviceToken)), [viewingDevice, otherDevice])
        }
        try await double.stop()
    }
}
