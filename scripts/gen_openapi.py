#!/usr/bin/env python3
"""Writes Sources/Gateway/openapi.json: the OpenAPI 3.1 description of shared/API.md.

Hand-kept in step with API.md; GatewayTests.OpenAPIDriftTests fails when the router and this
document disagree on the set of (method, path), so only routes the server serves are here.

Every answer is listed with its status, its error codes (`error.code` is an enum per status) and
its headers (`Log-Position` on commands, `Retry-After` on 429 and 503). Responses carry OpenAPI
`links` from the ids they return to the operations that take them, so that a stateful fuzzer
(schemathesis' stateful phase, scripts/fuzz.sh) reaches accept, respond, cancel, dismiss, unpair
and the card with real ids instead of only 404s. Run: python3 scripts/gen_openapi.py
"""
import json, os

def ref(name): return {"$ref": f"#/components/schemas/{name}"}
UUID = {"type": "string", "format": "uuid"}
TIME = {"type": "string", "format": "date-time"}
POSITION = {"type": "string", "pattern": "^[0-9]{1,20}\\.[0-9]{1,19}$"}

# --- Headers of answers ---------------------------------------------------------------------
LOGPOS = {"Log-Position": {"description": "Opaque log position of the command's last event (or the log's head for a "
                                          "command that changed nothing); send it as Min-Log-Position.",
                           "required": True, "schema": POSITION}}
RETRY_AFTER = {"description": "Seconds to wait before trying again.", "schema": {"type": "integer", "minimum": 0}}

def err(desc, *codes, headers=None):
    """An error answer: `{"error": {"code", "message", "field"?}}` with `code` one of `codes`."""
    # One named schema for every error answer, so that a generated client decodes each as one type;
    # the codes an answer can carry are in its description.
    schema = ref("Error")
    r = {"description": desc + " Codes: " + ", ".join(f"`{c}`" for c in codes) + "." if codes else desc,
         "content": {"application/json": {"schema": schema}}}
    if headers: r["headers"] = headers
    return r
def ok(desc, schema, headers=None, links=None):
    r = {"description": desc, "content": {"application/json": {"schema": schema}}}
    if headers: r["headers"] = headers
    if links: r["links"] = links
    return r
def no_content(desc, headers=None):
    r = {"description": desc}
    if headers: r["headers"] = headers
    return r

def sse_event(*names):
    """One Server-Sent Event of a stream (as a client's SSE parser yields it): `event` one of `names`,
    `data` its JSON text, `id` its log position where it has one."""
    return {"type": "object", "description": "One event of the stream; `data` is JSON text.",
            "properties": {"event": {"type": "string", "enum": list(names)}, "data": {"type": "string"},
                           "id": {"type": "string"}, "retry": {"type": "integer", "minimum": 0}}}

# --- Parameters -----------------------------------------------------------------------------
def param(name, where, schema, desc, required=False):
    return {"name": name, "in": where, "required": required, "description": desc, "schema": schema}
