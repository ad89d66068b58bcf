"""The reward server's wire format and API key: spoken by the remote backend and by the server (serving/) alike."""
