"""A Google Drive v3 emulator on loopback: the API, the OAuth consent page and token endpoint, ID tokens."""
