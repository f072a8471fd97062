"""People and permissions: users, passwords, personal access tokens, roles, and the one
permission policy. No HTTP here; the api and the ui call into it."""
