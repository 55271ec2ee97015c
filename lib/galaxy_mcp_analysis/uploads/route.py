"""The route that takes an upload URL's bytes: ``PUT``/``POST /api/mcp-upload/{token}``, mounted on Galaxy's app.

In order, each step refusing before anything exists: the token's signature and expiry (core.upload_urls);
a declared Content-Length over the URL's cap; the token's user (still there, not deleted or purged) and its
history (still the user's to write, not deleted) through the lookup layer; the admin's policy as it stands now
(a rule denying create_upload_url to the user, made after the URL was, refuses it); the URL's one use (uploads.uses,
shared by every worker). Then the body is streamed to a file in Galaxy's upload store (``tus_upload_store``,
else ``new_file_path``: where Galaxy's resumable uploads land) in 1 MiB writes, never held whole; past the
cap it is cut off, the file removed, 413. Last, Galaxy's fetch of the staged file as that user
(operations ``fetch_staged_upload``): the upload job, Galaxy's datatype detection and quota as for any
upload. A refusal answers 4xx with ``{"error": message, "status": n}``; the upload, ok or refused, leaves an
audit line (``tool: create_upload_url``, ``phase: upload``) when the audit trail is on.
"""

import json
import logging
import os
import secrets
import time

import anyio
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.routing import Route

from galaxy_mcp_analysis.core.audit import audit_record
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.core.upload_urls import (
    METHODS,
    read_token,
    ROUTE_PREFIX,
    signing_key,
    too_large,
    UploadClaims,
    UploadRefused,
)
from galaxy_mcp_analysis.mcp.declaration import operations_for_user
from galaxy_mcp_analysis.mcp.session import in_own_session

log = logging.getLogger(__name__)

#: Bytes gathered before one write to the staged file (in a worker thread, off the event loop).
WRITE_CHUNK = 1 << 20
_STATUS_BY_CODE = {ErrorCode.VALIDATION_ERROR: 400, ErrorCode.NOT_FOUND: 404, ErrorCode.AUTHORIZATION_ERROR: 403,
                   ErrorCode.FORBIDDEN: 403, ErrorCode.CONFLICT: 409, ErrorCode.AUTHENTICATION_ERROR: 403}
#: The upload's own audit line: what it created, read by core.audit like a tool call's effects.
_UPLOAD_FACTS = ToolFacts("create_upload_url", "Upload through an upload URL", read_only=False, starts_jobs=True,
                          effects={"created": (("result.dataset_id", "dataset"),), "jobs": (("result.job_id", "job"),)})


