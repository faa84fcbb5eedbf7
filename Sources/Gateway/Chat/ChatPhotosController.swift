import Domain
import Foundation
import HTTPTypes
import Hummingbird
import JSONText
import Photos
import UUIDText

/// Chat photos (API.md "Chat between mates"): uploaded into one conversation through the photo
/// pipeline (cleaned and resized like a profile photo), and served only to its two mates.
struct ChatPhotosController {
    let services: GatewayServices
    let runner: CommandRunner

    func addRoutes(signedIn: RouterGroup<GatewayRequestContext>) {
        signedIn.post("/v1/chats/{user_id}/photos", use: upload)
        signedIn.get("/v1/chats/{user_id}/photos/{photo_id}") { request, context in try await fetch(request, context, .image) }
        signedIn.get("/v1/chats/{user_id}/photos/{photo_id}/thumbnail") { request, context in
            try await fetch(request, context, .thumbnail)
        }
    }

    /// `POST /v1/chats/{user_id}/photos`: the raw image bytes; `409 not_mates` unless we are
    /// mates now. Sending it is a message naming its `photo_id`.
    @Sendable func upload(_ request: Request, context: GatewayRequestContext) async throws -> Answer<ChatPhotoJSON> {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let format = try PhotosController.imageFormat(of: request)
        guard try await runner.canWrite(user, to: mate) else { throw CommandRefusal(DomainError.notMates.apiError) }
        let photo = try await PhotosController.process(request, as: format, services: services)
        let id = PhotoStore.newID()
        let etag = PhotoStore.etag(of: photo)
        try await services.gate.withConnection(services.pool) { connection in
            try PhotoStore.insertChatPhoto(photo, id: id, owner: user, mate: mate, etag: etag, on: connection)
        }
        return Answer(ChatPhotoJSON(photoID: id), status: .created)
    }

    /// `GET /v1/chats/{user_id}/photos/{photo_id}[/thumbnail]`: `404` to anyone but the two.
    func fetch(_ request: Request, _ context: GatewayRequestContext, _ copy: PhotoStore.Copy) async throws -> Response {
        let user = try context.user
        let mate = try context.uuidParameter("user_id")
        let id = try context.uuidParameter("photo_id")
        let suffix = copy == .thumbnail ? "-thumbnail" : ""
        let (known, anyKnown) = PhotosController.validators(request.headers[values: .ifNoneMatch], suffix: suffix)
        guard
            let stored = try await services.photoStore.fetchChatPhoto(id, copy, viewer: user, mate: mate, known: known, anyKnown: anyKnown)
        else { throw APIError.notFound }
        var headers = HTTPFields()
        headers[.eTag] = "\"\(stored.etag)\(suffix)\""
        // Only for the two of us: no shared cache may keep it.
        headers[.cacheControl] = "private, max-age=31536000, immutable"
        guard let bytes = stored.bytes else { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "image/jpeg"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// `201 {"photo_id"}`.
struct ChatPhotoJSON: JSONObjectWritable, Sendable {
    var photoID: UUID

    func writeMembers(_ object: inout JSONObjectWriter) throws {
        object.id("photo_id", photoID)
    }
}