IDEM = param("Idempotency-Key", "header", {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[\\x21-\\x7e]+$"},
             "Same key, same user, same body: the first answer again, nothing written (kept 24 hours); same key, "
             "different request: `422 idempotency_key_reused`.")
MINPOS = param("Min-Log-Position", "header", POSITION,
               "A Log-Position this client was given: answer only once the read models include it (waits up to 3 s, "
               "then `503 not_caught_up`). A value that is no position of this log is `400 validation_failed`.")
LIMIT = param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, "Page size.")
CURSOR = param("cursor", "query", {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$"},
               "Opaque cursor from `next_cursor`; any other value is `400 validation_failed`.")
def idparam(name="id", what="Id"):
    return param(name, "path", UUID, f"{what}. A value that is not a UUID names nothing: `404`.", required=True)
# An empty value (`?status=`) is no filter, as API.md writes it.
DIRECTION = param("direction", "query", {"type": "string", "enum": ["", "incoming", "outgoing"]},
                  "Only incoming or outgoing; empty: both.")
def status_filter(*statuses):
    return param("status", "query", {"type": "string", "enum": ["", *statuses]}, "Only this status; empty: any.")
LAST_EVENT_ID = param("Last-Event-ID", "header", POSITION, "Resume after this event id (an id this stream sent).")

# --- Schemas --------------------------------------------------------------------------------
# Free text (API.md "Text"): what JSON Schema can say of it. The pattern refuses control characters
# (C0, DEL, C1) and bidi controls; the server also refuses unassigned code points, counts lengths in
# user-perceived characters (so `maxLength`, in code points, is never more than it allows) and caps
# a field at 4 bytes per allowed character. Nicknames also refuse white space and Latin letters
# mixed with Cyrillic or Greek ones, and are unique after NFKC case folding.
NO_CONTROLS = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069"
WHITE_SPACE = "\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
TEXT_RULES = ("Stored NFC-normalized. Control characters (C0, C1, DEL, NUL), bidi controls and unassigned code points "
              "are `400 validation_failed`; lengths count user-perceived characters, at most 4 bytes per allowed character.")
def text(lo, hi, *, nullable=False, nickname=False):
    forbidden = NO_CONTROLS + (WHITE_SPACE if nickname else "")
    rules = TEXT_RULES + (" No white space, no Latin letters mixed with Cyrillic or Greek ones; unique after NFKC "
                          "case folding (`ＡＢ`, `Ab` and `ab` are one nickname)." if nickname else "")
    return {"type": ["string", "null"] if nullable else "string", "minLength": lo, "maxLength": hi,
            "pattern": f"^[^{forbidden}]*$", "description": rules}
REPORT_REASONS = ["spam", "harassment", "inappropriate_profile", "inappropriate_photo", "other"]
keywords = {"type": "array", "items": {"type": "string", "enum": ["energetic", "smart", "friendly", "shy", "independent"]},
            "minItems": 1, "maxItems": 2, "uniqueItems": True}
profile_fields = {
    "nickname": text(2, 8, nickname=True),
    "dog_name": text(1, 15),
    "age": {"type": "integer", "minimum": 0, "maximum": 99},
    "sex": {"type": "string", "enum": ["male", "female"]},
    "neutered": {"type": "boolean"},
    "size": {"type": "string", "enum": ["small", "medium", "large"]},
    "keywords": keywords,
    "profile_image": {**text(1, 200, nullable=True), "description": "The id of a photo of mine (uploaded with "
                      "`PUT /v1/me/photo`), or null; any other value is `400 validation_failed`. Fetch it with "
                      "`GET /v1/photos/{id}`."},
}
card_props = {"user_id": UUID, **profile_fields}
schemas = {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "field": {"type": "string"}}}}},
    "Card": {"type": "object", "required": list(card_props), "properties": card_props},
    "Profile": {"type": "object", "required": list(card_props) + ["created_at"], "properties": {**card_props, "created_at": TIME}},
    "SignUp": {"type": "object", "required": [k for k in profile_fields if k != "profile_image"],
               "properties": {**profile_fields, "profile_image": {**text(1, 200, nullable=True), "description": "Leave it out "
                                                                  "or send null: a new account has no photo yet; upload "
                                                                  "one with `PUT /v1/me/photo`."}}},
    "SignedUp": {"type": "object", "required": ["user_id", "token", "profile"],
                 "properties": {"user_id": UUID, "token": {"type": "string"}, "profile": ref("Profile")}},
    # Any subset of the fields. null is refused (400 validation_failed), except for profile_image,
    # where it removes the photo. `sex` cannot change (`400 validation_failed`).
    "ProfileChanges": {"type": "object", "description": "Any subset of the fields. null is refused, "
                                                        "except for `profile_image`, where it removes the photo.",
                       "properties": {k: v for k, v in profile_fields.items() if k != "sex"}},
    "DeviceToken": {"type": "object", "required": ["device_token"],
                    "properties": {"device_token": {"type": "string", "pattern": "^[0-9a-fA-F]{64,200}$"},
                                   "locale": {"type": "string", "enum": ["ko", "en"], "default": "ko",
                                              "description": "Language of this device's pushes."}}},
    "TransferCode": {"type": "object", "required": ["transfer_code", "expires_at"],
                     "properties": {"transfer_code": {"type": "string", "pattern": "^[A-Z2-7]{26}$",
                                                      "description": "130 random bits, base32: fits a small QR code."},
                                    "expires_at": TIME}},
    "NewSession": {"type": "object", "required": ["transfer_code"],
                   "properties": {"transfer_code": {"type": "string", "maxLength": 200,
                                                    "description": "As handed out; case, spaces and dashes are ignored."}}},
    "Session": {"type": "object", "required": ["session_id", "created_at", "last_seen_at", "current", "push"],
                "properties": {"session_id": UUID, "created_at": TIME,
                               "last_seen_at": {**TIME, "description": "To the minute."},
                               "current": {"type": "boolean", "description": "The session of this request's token."},
                               "push": {"type": "boolean", "description": "This device registered a device token."}}},
    "DropToken": {"type": "object", "required": ["drop_token", "expires_at"],
                  "properties": {"drop_token": {"type": "string"}, "expires_at": TIME}},
    "NewMateRequest": {"type": "object", "required": ["to", "drop_token"],
                       "properties": {"to": UUID, "drop_token": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$",
                                                                 "description": "URL-safe base64, as handed out."}}},
    "MateRequest": {"type": "object", "required": ["request_id", "from", "to", "status", "created_at", "updated_at"],
                    "properties": {"request_id": UUID, "from": ref("Card"), "to": ref("Card"),
                                   "status": {"type": "string", "enum": ["pending", "accepted", "declined", "cancelled"]},
                                   "created_at": TIME, "updated_at": TIME}},
    "Mate": {"type": "object", "required": list(card_props) + ["mates_since"], "properties": {**card_props, "mates_since": TIME}},
    "NewWalk": {"type": "object", "required": ["to", "message", "latitude", "longitude"],
                "properties": {"to": UUID, "message": text(1, 100),
                               "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                               "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                               "place_name": text(1, 100, nullable=True)}},
    "WalkAnswer": {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string", "enum": ["accept", "decline"]}}},
    "Walk": {"type": "object",
             "required": ["walk_id", "from", "to", "message", "latitude", "longitude", "place_name", "status", "created_at", "expires_at", "answered_at"],
             "properties": {"walk_id": UUID, "from": ref("Card"), "to": ref("Card"), "message": {"type": "string"},
                            "latitude": {"type": "number"}, "longitude": {"type": "number"}, "place_name": {"type": ["string", "null"]},
                            "status": {"type": "string", "enum": ["pending", "accepted", "declined", "expired", "cancelled"]},
                            "created_at": TIME, "expires_at": TIME, "answered_at": {"type": ["string", "null"], "format": "date-time"}}},
    "Notification": {"type": "object", "required": ["notification_id", "category", "from", "created_at"],
                     "properties": {"notification_id": UUID,
                                    "category": {"type": "string", "enum": ["mate_requested", "mate_accepted", "walk_requested",
                                                                            "walk_accepted", "walk_declined", "walk_expired"]},
                                    "from": {"type": "object", "required": ["user_id", "dog_name"],
                                             "properties": {"user_id": UUID, "dog_name": {"type": "string"}}},
                                    "request_id": {"type": ["string", "null"], "format": "uuid"},
                                    "walk_id": {"type": ["string", "null"], "format": "uuid"},
                                    "message": {"type": ["string", "null"]}, "latitude": {"type": ["number", "null"]},
                                    "longitude": {"type": ["number", "null"]}, "place_name": {"type": ["string", "null"]},
                                    "created_at": TIME}},
    "NicknameAvailability": {"type": "object", "required": ["nickname", "available"],
                             "properties": {"nickname": {"type": "string", "description": "As it would be stored (NFC)."},
                                            "available": {"type": "boolean"}}},
    "Block": {"type": "object", "required": ["user_id", "dog_name", "nickname", "blocked_at"],
              "properties": {"user_id": UUID, "dog_name": {"type": ["string", "null"]},
                             "nickname": {"type": ["string", "null"]}, "blocked_at": TIME}},
    "NewReport": {"type": "object", "required": ["user_id", "reason"],
                  "properties": {"user_id": UUID,
                                 "reason": {"type": "string", "enum": REPORT_REASONS},
                                 "walk_id": {**UUID, "description": "The walk between us the report is about."},
                                 "note": text(0, 500)}},
    "ReportFiled": {"type": "object", "required": ["report_id"], "properties": {"report_id": UUID}},
    "Report": {"type": "object",
               "required": ["report_id", "reporter", "reported", "reason", "note", "walk_id", "walk_message", "status",
                            "created_at", "resolved_at"],
               "properties": {"report_id": UUID, "reporter": ref("Card"), "reported": ref("Card"),
                              "reason": {"type": "string", "enum": REPORT_REASONS}, "note": {"type": ["string", "null"]},
                              "walk_id": {"type": ["string", "null"], "format": "uuid"},
                              "walk_message": {"type": ["string", "null"], "description": "The reported walk's message."},
                              "status": {"type": "string", "enum": ["open", "resolved"]}, "created_at": TIME,
                              "resolved_at": {"type": ["string", "null"], "format": "date-time"}}},
    "PushSummary": {"type": "object",
                    "required": ["configured", "pending", "retrying", "delivered", "failed", "dropped", "oldest_waiting_seconds",
                                 "failure_reasons"],
                    "properties": {"configured": {"type": "boolean", "description": "APNs settings are present."},
                                   "pending": {"type": "integer"}, "retrying": {"type": "integer"},
                                   "delivered": {"type": "integer"}, "failed": {"type": "integer"},
                                   "dropped": {"type": "integer", "description": "Nothing left to send to (signed out, entry gone)."},
                                   "oldest_waiting_seconds": {"type": "number"},
                                   "failure_reasons": {"type": "array", "items": {"type": "object", "required": ["reason", "count"],
                                       "properties": {"reason": {"type": "string"}, "count": {"type": "integer"}}}}}},
    "Suspension": {"type": "object", "required": ["reason"], "properties": {"reason": text(1, 500)}},
    "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
    "Projections": {"type": "object", "required": ["head", "projectors"], "properties": {
        "head": {"type": "string"},
        "projectors": {"type": "array", "items": {"type": "object",
                       "required": ["name", "checkpoint", "lag_events", "lag_seconds", "state", "updated_at"],
                       "properties": {"name": {"type": "string"}, "checkpoint": {"type": "string"},
                                      "lag_events": {"type": "integer"}, "lag_seconds": {"type": "number"},
                                      "state": {"type": "string", "enum": ["caught_up", "catching_up", "not_started"]},
                                      "updated_at": {"type": ["string", "null"], "format": "date-time"}}}}}},
}
def listof(name):
    """A page of `name`s, as a schema of its own (`<name>Page`), so that a generated client names its type."""
    schemas.setdefault(name + "Page", {"type": "object", "required": ["items", "next_cursor"], "properties": {
        "items": {"type": "array", "items": ref(name)}, "next_cursor": {"type": ["string", "null"]}}})
    return ref(name + "Page")
def body(schema):
    return {"required": True, "content": {"application/json": {"schema": schema}}}

# --- Links: from an answer's ids to the operations that take them ---------------------------
# Runtime expressions of OpenAPI 3.1 (`$response.body#/json-pointer`, `$response.header.Name`).
# A link that only reads a list's first item is followed only when the list is not empty.
def link(operation, desc, parameters=None, request_body=None):
    l = {"operationId": operation, "description": desc}
    if parameters: l["parameters"] = parameters
    if request_body is not None: l["requestBody"] = request_body
    return l
def read_your_write(operation, id_expr, desc):
    """A read of what the command just wrote: the id, and the command's Log-Position as Min-Log-Position."""
    return link(operation, desc, {"path.id": id_expr, "header.Min-Log-Position": "$response.header.Log-Position"})