class UploadRoute:
    def __init__(self, gx_app, uses, audit_sink=None, policy=None):
        self.gx_app = gx_app
        self.uses = uses
        self.audit_sink = audit_sink
        self.policy = policy  # mcp.policy_file.PolicySource, or None: no policy file
        self.key = signing_key(gx_app.config.id_secret)
        config = gx_app.config
        self.store = config.tus_upload_store or config.new_file_path

    def routes(self) -> list[Route]:
        return [Route(ROUTE_PREFIX + "{token}", self.endpoint, methods=list(METHODS))]

    async def endpoint(self, request):
        started = time.time()
        claims = None
        try:
            claims = read_token(self.key, request.path_params["token"], started)
            result = await self._upload(request, claims)
        except UploadRefused as refused:
            self._audit(claims, started, None, refused)
            return JSONResponse({"error": refused.message, "status": refused.status}, status_code=refused.status)
        self._audit(claims, started, result, None)
        return JSONResponse(result, status_code=201)

    async def _upload(self, request, claims: UploadClaims) -> dict:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > claims.max_bytes:
            raise too_large(int(declared), claims.max_bytes, used_up=False)
        await self._in_galaxy(self._check_target, claims)
        if not await anyio.to_thread.run_sync(self.uses.use, claims.nonce, claims.expires_at):
            raise UploadRefused(409, "This upload URL was used already; each URL takes one upload. "
                                     "Ask create_upload_url for a new one.")
        session_id = f"mcp_upload_{secrets.token_hex(16)}"  # Galaxy's session-id form: [\w-]+
        path = os.path.join(self.store, session_id)
        try:
            size = await self._receive(request, path, claims.max_bytes)
            result = await self._in_galaxy(self._fetch, claims, session_id)
        except BaseException:
            # Staged but not handed over: nothing else will remove it (a handed-over file is the job's).
            if os.path.exists(path):
                os.unlink(path)
            raise
        return {**result, "bytes": size}

    async def _receive(self, request, path: str, max_bytes: int) -> int:
        """Stream the body to ``path``; its size. Never more than WRITE_CHUNK bytes in memory."""
        size = 0
        buffer = bytearray()
        with open(path, "xb") as staged:
            try:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > max_bytes:
                        raise too_large(0, max_bytes, used_up=True)
                    buffer += chunk
                    if len(buffer) >= WRITE_CHUNK:
                        await anyio.to_thread.run_sync(staged.write, bytes(buffer))
                        buffer.clear()
            except ClientDisconnect:
                raise UploadRefused(400, "The upload was cut off before its end; nothing was created and the URL is "
                                         "used up. Ask create_upload_url for a new one.") from None
            if buffer:
                await anyio.to_thread.run_sync(staged.write, bytes(buffer))
        if size == 0:
            raise UploadRefused(400, "The upload's body is empty; send the file's bytes (curl -T <file>). "
                                     "Nothing was created; ask create_upload_url for a new URL.")
        return size

    async def _in_galaxy(self, function, *args):
        try:
            return await in_own_session(self.gx_app, function, *args)
        except AnalysisError as error:
            raise UploadRefused(_STATUS_BY_CODE.get(error.code, 500),
                                f"{error.message} Nothing was created. {error.suggestion}") from None
        except UploadRefused:
            raise
        except Exception as error:
            status = getattr(error, "status_code", None)
            if isinstance(status, int) and 400 <= status < 500:  # Galaxy's own refusal (quota, datatype, ...)
                raise UploadRefused(status, f"Galaxy refused the upload: {getattr(error, 'err_msg', error)}") from None
            log.exception("galaxy-mcp-analysis: an upload through an upload URL failed")
            raise UploadRefused(500, "The upload failed inside Galaxy; nothing usable was created. "
                                     "Try again with a new URL; if it fails again, tell the admin.") from None

    def _operations(self, claims: UploadClaims):
        """The token's user's operations manager; 403 if that account is gone, deleted or purged."""
        user_model = self.gx_app.model.User
        session = self.gx_app.model.session
        try:
            user = session.get(user_model, self.gx_app.security.decode_id(claims.user_id))
        except Exception:
            user = None
        if user is None or user.deleted or user.purged:
            raise UploadRefused(403, "The account this upload URL was made for no longer exists or was deleted; "
                                     "nothing was created.")
        return operations_for_user(self.gx_app, user)

    def _check_target(self, claims: UploadClaims) -> None:
        operations = self._operations(claims)
        self._check_policy(operations.trans.user)
        operations.history_to_upload_into(claims.history_id)

    def _check_policy(self, user) -> None:
        """The policy's tool rules for create_upload_url, judged again at the upload (rate limits are counted
        when the URL is made, not twice)."""
        from galaxy_mcp_analysis.mcp.caller import caller_of
        from galaxy_mcp_analysis.mcp.policy import refused

        policy = self.policy.current() if self.policy is not None else None  # an invalid file: FORBIDDEN
        if policy and policy.rules and (refusal := policy.check_tool(caller_of(self.gx_app, user), _UPLOAD_FACTS)):
            raise refused(refusal)

    def _fetch(self, claims: UploadClaims, session_id: str) -> dict:
        return self._operations(claims).fetch_staged_upload(claims, session_id)

    def _audit(self, claims: UploadClaims | None, started: float, result, refused: UploadRefused | None) -> None:
        if self.audit_sink is None:
            return
        try:
            error = None
            if refused is not None:
                error = AnalysisError(ErrorCode.VALIDATION_ERROR, refused.message, "")
                error.code = f"HTTP_{refused.status}"
            arguments = {} if claims is None else {
                "history_id": claims.history_id, "name": claims.name, "file_type": claims.file_type,
                "dbkey": claims.dbkey, "max_bytes": claims.max_bytes}
            record = audit_record(tool=_UPLOAD_FACTS, arguments=arguments, error=error, result=result,
                                  started=started, duration_seconds=time.time() - started, request_id=None,
                                  user_id=None if claims is None else claims.user_id)
            record.update(phase="upload", pid=os.getpid(), bytes=(result or {}).get("bytes"))
            self.audit_sink.write_line(json.dumps(record, separators=(",", ":"), default=str))
        except Exception:
            log.exception("galaxy-mcp-analysis: could not write the audit line of an upload")
