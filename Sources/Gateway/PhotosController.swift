import Commands
import Domain
import Foundation
import HTTPTypes
import Hummingbird
import Photos
import UUIDText

/// Profile photos (API.md, "Photos"): upload and remove mine; anyone holding a photo's id may
/// fetch it and its thumbnail.
struct PhotosController {
    let services: GatewayServices
    let runner: CommandRunner

    /// `fetches` are public; `upload` is signed in and reads its own, larger body (the
    /// idempotency middleware reads bodies with the 16 KiB limit); `commands` are signed in and
    /// idempotent.
    func addRoutes(
        fetches: Router<GatewayRequestContext>,
        upload: RouterGroup<GatewayRequestContext>,
        commands: RouterGroup<GatewayRequestContext>
    ) {
        upload.put("/v1/me/photo", use: self.upload)
        commands.delete("/v1/me/photo", use: remove)
        fetches.get("/v1/photos/{id}") { request, context in try await fetch(request, context, .image) }
        fetches.get("/v1/photos/{id}/thumbnail") { request, context in try await fetch(request, context, .thumbnail) }
    }

    /// `PUT /v1/me/photo`: the raw image becomes my profile photo; the old one is deleted.
    ///
    /// Checked in order of cost: `Content-Type` (415), `Content-Length` (413), a processing
    /// slot (503 when the queue is full, before the body is read), the body (413 past 10 MiB),
    /// signature, header and pixels (`Vips.process`). Only then does the database see anything:
    /// the photo is inserted, and the old one deleted, in the transaction of the
    /// `profile_updated` event that names it.
    @Sendable func upload(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ProfileJSON> {
        let user = try context.user
        let format = try Self.imageFormat(of: request)
        let photo = try await Self.process(request, as: format, services: services)
        let id = PhotoStore.newID()
        let etag = PhotoStore.etag(of: photo)
        let outcome = try await runner.run(
            .updateProfile(userID: user, changes: ProfileChanges(profileImage: .some(id.lowercasedString))),
            .firstUse(actor: user)
        ) { connection in
            try PhotoStore.insert(photo, id: id, owner: user, etag: etag, on: connection)
            try PhotoStore.deleteAll(of: user, except: id, on: connection)
        }
        return try await profileAnswer(user, outcome)
    }

    /// `DELETE /v1/me/photo`: no photo on my card, and none stored.
    @Sendable func remove(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ProfileJSON> {
        let user = try context.user
        let outcome = try await runner.run(
            .updateProfile(userID: user, changes: ProfileChanges(profileImage: .some(nil))),
            try context.command
        ) {
            connection in try PhotoStore.deleteAll(of: user, on: connection)
        }
        return try await profileAnswer(user, outcome)
    }

    private func profileAnswer(_ user: UUID, _ outcome: CommandOutcome) async throws -> Answer<ProfileJSON> {
        guard let state = outcome.states[.user(user)]?.user, let profile = state.profile, let registeredAt = state.registeredAt
        else { throw CommandRefusal(.notFound) }
        let json = ProfileJSON(card: CardJSON(userID: user, profile: profile), createdAt: registeredAt)
        return Answer(json, logPosition: try await runner.position(of: outcome))
    }

    /// `GET /v1/photos/{id}` and `/thumbnail`: to anyone with the id. A photo never changes, so
    /// its answers may be cached for good (`immutable`), and a client that has it gets `304`.
    /// An id that is not a UUID, unknown or deleted: `404`.
    func fetch(_ request: Request, _ context: GatewayRequestContext, _ copy: PhotoStore.Copy) async throws -> Response {
        let id = try context.uuidParameter("id")
        let suffix = copy == .thumbnail ? "-thumbnail" : ""
        let (known, anyKnown) = Self.validators(request.headers[values: .ifNoneMatch], suffix: suffix)
        guard let stored = try await services.photoStore.fetch(id, copy, known: known, anyKnown: anyKnown) else {
            throw APIError.notFound
        }
        var headers = HTTPFields()
        headers[.eTag] = "\"\(stored.etag)\(suffix)\""
        headers[.cacheControl] = "public, max-age=31536000, immutable"
        guard let bytes = stored.bytes else { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "image/jpeg"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The stored validators an `If-None-Match` names for this copy (entity tags of the form
    /// `"<etag><suffix>"`, weak or strong: RFC 9110 compares them weakly), and whether it is `*`.
    static func validators(_ fields: [String], suffix: String) -> (known: [String], any: Bool) {
        var known: [String] = []
        for field in fields {
            for item in field.split(separator: ",") {
                var tag = item.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return ([], true) }
                if tag.hasPrefix("W/") { tag.removeFirst(2) }
                guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { continue }
                tag = String(tag.dropFirst().dropLast())
                guard tag.hasSuffix(suffix) else { continue }
                tag = String(tag.dropLast(suffix.count))
                // A stored validator is 32 hex digits; anything else can match none.
                if tag.utf8.count == 32, known.count < 16 { known.append(tag) }
            }
        }
        return (known, false)
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}

extension APIError {
    /// `415`: not a type of image the server takes.
    static func unsupportedImage(_ message: String) -> APIError { APIError(.unsupportedMediaType, "unsupported_image", message) }
    /// `400`: not a readable image, or too many pixels.
    static func invalidImage(_ message: String) -> APIError { APIError(.badRequest, "invalid_image", message) }
    /// `400` on `profile_image`: not the id of a photo of mine.
    static let notMyPhoto = APIError.validation(
        "profile_image",
        "profile_image must be the id of a photo of mine (uploaded with PUT /v1/me/photo) or null"
    )
    /// `503`: every photo worker busy and the queue full.
    static let photosBusy = APIError(
        .serviceUnavailable,
        "overloaded",
        "Too many photos are being processed; try again.",
        headers: ["Retry-After": "1"]
    )
}

extension PhotoError {
    var apiError: APIError {
        switch self {
        case .unsupported(let message): .unsupportedImage(message)
        case .invalid(let message): .invalidImage(message)
        case .busy: .photosBusy
        }
    }
}

extension PhotosController {
    /// The image format `request`'s Content-Type names; `415 unsupported_image` for any other.
    static func imageFormat(of request: Request) throws -> ImageFormat {
        guard let type = request.headers[.contentType], let format = ImageFormat(contentType: type) else {
            throw APIError.unsupportedImage("Content-Type must be image/jpeg, image/png, image/heic or image/webp.")
        }
        return format
    }

    /// `request`'s body (within the photo body limit) checked, cleaned and re-encoded on a photo
    /// worker slot: profile photos and chat photos alike. A bad image is its `4xx`.
    static func process(_ request: Request, as format: ImageFormat, services: GatewayServices) async throws -> ProcessedPhoto {
        var request = request
        let reader = services.photoBody
        do {
            return try await services.photos.withSlot { slot in
                let data = try await reader.bytes(&request)
                return try await slot.process(data, as: format)
            }
        } catch let error as PhotoError {
            throw error.apiError
        }
    }
}