def mate_request_links(ptr, other_ptrs=()):
    """From a mate request at JSON pointer `ptr` (`/` for the answer itself, `/items/0/` in a list)."""
    links = {
        "AcceptRequest": link("acceptMate", "Accept it (the addressee only).", {"path.id": f"$response.body#{ptr}request_id"}),
        "DeclineRequest": link("declineMate", "Decline it (the addressee only).", {"path.id": f"$response.body#{ptr}request_id"}),
        "CancelRequest": link("cancelMateRequest", "Cancel it (the requester only, while pending).",
                              {"path.id": f"$response.body#{ptr}request_id"}),
    }
    for side in other_ptrs:
        links[f"{side.capitalize()}Card"] = link("getCard", f"The `{side}` card: a request between us makes it visible.",
                                                 {"path.id": f"$response.body#{ptr}{side}/user_id"})
    return links
def walk_links(ptr, read=None):
    """From a walk at `ptr`; `read` overrides the GetWalk link (commands: read-your-writes)."""
    return {
        "RespondToWalk": link("respondWalk", "Answer it (the addressee only, before expires_at).",
                              {"path.id": f"$response.body#{ptr}walk_id"}),
        "CancelWalk": link("cancelWalk", "Cancel it (the sender only, while pending).", {"path.id": f"$response.body#{ptr}walk_id"}),
        "GetWalk": read or link("getWalk", "Read it (its sender or addressee).", {"path.id": f"$response.body#{ptr}walk_id"}),
        "FromCard": link("getCard", "The sender's card.", {"path.id": f"$response.body#{ptr}from/user_id"}),
        "ToCard": link("getCard", "The addressee's card.", {"path.id": f"$response.body#{ptr}to/user_id"}),
    }
def mate_links(id_expr):
    """From a mate's (or a connected user's) id."""
    return {
        "Unpair": link("unpair", "Unpair from this user (`404 not_mates` unless we are mates).", {"path.user_id": id_expr}),
        "Card": link("getCard", "This user's card.", {"path.id": id_expr}),
        "SendWalk": link("sendWalk", "Ask this user for a walk (`409 not_mates` unless we are mates).",
                         request_body={"to": id_expr}),
    }

# --- Operations -----------------------------------------------------------------------------
# Every route: 429 past the client's budget (per IP before sign-in, per user after), except
# /healthz, /readyz and /metrics; 400 validation_failed from any header, query or path value; 503
# when the database is down, too slow or overloaded.
CODES_400 = ("validation_failed",)
CODES_400_BODY = ("invalid_json", "validation_failed")
CODES_503 = ("unavailable", "overloaded", "request_timeout")
RATE_LIMITED = err("Past this client's request budget (per IP address before sign-in, per user after).", "rate_limited",
                   headers={"Retry-After": {**RETRY_AFTER, "required": True}})
# Answers many operations share are written once, under components/responses.
shared_responses = {}
def shared(name, response):
    shared_responses.setdefault(name, response)
    assert shared_responses[name] == response, name
    return {"$ref": f"#/components/responses/{name}"}
UNAVAILABLE_NAMES = {CODES_503: "Unavailable", CODES_503 + ("not_caught_up",): "NotCaughtUp"}
def operation(op_id, summary, answers, *, params=(), request_body=None, public=False, errors=None, codes_503=CODES_503,
              rate_limited=True, database=True, description=None, checks_values=True, anonymous=False):
    """An operation with its own answers plus the ones every route shares."""
    responses = dict(answers)
    errors = dict(errors or {})
    takes_values = checks_values and (bool(params) or request_body is not None)
    if takes_values and "400" not in errors:
        errors["400"] = err("A header, query or path value out of range (Idempotency-Key, Min-Log-Position, cursor, "
                            "limit, ...)" + (", or a malformed body" if request_body is not None else "") +
                            "; `field` names it.", *(CODES_400_BODY if request_body is not None else CODES_400))
    if request_body is not None or any(p["name"] == "Idempotency-Key" for p in params):
        errors.setdefault("413", shared("BodyTooLarge", err("Body over 16 KiB.", "body_too_large")))
    # An anonymous request's key is scoped by the request itself (IdempotencyStore.anonymousScope):
    # another request with the key is another scope, never `422`.
    if any(p["name"] == "Idempotency-Key" for p in params) and not anonymous:
        errors.setdefault("422", shared("IdempotencyKeyReused", err("This Idempotency-Key came with a different request.",
                                                                    "idempotency_key_reused")))
    if not public:
        errors["401"] = shared("Unauthorized", err("Missing, wrong, signed-out or revoked bearer token.", "unauthorized"))
    if rate_limited and "429" not in errors:
        errors["429"] = shared("RateLimited", RATE_LIMITED)
    if database and "503" not in errors:
        unavailable = err("The database is down, too slow or overloaded" +
                          (", or the read models have not reached Min-Log-Position within 3 s" if "not_caught_up" in codes_503 else "") +
                          "; try again.", *codes_503, headers={"Retry-After": RETRY_AFTER})
        errors["503"] = shared(UNAVAILABLE_NAMES[codes_503], unavailable) if codes_503 in UNAVAILABLE_NAMES else unavailable
    responses.update(errors)
    o = {"operationId": op_id, "summary": summary}
    if description: o["description"] = description
    if public: o["security"] = []
    o["parameters"] = list(params)
    if request_body is not None: o["requestBody"] = request_body
    o["responses"] = dict(sorted(responses.items()))
    return o

READ_503 = CODES_503 + ("not_caught_up",)
# Commands that first wait for the read models to include the whole log (who is tied to whom).
SETTLING_503 = err("The database is down, too slow or overloaded, or the read models did not catch up with the log "
                   "within 3 s; try again.", *READ_503, headers={"Retry-After": RETRY_AFTER})
# Live streams are not cut by the request timeout.
STREAM_503 = err("The database is down, too slow or overloaded; try again.", "unavailable", "overloaded",
                 headers={"Retry-After": RETRY_AFTER})
# Photos: raw image bytes in, JPEG out, cached for good.
PHOTO_BODY = {"required": True, "description": "The image file as it is, at most 10 MiB.",
              "content": {t: {"schema": {"type": "string", "format": "binary"}}
                          for t in ("image/jpeg", "image/png", "image/heic", "image/webp")}}
IF_NONE_MATCH = param("If-None-Match", "header", {"type": "string", "maxLength": 2000},
                      "ETags the client holds: `304` when one is this copy's.")
PHOTO_HEADERS = {"ETag": {"description": "Strong validator of this copy.", "required": True, "schema": {"type": "string"}},
                 "Cache-Control": {"description": "`public, max-age=31536000, immutable`: a photo never changes.",
                                   "required": True, "schema": {"type": "string"}}}
