import Foundation
import JSONText
import XCTest

@testable import Gateway

/// The quick reading of the hot commands' bodies (`FlatJSONObject`, `FlatDecodable`) never
/// accepts a body `JSONDecoder` refuses, and where it accepts one it reads what `JSONDecoder` reads.
final class FlatBodyTests: XCTestCase {
    func testPlainBodiesReadQuicklyAsJSONDecoderReadsThem() throws {
        let walk =
            #"{"to":"b0000000-0000-4000-8000-00000000000b","message":"Walk at the park? 🐕","#
            + #""latitude":37.5665,"longitude":-126.978,"place_name":"Park"}"#
        try assertQuick(walk, as: WalkBody.self)
        try assertQuick(#"{ "to" : "x", "message" : "", "latitude" : 0, "longitude" : -0 , "place_name" : null }"#, as: WalkBody.self)
        try assertQuick("{\n\t\"to\": \"x\",\r\n \"message\": \"산책 갈래?\", \"latitude\": 90, \"longitude\": 180.0}", as: WalkBody.self)
        try assertQuick(#"{"to":"x","message":"m","latitude":1.5,"longitude":2,"extra":[],"more":true}"#, as: WalkBody.self)
        try assertQuick(
            #"{"nickname":"bello","dog_name":"Bello","age":3,"sex":"male","neutered":true,"size":"medium","keywords":["friendly", "calm"],"profile_image":null}"#,
            as: SignUpBody.self
        )
        try assertQuick(
            #"{"nickname":"b","dog_name":"B","age":-1,"sex":"x","neutered":false,"size":"s","keywords":[],"profile_image":"p"}"#,
            as: SignUpBody.self
        )
        try assertQuick(#"{"to":"x","drop_token":"abc-_"}"#, as: MateRequestBody.self)
        try assertQuick(#"{"answer":"accept"}"#, as: WalkAnswerBody.self)
        try assertQuick("{\"text\":\"Running late \u{7f}\"}", as: ChatMessageBody.self)
        try assertQuick(#"{"photo_id":"c0000000-0000-4000-8000-00000000000c","text":null}"#, as: ChatMessageBody.self)
        try assertQuick("{}", as: ChatMessageBody.self)
    }

    func testAnythingButThePlainShapeIsLeftToJSONDecoder() {
        let refused = [
            #"{"text":"a \"quote\""}"#,  // an escape
            #"{"text":"a\nb"}"#,  // an escaped newline
            "{\"text\":\"a\u{01}b\"}",  // a control character
            #"{"text":{"nested":1}}"#,
            #"{"n":1e5}"#, #"{"n":1E5}"#, #"{"n":01}"#, #"{"n":1.}"#, #"{"n":.5}"#, #"{"n":+1}"#, #"{"n":-}"#,
            #"{"text":"a","text":"b"}"#,  // a repeated member
            #"{"text":"a"} x"#, #"{"text":"a"}{}"#, #"[{"text":"a"}]"#, #""text""#,
            #"{"text":"a",}"#, #"{,}"#, #"{"text" "a"}"#, #"{"text":tru}"#, #"{"text":truex}"#, #"{"text":nul}"#,
            #"{"k":["a",1]}"#, #"{"k":["a",]}"#, #"{"k":[["a"]]}"#, #"{"text":"a"#, #"{"#, "",
            "\u{FEFF}{}",  // a byte order mark
        ]
        for body in refused {
            XCTAssertNil(FlatJSONObject(Data(body.utf8)), body)
        }
        XCTAssertNil(FlatJSONObject(Data([0x7B, 0x22, 0x74, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D])), "invalid UTF-8")
        XCTAssertNil(FlatJSONObject(Data([0x7B, 0x22, 0x74, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D])), "a lone surrogate")
    }

    /// Numbers a `Double` cannot hold, integers an `Int` cannot, and values of the wrong type
    /// are read by `JSONDecoder`, whose errors the API answers with.
    func testValuesOutOfReachAreLeftToJSONDecoder() throws {
        let long = String(repeating: "9", count: 400)
        for body in [
            #"{"to":"x","message":"m","latitude":\#(long),"longitude":1}"#,
            #"{"to":"x","message":"m","latitude":"1","longitude":1}"#,
            #"{"to":"x","message":null,"latitude":1,"longitude":1}"#,
            #"{"to":"x","message":"m","latitude":1,"longitude":1,"place_name":3}"#,
            #"{"to":"x","latitude":1,"longitude":1}"#,
        ] {
            let object = try XCTUnwrap(FlatJSONObject(Data(body.utf8)), body)
            XCTAssertNil(WalkBody(flat: object), body)
        }
        let age = #"{"nickname":"b","dog_name":"B","age":99999999999999999999,"sex":"x","neutered":false,"size":"s","keywords":[]}"#
        XCTAssertNil(SignUpBody(flat: try XCTUnwrap(FlatJSONObject(Data(age.utf8)))))
        let fraction = #"{"nickname":"b","dog_name":"B","age":3.5,"sex":"x","neutered":false,"size":"s","keywords":[]}"#
        XCTAssertNil(SignUpBody(flat: try XCTUnwrap(FlatJSONObject(Data(fraction.utf8)))))
    }

    /// Random bodies and random damage to them: whatever the quick reading accepts,
    /// `JSONDecoder` accepts too, with the same value.
    func testRandomBodiesAndDamagedOnesAgreeWithJSONDecoder() throws {
        var random = SystemRandomNumberGenerator()
        // Mostly characters JSON writes plainly; now and then one it escapes (a quote, a
        // backslash, a newline, a control character, a slash), which the quick reading leaves.
        let plain: [String] = ["a", "Z", "0", " ", "é", "🐕", "산", "\u{7f}", "\u{2028}", "{", ",", "]", ":"]
        let escaped: [String] = ["\"", "\\", "\n", "\u{01}", "/"]
        func character() -> String {
            (Int.random(in: 0..<50, using: &random) == 0 ? escaped : plain).randomElement(using: &random)!
        }
        func text() -> String { (0..<Int.random(in: 0...4, using: &random)).map { _ in character() }.joined() }
        func number() -> String {
            let plain = ["0", "-0", "1", "-12.5", "37.5665", "3.0", "180", "-90.000001", "12345678901234567890"]
            let unusual = ["1e3", "01", "1.", "-", "99999999999999999999999999"]
            return (Int.random(in: 0..<10, using: &random) == 0 ? unusual : plain).randomElement(using: &random)!
        }
        func json(_ string: String) -> String {
            String(decoding: try! JSONSerialization.data(withJSONObject: string, options: .fragmentsAllowed), as: UTF8.self)
        }
        var quickReads = 0
        for round in 0..<4_000 {
            var members = [
                "\"to\":\(json(text()))", "\"message\":\(json(text()))", "\"latitude\":\(number())", "\"longitude\":\(number())",
                "\"place_name\":\(Bool.random(using: &random) ? json(text()) : "null")", "\"text\":\(json(text()))",
                "\"photo_id\":\(json(text()))", "\"answer\":\(json(text()))", "\"drop_token\":\(json(text()))",
                "\"nickname\":\(json(text()))", "\"dog_name\":\(json(text()))", "\"age\":\(number())", "\"sex\":\(json(text()))",
                "\"neutered\":\(Bool.random(using: &random))", "\"size\":\(json(text()))",
                "\"keywords\":[\((0..<Int.random(in: 0...3, using: &random)).map { _ in json(text()) }.joined(separator: ","))]",
                "\"profile_image\":null",
            ].filter { _ in Int.random(in: 0..<10, using: &random) > 0 }
            members.shuffle(using: &random)
            var bytes = Array("{\(members.joined(separator: ","))}".utf8)
            if round % 2 == 1 {  // damage: a byte changed, dropped or added
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: at)
                default: bytes.insert(Array("\"{}[],:0-.e \\".utf8).randomElement(using: &random)!, at: at)
                }
            }
            let data = Data(bytes)
            quickReads += try agree(data, as: WalkBody.self) + agree(data, as: SignUpBody.self)
            quickReads += try agree(data, as: ChatMessageBody.self) + agree(data, as: MateRequestBody.self)
            quickReads += try agree(data, as: WalkAnswerBody.self)
        }
        XCTAssertGreaterThan(quickReads, 1_000, "the random bodies should often be plain enough to read quickly")
    }

    /// 1 if the quick reading took `data` (and agreed), 0 if it left it to `JSONDecoder`.
    private func agree<T: FlatDecodable & Equatable>(_ data: Data, as type: T.Type) throws -> Int {
        guard let object = FlatJSONObject(data), let quick = T(flat: object) else { return 0 }
        let decoded = try? JSONDecoder().decode(T.self, from: data)
        XCTAssertEqual(quick, decoded, String(decoding: data, as: UTF8.self))
        return 1
    }

    private func assertQuick<T: FlatDecodable & Equatable>(_ body: String, as type: T.Type) throws {
        let data = Data(body.utf8)
        let object = try XCTUnwrap(FlatJSONObject(data), body)
        let quick = try XCTUnwrap(T(flat: object), body)
        XCTAssertEqual(quick, try JSONDecoder().decode(T.self, from: data), body)
        XCTAssertEqual(try BodyReader.decode(T.self, from: data), quick, body)
    }
}
