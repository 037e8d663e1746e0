"""Running the site: backups and restore, health, the access audit and its report."""