def photo_answers(desc):
    return {"200": {"description": desc, "headers": PHOTO_HEADERS,
                    "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}}},
            "304": {"description": "The client's copy (If-None-Match) is current.", "headers": PHOTO_HEADERS}}
paths = {
    "/v1/users": {"post": operation("signUp", "Sign up anonymously with the dog profile.", public=True, anonymous=True,
        params=[IDEM],
        request_body=body(ref("SignUp")),
        answers={"201": ok("Registered; the only answer that ever shows this token.", ref("SignedUp"), LOGPOS, links={
            "Card": link("getCard", "The new user's card: `404` to anyone not connected to them (no hint that the user exists).",
                         {"path.id": "$response.body#/user_id"})})},
        errors={"409": err("The nickname is taken, or this sign-up already happened (a repeat with the same Idempotency-Key "
                           "never shows the token again).", "nickname_taken", "already_registered",
                           "idempotency_key_in_use")})},
    "/v1/me": {
        "get": operation("getMe", "My profile.", params=[MINPOS], codes_503=READ_503,
                         answers={"200": ok("My profile.", ref("Profile"))},
                         errors={"404": err("Profile not projected yet.", "not_found")}),
        "patch": operation("updateMe", "Change parts of my profile.", request_body=body(ref("ProfileChanges")),
                           answers={"200": ok("The changed profile.", ref("Profile"), LOGPOS)},
                           errors={"404": err("No such user.", "not_found"),
                                   "409": err("The nickname is taken, or a request with this Idempotency-Key is still "
                                              "running.", "nickname_taken", "idempotency_key_in_use")}),
        "delete": operation("deleteMe", "Delete my account at once and for good.",
                            description="Its sessions, drop tokens and stored answers are gone; mates are unpaired; pending "
                                        "requests and walks are cancelled; its nickname is free again. Its data key is "
                                        "destroyed, so nothing it wrote stays readable anywhere in the database, the log "
                                        "included. This token stops working.",
                            answers={"204": no_content("Deleted.", LOGPOS)},
                            errors={"404": err("Already deleted (by another of its sessions at the same time).",
                                               "user_not_found"),
                                    "503": SETTLING_503,
                                    "422": err("This Idempotency-Key came with another command (whose answer is no longer "
                                               "kept): nothing was deleted.", "idempotency_key_reused")})},
    "/v1/me/device-token": {
        "put": operation("setDeviceToken", "Push to this session's device; a token another session held moves here.",
                         request_body=body(ref("DeviceToken")), answers={"204": no_content("Stored with this session.")}),
        "delete": operation("deleteDeviceToken", "Stop pushing to this session's device.",
                            answers={"204": no_content("No more pushes to this device.")})},
    "/v1/me/photo": {
        "put": operation("setPhoto", "Set my profile photo from the raw image bytes; the old one is deleted.",
                         description="The server keeps only a re-encoded JPEG copy: turned upright by its orientation "
                                     "tag, stripped of all metadata (GPS position, camera, time), at most 1080 px on its "
                                     "longest side, plus a 200 x 200 thumbnail. At most 10 MiB and 50 megapixels; "
                                     "animations and multi-page files are refused.",
                         request_body=PHOTO_BODY,
                         answers={"200": ok("My profile, `profile_image` the new photo's id.", ref("Profile"), LOGPOS, links={
                             "Photo": link("getPhoto", "The new photo.", {"path.id": "$response.body#/profile_image"}),
                             "Thumbnail": link("getPhotoThumbnail", "Its thumbnail.",
                                               {"path.id": "$response.body#/profile_image"})})},
                         errors={"400": err("Not a readable image: no JPEG, PNG, WebP or HEIF signature, truncated or "
                                            "corrupt, or more than 50 megapixels.", "invalid_image"),
                                 "413": err("Body over 10 MiB.", "body_too_large"),
                                 "415": err("Content-Type is not image/jpeg, image/png, image/heic or image/webp, the "
                                            "bytes are another format than it names, or the image is animated or has "
                                            "several pages.", "unsupported_image"),
                                 "404": err("No such user.", "not_found")}),
        "delete": operation("deletePhoto", "Remove my profile photo (it is deleted).",
                            answers={"200": ok("My profile, `profile_image` null.", ref("Profile"), LOGPOS)},
                            errors={"404": err("No such user.", "not_found")})},
    "/v1/photos/{id}": {"get": operation("getPhoto", "A profile photo, to anyone holding its id.", public=True,
        params=[idparam("id", "Photo id"), IF_NONE_MATCH], answers=photo_answers("The photo, at most 1080 px."),
        errors={"404": err("No such photo, or deleted (also for an id that is not a UUID).", "not_found")})},
    "/v1/photos/{id}/thumbnail": {"get": operation("getPhotoThumbnail", "A profile photo's 200 x 200 thumbnail, to anyone "
                                                                        "holding its id.", public=True,
        params=[idparam("id", "Photo id"), IF_NONE_MATCH], answers=photo_answers("The 200 x 200 thumbnail."),
        errors={"404": err("No such photo, or deleted (also for an id that is not a UUID).", "not_found")})},
    "/v1/me/transfer-codes": {"post": operation("newTransferCode", "A one-time code to sign this account in on another phone.",
        params=[IDEM],
        answers={"201": ok("Valid 10 minutes, single use.", ref("TransferCode"))},
        errors={"409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/sessions": {"post": operation("signIn", "Sign in on a new phone with a transfer code.", public=True, anonymous=True,
        params=[IDEM],
        request_body=body(ref("NewSession")),
        answers={"201": ok("A new session; the only answer that ever shows its token.", ref("SignedUp"))},
        errors={"403": err("The code is not one that was handed out, or it was used; or the account is suspended.",
                           "invalid_transfer_code", "account_suspended"),
                "409": err("This sign-in already happened (a repeat with the same Idempotency-Key never shows the token "
                           "again), or it is still running.", "already_registered", "idempotency_key_in_use"),
                "410": err("The code expired (it is spent all the same).", "transfer_code_expired")})},
    "/v1/me/sessions": {"get": operation("listSessions", "My sessions, newest first.", params=[LIMIT, CURSOR],
        answers={"200": ok("A page.", listof("Session"), links={
            "SignOutThere": link("signOutElsewhere", "Sign that device out.", {"path.id": "$response.body#/items/0/session_id"}),
            "NextPage": link("listSessions", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/me/session": {"delete": operation("signOut", "Sign out here: this token stops working on every server within a "
                                                      "second, and this device gets no more pushes.",
        answers={"204": no_content("Signed out.")})},
    "/v1/me/sessions/{id}": {"delete": operation("signOutElsewhere", "Sign out another of my devices.",
        params=[idparam("id", "Session id")], checks_values=False,
        answers={"204": no_content("Signed out.")},
        errors={"404": err("Not one of my sessions (also for an id that is not a UUID).", "not_found")})},
    "/v1/me/drop-tokens": {"post": operation("newDropToken", "A fresh drop token for my profile card.", params=[IDEM],
        answers={"201": ok("Valid 5 minutes, single use.", ref("DropToken"), links={
            "RequestMate": link("requestMate", "Someone who holds this token asks me (here: the caller, so "
                                "`400 cannot_request_self` unless `to` is another user, then `403 invalid_drop_token`).",
                                request_body={"drop_token": "$response.body#/drop_token"})})},
        errors={"409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/users/{id}": {"get": operation("getCard", "The dog card of a mate or of someone with a request or walk between us.",
        params=[idparam("id", "User id"), MINPOS], codes_503=READ_503,
        answers={"200": ok("The card.", ref("Card"), links={
            "Unpair": link("unpair", "Unpair from this user.", {"path.user_id": "$response.body#/user_id"})})},
        errors={"404": err("Unknown, or not connected to me (no hint that the user exists).", "not_found")})},
    "/v1/mate-requests": {"post": operation("requestMate", "RequestMate with the drop token `to` handed over.", params=[IDEM],
        request_body=body(ref("NewMateRequest")),
        answers={"201": ok("Pending request.", ref("MateRequest"), LOGPOS, links=mate_request_links("/", ("to",))),
                 "200": ok("Accepted: `to` had already asked me.", ref("MateRequest"), LOGPOS,
                           links={**mate_request_links("/", ("to",)), **mate_links("$response.body#/to/user_id")})},
        errors={"400": err("Malformed body, a field out of range, or `to` is me.", "invalid_json", "validation_failed",
                           "cannot_request_self"),
                "403": err("The drop token is not one `to` handed out unused (also when `to` blocked me).", "invalid_drop_token"),
                "404": err("No such user.", "not_found"),
                "409": err("Already mates, or a request with this Idempotency-Key is still running.", "already_mates",
                           "idempotency_key_in_use"),
                "410": err("The drop token expired.", "drop_token_expired")})},
    "/v1/mate-requests/{id}/accept": {"post": operation("acceptMate", "AcceptMate, by the addressee.",
        params=[idparam("id", "Mate request id"), IDEM],
        answers={"200": ok("Accepted: we are mates.", ref("MateRequest"), LOGPOS,
                           links=mate_links("$response.body#/from/user_id"))},
        errors={"403": err("Only the addressee answers.", "not_addressee"), "404": err("No such request.", "not_found"),
                "409": err("Not pending any more, or a request with this Idempotency-Key is still running.", "not_pending",
                           "idempotency_key_in_use")})},
    "/v1/mate-requests/{id}/decline": {"post": operation("declineMate", "Decline, by the addressee.",
        params=[idparam("id", "Mate request id"), IDEM],
        answers={"200": ok("Declined.", ref("MateRequest"), LOGPOS)},
        errors={"403": err("Only the addressee answers.", "not_addressee"), "404": err("No such request.", "not_found"),
                "409": err("Not pending any more, or a request with this Idempotency-Key is still running.", "not_pending",
                           "idempotency_key_in_use")})},
    "/v1/mate-requests/{id}": {"delete": operation("cancelMateRequest", "Cancel, by the requester, while pending.",
        description="A cancel, not a removal: the request stays in both users' lists with status `cancelled`.",
        params=[idparam("id", "Mate request id")],
        answers={"200": ok("Cancelled.", ref("MateRequest"), LOGPOS)},
        errors={"403": err("Only the requester cancels.", "not_requester"), "404": err("No such request.", "not_found"),
                "409": err("Not pending any more, or a request with this Idempotency-Key is still running.", "not_pending",
                           "idempotency_key_in_use")})},
    "/v1/me/mate-requests": {"get": operation("listMateRequests", "My mate requests, newest first.", codes_503=READ_503,
        params=[DIRECTION, status_filter("pending", "accepted", "declined", "cancelled"),
                LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("MateRequest"), links={
            **mate_request_links("/items/0/", ("from", "to")),
            "NextPage": link("listMateRequests", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/me/mates": {"get": operation("listMates", "My mates: cards plus mates_since.", codes_503=READ_503,
        params=[LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("Mate"), links={
            **mate_links("$response.body#/items/0/user_id"),
            "NextPage": link("listMates", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/me/mates/{user_id}": {"delete": operation("unpair", "Unpair.", params=[idparam("user_id", "The mate's user id")],
        answers={"204": no_content("Unpaired.", LOGPOS)},
        errors={"404": err("We are not mates (also for an id that is not a UUID).", "not_mates")})},
    "/v1/walks": {"post": operation("sendWalk", "SendWalk to a current mate.", params=[IDEM], request_body=body(ref("NewWalk")),
        answers={"201": ok("Sent; answerable until expires_at.", ref("Walk"), LOGPOS, links=walk_links("/", read=read_your_write(
            "getWalk", "$response.body#/walk_id", "Read it at least at the send's Log-Position (read-your-writes).")))},
        errors={"404": err("No such user.", "not_found"),
                "409": err("We are not mates, or a request with this Idempotency-Key is still running.", "not_mates",
                           "idempotency_key_in_use")})},
    "/v1/walks/{id}/response": {"post": operation("respondWalk", "RespondWalk, by the addressee, before expires_at.",
        params=[idparam("id", "Walk id"), IDEM], request_body=body(ref("WalkAnswer")),
        answers={"200": ok("Answered.", ref("Walk"), LOGPOS, links={"GetWalk": read_your_write(
            "getWalk", "$response.body#/walk_id", "Read it at least at the answer's Log-Position (read-your-writes).")})},
        errors={"403": err("Only the addressee answers.", "not_addressee"), "404": err("No such walk.", "not_found"),
                "409": err("Already answered or cancelled, or a request with this Idempotency-Key is still running.",
                           "already_answered", "idempotency_key_in_use"),
                "410": err("The walk expired.", "walk_expired")})},
    "/v1/walks/{id}": {
        "delete": operation("cancelWalk", "Cancel, by the sender, while pending.", params=[idparam("id", "Walk id")],
            description="A cancel, not a removal: the walk stays readable to both (`GET /v1/walks/{id}`) with status "
                        "`cancelled`.",
            answers={"200": ok("Cancelled.", ref("Walk"), LOGPOS)},
            errors={"403": err("Only the sender cancels.", "not_sender"), "404": err("No such walk.", "not_found"),
                    "409": err("Already answered or cancelled, or a request with this Idempotency-Key is still running.",
                               "already_answered", "idempotency_key_in_use"),
                    "410": err("The walk expired.", "walk_expired")}),
        "get": operation("getWalk", "One walk, to its sender or addressee.", params=[idparam("id", "Walk id"), MINPOS],
            codes_503=READ_503,
            description="Cancelled walks stay readable (a `DELETE` of a walk cancels it; it does not remove it).",
            answers={"200": ok("The walk.", ref("Walk"))},
            errors={"404": err("No such walk, or not mine (no hint that it exists).", "not_found")})},
    "/v1/me/walks": {"get": operation("listWalks", "My walks, newest first.", codes_503=READ_503,
        params=[DIRECTION, status_filter("pending", "accepted", "declined", "expired", "cancelled"),
                LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("Walk"), links={
            **walk_links("/items/0/"),
            "NextPage": link("listWalks", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/me/notifications": {"get": operation("listNotifications", "My inbox, newest first.", codes_503=READ_503,
        params=[LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("Notification"), links={
            "Dismiss": link("dismissNotification", "Remove it from my inbox.",
                            {"path.id": "$response.body#/items/0/notification_id"}),
            "FromCard": link("getCard", "The card of whom it is from.", {"path.id": "$response.body#/items/0/from/user_id"}),
            "GetWalk": link("getWalk", "Its walk (walk entries only).", {"path.id": "$response.body#/items/0/walk_id"}),
            "AcceptRequest": link("acceptMate", "Accept its mate request (mate_requested entries only).",
                                  {"path.id": "$response.body#/items/0/request_id"}),
            "RespondToWalk": link("respondWalk", "Answer its walk (walk_requested entries only).",
                                  {"path.id": "$response.body#/items/0/walk_id"}),
            "NextPage": link("listNotifications", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})}),
        "delete": operation("clearNotifications", "Empty my inbox (entries made later stay).",
            answers={"204": no_content("Emptied.", LOGPOS)})},
    "/v1/me/blocks": {"get": operation("listBlocks", "Whom I blocked, newest first.", codes_503=READ_503,
        params=[LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("Block"), links={
            "Unblock": link("unblock", "Lift this block.", {"path.user_id": "$response.body#/items/0/user_id"}),
            "NextPage": link("listBlocks", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/me/blocks/{user_id}": {
        "put": operation("block", "Block: unpairs us, cancels pending requests and walks between us.",
            description="From then on their mate requests are refused as `403 invalid_drop_token`, walks are impossible, "
                        "and my card is `404` to them. `204` also for an unknown id (no hint that a user exists).",
            params=[idparam("user_id", "User id"), IDEM],
            answers={"204": no_content("Blocked.", LOGPOS)},
            errors={"400": err("The id is mine, or a header is out of range.", "validation_failed"),
                    "404": err("Not a user id (not a UUID).", "not_found"),
                    "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use"),
                    "503": SETTLING_503}),
        "delete": operation("unblock", "Unblock (we stay unpaired).", params=[idparam("user_id", "User id")],
            answers={"204": no_content("Not blocked.", LOGPOS)},
            errors={"400": err("The id is mine.", "validation_failed"),
                    "404": err("Not a user id (not a UUID).", "not_found")})},
    "/v1/reports": {"post": operation("report", "Report someone I have or had a mate request, mate or walk with.",
        params=[IDEM], request_body=body(ref("NewReport")),
        answers={"201": ok("Filed for the operators' review.", ref("ReportFiled"), LOGPOS)},
        errors={"404": err("Not someone I have met, or the walk is not one between us (no hint that either exists).",
                           "not_found"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/admin/reports": {"get": operation("listReports",
        "(admin token) Reports with both cards, the reason, the note and the reported walk's message.", public=True,
        codes_503=READ_503, params=[status_filter("open", "resolved"), LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page (default status `open`).", listof("Report"), links={
            "Resolve": link("resolveReport", "Mark it dealt with.", {"path.id": "$response.body#/items/0/report_id"}),
            "NextPage": link("listReports", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})},
        errors={"401": err("Missing or wrong admin token (a user's token too), or none configured.", "unauthorized")})},
    "/v1/admin/reports/{id}/resolve": {"post": operation("resolveReport", "(admin token) Mark a report dealt with.",
        public=True, params=[idparam("id", "Report id"), IDEM],
        answers={"200": ok("The report, resolved.", ref("Report"), LOGPOS)},
        errors={"401": err("Missing or wrong admin token (a user's token too), or none configured.", "unauthorized"),
                "404": err("No such report.", "not_found"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/admin/users/{id}/suspend": {"post": operation("suspendUser",
        "(admin token) Suspend: every session revoked, new sessions refused, card 404, pending requests and walks "
        "cancelled.", public=True, params=[idparam("id", "User id"), IDEM], request_body=body(ref("Suspension")),
        answers={"204": no_content("Suspended.", LOGPOS)},
        errors={"401": err("Missing or wrong admin token (a user's token too), or none configured.", "unauthorized"),
                "404": err("No such user.", "not_found", "user_not_found"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/admin/users/{id}/unsuspend": {"post": operation("unsuspendUser", "(admin token) Lift a suspension.",
        public=True, params=[idparam("id", "User id"), IDEM],
        answers={"204": no_content("Not suspended.", LOGPOS)},
        errors={"401": err("Missing or wrong admin token (a user's token too), or none configured.", "unauthorized"),
                "404": err("No such user.", "not_found", "user_not_found"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/admin/push": {"get": operation("pushStatus",
        "(admin token) Pushes pending, retrying, delivered, failed and dropped; the oldest waiting; common failures.",
        public=True, answers={"200": ok("The push outbox.", ref("PushSummary"))},
        errors={"401": err("Missing or wrong admin token (a user's token too), or none configured.", "unauthorized")})},
    "/v1/nicknames/{nickname}": {"get": operation("nicknameAvailability",
        "Is this nickname free? (onboarding checks as the user types; a budget per address of its own)", public=True,
        params=[param("nickname", "path", {k: v for k, v in text(2, 8, nickname=True).items() if k != "description"},
                      "The nickname, percent-encoded; the rules of a profile's `nickname`.", True)],
        answers={"200": ok("Whether it is free now (a sign-up may still take it first).", ref("NicknameAvailability"))},
        errors={"400": err("Not a valid nickname (2-8 characters, the text rules).", "validation_failed")})},
    "/v1/me/notifications/{id}": {"delete": operation("dismissNotification", "Remove one entry from my inbox.",
        params=[idparam("id", "Notification id")],
        answers={"204": no_content("Removed.", LOGPOS)},
        errors={"404": err("Not in my inbox.", "not_found")})},
    "/v1/me/notifications/stream": {"get": operation("streamNotifications",
        "Server-Sent Events: `event: notification`, one JSON entry per `data:`, id = log position; heartbeat comments.",
        description="The stream ends after 10 minutes (or when the client reads too slowly); resume with Last-Event-ID. "
                    "At most 5 open streams per user and 5000 per process: past that `429 rate_limited`.",
        params=[LAST_EVENT_ID],
        answers={"200": {"description": "An event stream (ends after 10 minutes).",
                         "content": {"text/event-stream": {"schema": sse_event("notification")}}}},
        errors={"429": err("Past this user's request budget, or too many open streams (5 per user, 5000 per process).",
                           "rate_limited", headers={"Retry-After": {**RETRY_AFTER, "required": True}}),
                "503": STREAM_503})},
    "/healthz": {"get": operation("health", "200 while the process runs.", public=True, rate_limited=False, database=False,
        answers={"200": ok("Alive.", ref("Status"))})},
    "/readyz": {"get": operation("ready", "200 once the database answers and the schema is current.", public=True,
        rate_limited=False, codes_503=("unavailable", "overloaded", "request_timeout", "schema_not_current"),
        answers={"200": ok("Ready.", ref("Status"))})},
    "/metrics": {"get": operation("metrics", "Prometheus text exposition.", public=True, rate_limited=False, database=False,
        answers={"200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}})},
    "/openapi.json": {"get": operation("openapi", "This document.", public=True, database=False,
        answers={"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}})},
    "/v1/admin/projections": {"get": operation("projections",
        "Each projector's checkpoint, lag and state (bearer SNIFFMEET_ADMIN_TOKEN).", public=True,
        answers={"200": ok("Projectors.", ref("Projections"))},
        errors={"401": err("Missing or wrong admin token (or none configured).", "unauthorized")})},
}
# --- Walk log (API.md "Walk log") -------------------------------------------------------------
BOUNDS = {"type": ["object", "null"], "required": ["south", "west", "north", "east"],
          "description": "The box around the route as this reader sees it; null when all of it is hidden.",
          "properties": {k: {"type": "number"} for k in ("south", "west", "north", "east")}}
schemas.update({
    "WalkLog": {"type": "object", "required": ["walk_log_id", "owner", "walk_id", "started_at", "ended_at", "elapsed_seconds",
                                               "moving_seconds", "distance_m", "route", "bounds", "visibility", "created_at"],
                "properties": {"walk_log_id": UUID, "owner": ref("Card"), "walk_id": {**UUID, "type": ["string", "null"]},
                               "started_at": TIME, "ended_at": TIME, "elapsed_seconds": {"type": "integer", "minimum": 0},
                               "moving_seconds": {"type": "integer", "minimum": 0},
                               "distance_m": {"type": "number", "minimum": 0, "description": "On the WGS84 ellipsoid."},
                               "route": {"type": "string", "description": "Google encoded polyline (precision 5), simplified; "
                                         "for everyone but the owner without the first and last 200 m and the owner's privacy zones."},
                               "bounds": BOUNDS, "visibility": {"type": "string", "enum": ["mates", "private"]},
                               "created_at": TIME}},
    "NewWalkLog": {"type": "object", "required": ["points"], "properties": {
        "walk_id": {**UUID, "description": "An accepted walk of mine."},
        "visibility": {"type": "string", "enum": ["mates", "private"], "default": "mates"},
        "points": {"type": "array", "minItems": 2, "maxItems": 20000, "items": {
            "type": "object", "required": ["time", "latitude", "longitude"],
            "properties": {"time": TIME, "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                           "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                           "accuracy": {"type": "number", "minimum": 0, "description": "Metres; fixes over 50 m are dropped."}}}}}},
    "WalkLogVisibility": {"type": "object", "required": ["visibility"],
                          "properties": {"visibility": {"type": "string", "enum": ["mates", "private"]}}},
    "PrivacyZones": {"type": "object", "required": ["zones"], "properties": {"zones": {"type": "array", "maxItems": 3, "items": {
        "type": "object", "required": ["latitude", "longitude", "radius_m"],
        "properties": {"latitude": {"type": "number", "minimum": -90, "maximum": 90},
                       "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                       "radius_m": {"type": "number", "minimum": 200, "maximum": 1600}}}}}},
    "WalkTotals": {"type": "object", "required": ["walks", "distance_m", "moving_seconds"],
                   "properties": {"week_start": {"type": "string", "format": "date"}, "walks": {"type": "integer"},
                                  "distance_m": {"type": "number"}, "moving_seconds": {"type": "integer"}}},
    "WalkStats": {"type": "object", "required": ["time_zone", "this_week", "this_month", "weeks"],
                  "properties": {"time_zone": {"type": "string"}, "this_week": ref("WalkTotals"), "this_month": ref("WalkTotals"),
                                 "weeks": {"type": "array", "items": ref("WalkTotals"), "minItems": 12, "maxItems": 12,
                                           "description": "The last 12 ISO weeks, this one first."}}},
})
WALK_LOG_UPLOAD = {"required": True, "description": "JSON, or a GPX 1.1 file (its tracks' points in order; `walk_id` and "
                   "`visibility` then as query parameters); at most 2 MiB. A GPX file with a DOCTYPE or any entity but the "
                   "predefined and numeric ones is refused unread.",
                   "content": {"application/json": {"schema": ref("NewWalkLog")},
                               "application/gpx+xml": {"schema": {"type": "string"}}}}
WALK_LOG_ID = idparam("id", "Walk log id")
paths.update({
    "/v1/walk-logs": {"post": operation("recordWalkLog", "Record a walk: checked, cleaned and measured by the server.",
        params=[IDEM, param("walk_id", "query", UUID, "(GPX uploads) An accepted walk of mine."),
                param("visibility", "query", {"type": "string", "enum": ["mates", "private"]}, "(GPX uploads) Default mates.")],
        request_body=WALK_LOG_UPLOAD,
        answers={"201": ok("Recorded; the whole route, as its owner sees it.", ref("WalkLog"), LOGPOS)},
        errors={"413": err("Body over 2 MiB.", "body_too_large"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/walk-logs/{id}": {
        "get": operation("getWalkLog", "One walk log: whole to its owner, with privacy applied to a mate.",
            params=[WALK_LOG_ID, MINPOS], codes_503=READ_503, answers={"200": ok("The walk log.", ref("WalkLog"))},
            errors={"404": err("No such walk log, or not one I may see.", "not_found")}),
        "patch": operation("changeWalkLogVisibility", "Change who sees it (the owner).", params=[WALK_LOG_ID, IDEM],
            request_body=body(ref("WalkLogVisibility")), answers={"200": ok("Changed.", ref("WalkLog"), LOGPOS)},
            errors={"404": err("No such walk log of mine.", "not_found"),
                    "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")}),
        "delete": operation("deleteWalkLog", "Delete it: its route becomes unreadable everywhere in the database.",
            params=[WALK_LOG_ID], answers={"204": no_content("Deleted.", LOGPOS)},
            errors={"404": err("No such walk log of mine.", "not_found")})},
    "/v1/walk-logs/{id}/gpx": {"get": operation("exportWalkLog", "The owner's whole route as GPX 1.1.",
        params=[WALK_LOG_ID, MINPOS], codes_503=READ_503,
        answers={"200": {"description": "GPX 1.1.", "content": {"application/gpx+xml": {"schema": {"type": "string"}}}}},
        errors={"404": err("No such walk log of mine.", "not_found")})},
    "/v1/me/walk-logs": {"get": operation("listMyWalkLogs", "My walk logs, newest first.", codes_503=READ_503,
        params=[LIMIT, CURSOR, MINPOS], answers={"200": ok("A page.", listof("WalkLog"))})},
    "/v1/users/{id}/walk-logs": {"get": operation("listUsersWalkLogs", "A mate's walk logs that I may see, newest first.",
        codes_503=READ_503, params=[idparam("id", "User id"), LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("WalkLog"))},
        errors={"404": err("Not my mate.", "not_found")})},
    "/v1/me/privacy-zones": {
        "put": operation("putPrivacyZones", "Replace my privacy zones (0-3, radius 200-1600 m).",
            request_body=body(ref("PrivacyZones")), answers={"200": ok("My zones.", ref("PrivacyZones"))}),
        "get": operation("getPrivacyZones", "My privacy zones.", answers={"200": ok("My zones.", ref("PrivacyZones"))})},
    "/v1/me/walk-stats": {"get": operation("walkStats", "Walks, distance and moving time: this ISO week, this month, the last 12 weeks.",
        codes_503=READ_503,
        params=[param("tz", "query", {"type": "string", "minLength": 1, "maxLength": 64, "default": "UTC"}, "IANA time zone, e.g. Asia/Seoul."),
                MINPOS],
        answers={"200": ok("The figures.", ref("WalkStats"))})},
})
# --- Chat between mates (API.md "Chat between mates") ------------------------------------------
schemas.update({
    "ChatMessage": {"type": "object",
                    "required": ["message_id", "seq", "from", "text", "photo_id", "sent_at", "edited_at", "unsent"],
                    "properties": {"message_id": UUID, "seq": {"type": "integer", "minimum": 1,
                                                                "description": "Its place in the conversation: 1, 2, 3, ... "
                                                                               "with no gaps, the same for both sides."},
                                   "from": UUID, "text": {**text(1, 1000, nullable=True), "description": "Null once unsent "
                                                          "(or for a photo alone). " + TEXT_RULES},
                                   "photo_id": {"type": ["string", "null"], "format": "uuid"},
                                   "sent_at": TIME, "edited_at": {"type": ["string", "null"], "format": "date-time"},
                                   "unsent": {"type": "boolean"}}},
    "NewChatMessage": {"type": "object", "description": "At least one of `text` and `photo_id` (a photo uploaded with "
                                                        "`POST /v1/chats/{user_id}/photos`).",
                       "properties": {"text": text(1, 1000), "photo_id": UUID}},
    "ChatEdit": {"type": "object", "required": ["text"], "properties": {"text": text(1, 1000)}},
    "ReadMarker": {"type": "object", "required": ["up_to"],
                   "properties": {"up_to": {"type": "integer", "minimum": 0, "maximum": 2147483647}}},
    "Conversation": {"type": "object",
                     "required": ["user_id", "card", "last_message", "unread_count", "read_up_to", "their_read_up_to",
                                  "can_write", "updated_at"],
                     "properties": {"user_id": UUID, "card": ref("Card"), "last_message": ref("ChatMessage"),
                                    "unread_count": {"type": "integer", "minimum": 0},
                                    "read_up_to": {"type": "integer", "minimum": 0},
                                    "their_read_up_to": {"type": "integer", "minimum": 0},
                                    "can_write": {"type": "boolean"}, "updated_at": TIME}},
    "ChatPhoto": {"type": "object", "required": ["photo_id"], "properties": {"photo_id": UUID}},
})
schemas["NewReport"].setdefault("properties", {})["message_id"] = {**UUID, "description": "A message of theirs in our "
                                                                  "conversation (`404` otherwise)."}
schemas["Report"]["required"] += ["message_id", "message_text"]
schemas["Report"]["properties"].update({
    "message_id": {"type": ["string", "null"], "format": "uuid", "description": "The reported chat message."},
    "message_text": {"type": ["string", "null"], "description": "The reported message's text, while readable (null once "
                                                                "unsent or erased)."}})
MATE = idparam("user_id", "The mate's user id (names the conversation)")
MESSAGE = idparam("message_id", "Message id")
CHAT_PHOTO = idparam("photo_id", "Chat photo id")
def chat_links(mate_expr, message_expr=None):
    links = {
        "ListMessages": link("listChatMessages", "The conversation's messages.", {"path.user_id": mate_expr}),
        "SendMessage": link("sendChatMessage", "Write in it (`409 not_mates` unless we are mates).",
                            {"path.user_id": mate_expr}, request_body={"text": "Running ten minutes late"}),
        "MarkRead": link("markChatRead", "Move my read marker.", {"path.user_id": mate_expr}, request_body={"up_to": 1}),
        "Typing": link("chatTyping", "Say I am typing.", {"path.user_id": mate_expr}),
    }
    if message_expr:
        links["EditMessage"] = link("editChatMessage", "Edit it (the sender, within 15 minutes).",
                                    {"path.user_id": mate_expr, "path.message_id": message_expr},
                                    request_body={"text": "The east gate instead"})
        links["UnsendMessage"] = link("unsendChatMessage", "Unsend it (the sender).",
                                      {"path.user_id": mate_expr, "path.message_id": message_expr})
    return links
MESSAGE_ERRORS = {"403": err("Only the sender edits or unsends.", "not_sender"),
                  "404": err("No such message in our conversation.", "not_found")}
paths.update({
    "/v1/chats": {"get": operation("listChats", "My conversations, the one with the newest message first.",
        codes_503=READ_503, params=[LIMIT, CURSOR, MINPOS],
        answers={"200": ok("A page.", listof("Conversation"), links={
            **chat_links("$response.body#/items/0/user_id"),
            "NextPage": link("listChats", "The next page.", {"query.cursor": "$response.body#/next_cursor"})})})},
    "/v1/chats/{user_id}/messages": {
        "post": operation("sendChatMessage", "Send a message to a current mate.", params=[MATE, IDEM],
            description="`Idempotency-Key` is the app's own id for the message: a resend after a lost answer appends "
                        "nothing twice. At most 5 messages per second per user (burst 20).",
            request_body=body(ref("NewChatMessage")),
            answers={"201": ok("Sent.", ref("ChatMessage"), LOGPOS,
                               links=chat_links("$request.path.user_id", "$response.body#/message_id"))},
            errors={"404": err("Not a user id (not a UUID).", "not_found"),
                    "409": err("We are not mates (also when either blocked the other), or a request with this "
                               "Idempotency-Key is still running.", "not_mates", "idempotency_key_in_use")}),
        "get": operation("listChatMessages", "A conversation's messages: newest first, or with `after` oldest first.",
            codes_503=READ_503,
            params=[MATE, param("after", "query", {"type": "integer", "minimum": 0, "maximum": 2147483647},
                                "Only the messages after this seq, oldest first (catch-up after being offline)."),
                    LIMIT, CURSOR, MINPOS],
            answers={"200": ok("A page.", listof("ChatMessage"), links={
                **chat_links("$request.path.user_id", "$response.body#/items/0/message_id"),
                "NextPage": link("listChatMessages", "The next page.",
                                 {"path.user_id": "$request.path.user_id", "query.cursor": "$response.body#/next_cursor"})})},
            errors={"404": err("Someone I never had a conversation with (no hint that they exist).", "not_found")})},
    "/v1/chats/{user_id}/messages/{message_id}": {
        "patch": operation("editChatMessage", "Edit my own message within 15 minutes of sending it.",
            params=[MATE, MESSAGE, IDEM], request_body=body(ref("ChatEdit")),
            answers={"200": ok("Edited.", ref("ChatMessage"), LOGPOS)},
            errors={**MESSAGE_ERRORS,
                    "409": err("The message was unsent, we are no longer mates, or a request with this Idempotency-Key "
                               "is still running.", "message_unsent", "not_mates", "idempotency_key_in_use"),
                    "410": err("Past the 15 minutes.", "edit_window_passed")}),
        "delete": operation("unsendChatMessage", "Unsend my own message, for both of us.", params=[MATE, MESSAGE],
            description="Its text, earlier versions and photo become unreadable everywhere in the database, the log "
                        "included.",
            answers={"200": ok("Unsent (`unsent: true`).", ref("ChatMessage"), LOGPOS)},
            errors=MESSAGE_ERRORS)},
    "/v1/chats/{user_id}/read": {"put": operation("markChatRead", "Move my read marker (never backwards).",
        params=[MATE, IDEM], request_body=body(ref("ReadMarker")),
        answers={"204": no_content("Moved (or already further).")},
        errors={"404": err("Someone I never had a conversation with.", "not_found"),
                "409": err("A request with this Idempotency-Key is still running.", "idempotency_key_in_use")})},
    "/v1/chats/{user_id}/typing": {"post": operation("chatTyping", "I am typing: shown to the mate for 8 seconds; never stored.",
        params=[MATE, IDEM], answers={"204": no_content("Announced.")},
        errors={"404": err("Not a user id (not a UUID).", "not_found"),
                "409": err("We are not mates, or a request with this Idempotency-Key is still running.", "not_mates",
                           "idempotency_key_in_use")})},
    "/v1/chats/{user_id}/photos": {"post": operation("uploadChatPhoto", "A photo to send in this conversation.",
        params=[MATE], request_body=PHOTO_BODY,
        description="Cleaned and resized like a profile photo; send it with `photo_id` in a message.",
        answers={"201": ok("Stored.", ref("ChatPhoto"), links={
            "SendPhoto": link("sendChatMessage", "Send it.", {"path.user_id": "$request.path.user_id"},
                              request_body={"photo_id": "$response.body#/photo_id"}),
            "GetPhoto": link("getChatPhoto", "Fetch it.", {"path.user_id": "$request.path.user_id",
                                                           "path.photo_id": "$response.body#/photo_id"})})},
        errors={"400": err("Not an image, truncated, or too many pixels.", "invalid_image", "validation_failed"),
                "404": err("Not a user id (not a UUID).", "not_found"),
                "409": err("We are not mates.", "not_mates"),
                "413": err("Over 10 MiB.", "body_too_large"),
                "415": err("Not JPEG, PNG, HEIC or WebP.", "unsupported_image")})},
    "/v1/chats/{user_id}/photos/{photo_id}": {"get": operation("getChatPhoto", "A chat photo, only to the two of us.",
        params=[MATE, CHAT_PHOTO, IF_NONE_MATCH], answers=photo_answers("The photo (JPEG, at most 1080 px)."),
        errors={"404": err("No such photo in our conversation.", "not_found")})},
    "/v1/me/stream": {"get": operation("meStream",
        "Server-Sent Events: `notification`, `message`, `read` and `typing`; the app's one live connection.",
        description="`notification` (an inbox entry) and `message` (a message of any of my conversations, new, edited or "
                    "unsent, `user_id` naming the conversation) carry `id` = log position and resume after Last-Event-ID "
                    "without loss or duplicates; `read` (`{\"user_id\", \"up_to\"}`) and `typing` (`{\"user_id\"}`) are "
                    "live only. `viewing` names the conversation the app shows: no push for it to this device meanwhile. "
                    "Ends after 10 minutes; the same caps as the inbox stream.",
        params=[LAST_EVENT_ID, param("viewing", "query", UUID, "The mate whose conversation the app shows.")],
        answers={"200": {"description": "An event stream (ends after 10 minutes).",
                         "content": {"text/event-stream": {"schema": sse_event("notification", "message", "read", "typing")}}}},
        errors={"429": err("Past this user's request budget, or too many open streams (5 per user, 5000 per process).",
                           "rate_limited", headers={"Retry-After": {**RETRY_AFTER, "required": True}}),
                "503": STREAM_503})},
    "/v1/chats/{user_id}/photos/{photo_id}/thumbnail": {"get": operation("getChatPhotoThumbnail",
        "A chat photo's 200 x 200 thumbnail, only to the two of us.",
        params=[MATE, CHAT_PHOTO, IF_NONE_MATCH], answers=photo_answers("The thumbnail (JPEG)."),
        errors={"404": err("No such photo in our conversation.", "not_found")})},
})

for path, ops in paths.items():
    if path.startswith("/v1/admin/"):
        for o in ops.values(): o["security"] = [{"adminToken": []}]

doc = {"openapi": "3.1.0",
       "info": {"title": "SniffMeet API", "version": "1.0.0", "description":
                "The client contract of shared/API.md. Every error body is `{\"error\": {\"code\", \"message\", \"field\"?}}`. "
                "Past a client's request budget (per IP address before sign-in, per user after) any route but /healthz, "
                "/readyz and /metrics answers `429 rate_limited` with `Retry-After`."},
       "servers": [{"url": "/"}],
       "security": [{"bearerAuth": []}],
       "paths": paths,
       "components": {"schemas": schemas, "responses": dict(sorted(shared_responses.items())), "securitySchemes": {
           "bearerAuth": {"type": "http", "scheme": "bearer"},
           "adminToken": {"type": "http", "scheme": "bearer", "description": "SNIFFMEET_ADMIN_TOKEN"}}}}
out = os.path.join(os.path.dirname(__file__), "..", "Sources", "Gateway", "openapi.json")
with open(out, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", os.path.normpath(out))
