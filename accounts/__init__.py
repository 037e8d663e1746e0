"""Staff accounts: roles on users, API tokens, two-factor login, lockout, idle logout."""
