"""The emulator as Google's OpenID Connect provider: ID tokens for the account that consents.

Signed RS256 with a key made when the emulator starts, carrying the claims a relying party must
check (`iss`, `aud`, `exp`, `nonce` when one was sent), so sign-in is tested end to end offline.
"""

from __future__ import annotations

import time
from functools import cache
from typing import TYPE_CHECKING

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

if TYPE_CHECKING:
    from emulators.drive.state import DriveState, OAuthGrant

ID_TOKEN_SECONDS = 3600
KEY_ID = "emu-key-1"


@cache
def _signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def id_token_sign(state: DriveState, *, grant: OAuthGrant, issuer: str) -> str:
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": issuer,
        "aud": grant.client_id,
        "azp": grant.client_id,
        "sub": state.account.sub,
        "email": state.account.email,
        "email_verified": True,
        "name": state.account.name,
        "iat": now,
        "exp": now + ID_TOKEN_SECONDS,
    }
    if grant.nonce:
        claims["nonce"] = grant.nonce
    claims.update(state.id_token_overrides)
    return jwt.encode(claims, _signing_key(), algorithm="RS256", headers={"kid": KEY_ID})
