#!/usr/bin/env bash
# Run once by the postgres image on an empty volume (/docker-entrypoint-initdb.d), as the
# image's superuser. Two logins instead of one superuser for the app:
#   sniffmeet_owner  owns the database and runs migrations (MIGRATION_DATABASE_URL);
#   sniffmeet_app    member of sniffmeet_runtime, which `serve` works as (DATABASE_URL).
# Migration 0006 grants sniffmeet_runtime SELECT and INSERT on the log and ordinary rights on
# everything else. Passwords come from the compose file (SNIFFMEET_OWNER_PASSWORD,
# SNIFFMEET_APP_PASSWORD), passed as psql variables so that they are quoted by psql.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
     -v owner_password="$SNIFFMEET_OWNER_PASSWORD" -v app_password="$SNIFFMEET_APP_PASSWORD" <<'SQL'
CREATE ROLE sniffmeet_runtime NOLOGIN;
CREATE ROLE sniffmeet_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE sniffmeet_app LOGIN PASSWORD :'app_password' IN ROLE sniffmeet_runtime;
CREATE DATABASE sniffmeet OWNER sniffmeet_owner;
SQL
