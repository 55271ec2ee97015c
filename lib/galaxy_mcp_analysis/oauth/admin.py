"""``galaxy-mcp-analysis oauth list|revoke|purge-expired|drop-tables``: an admin's view of the sign-in's grants.

Runs beside the server on Galaxy's database (``--config galaxy.yml``, its ``database_connection``,
or ``--database-url``); a revocation holds at once in every worker (each request reads the tables).
Users are shown and chosen by email, through Galaxy's own ``User`` model.
"""

import time
from pathlib import Path

LIST_COLUMNS = ("grant_id", "user", "client_name", "client_id", "scopes", "created", "revoked")


def add_parser(commands) -> None:
    oauth = commands.add_parser("oauth", help="list or revoke the MCP clients users signed in (OAuth grants)")
    source = oauth.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", type=Path, help="galaxy.yml (its galaxy: database_connection)")
    source.add_argument("--database-url", help="Galaxy's database URL (SQLAlchemy form)")
    actions = oauth.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per grant: grant, user, client, scopes, created, revoked")
    listing.add_argument("--user", help="only this user's grants (email)")
    listing.add_argument("--all", action="store_true", help="include revoked grants")
    revoke = actions.add_parser("revoke", help="revoke grants (every token issued under them stops working)")
    revoke.add_argument("--grant", help="one grant id (from list)")
    revoke.add_argument("--user", help="every grant of this user (email)")
    revoke.add_argument("--client", help="every grant of this client id")
    actions.add_parser("purge-expired", help="delete expired codes and tokens, revoked grants' tokens and expired "
                       "grants (the server also does at start-up and every 10 minutes); keeps revoked grants' rows")
    actions.add_parser("drop-tables", help="remove the sign-in's four tables (switch sign-in off first)")


def database_url(args) -> str:
    if args.database_url:
        return args.database_url
    import yaml

    galaxy = (yaml.safe_load(args.config.read_text()) or {}).get("galaxy") or {}
    url = galaxy.get("database_connection")
    if not url:
        raise SystemExit(f"{args.config} sets no galaxy: database_connection; pass --database-url")
    return url


def run(args, out=print) -> int:
    from sqlalchemy import create_engine

    from galaxy_mcp_analysis.oauth.storage import SignInStore

    engine = create_engine(database_url(args))
    store = SignInStore(engine)
    if args.action == "drop-tables":
        store.drop_tables()
        out("dropped the tables mcp_oauth_token, mcp_oauth_code, mcp_oauth_grant, mcp_oauth_client")
        return 0
    store.create_tables()  # an empty listing on a Galaxy that never switched sign-in on
    if args.action == "purge-expired":
        counts = store.purge_expired()
        kept = counts.pop("revoked grants kept")
        out("removed " + ", ".join(f"{count} {kind}" for kind, count in counts.items())
            + f"; kept {kept} revoked grants (oauth list --all)")
        return 0
    emails = _Emails(engine)
    if args.action == "list":
        user_id = emails.user_id(args.user) if args.user else None
        out("\t".join(LIST_COLUMNS))
        for grant in store.grants(user_id=user_id, include_revoked=args.all):
            out("\t".join(str(value) for value in (
                grant["grant_id"], emails.email(grant["user_id"]), grant["client_name"], grant["client_id"],
                grant["scopes"], _when(grant["created_at"]), _when(grant["revoked_at"]))))
        return 0
    if not (args.grant or args.user or args.client):
        raise SystemExit("oauth revoke: name --grant, --user or --client")
    count = store.revoke(grant_id=args.grant, user_id=emails.user_id(args.user) if args.user else None,
                         client_id=args.client)
    out(f"revoked {count} grant(s)")
    return 0


def _when(timestamp) -> str:
    return "-" if timestamp is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


class _Emails:
    """Galaxy users by id and email, read through Galaxy's ORM model."""

    def __init__(self, engine):
        from sqlalchemy.orm import Session

        self.session = Session(engine)

    def email(self, user_id: int) -> str:
        from galaxy.model import User

        user = self.session.get(User, user_id)
        return user.email if user else f"(user {user_id}, gone)"

    def user_id(self, email: str) -> int:
        from galaxy.model import User
        from sqlalchemy import select

        user = self.session.scalars(select(User).where(User.email == email)).first()
        if user is None:
            raise SystemExit(f"no Galaxy user with the email {email}")
        return user.id
