"""The storage layer: people and web sessions in one SQL database (SQLAlchemy 2, async), its schema
kept by Alembic migrations that run at start. `urls` is import-light (the configuration checks a
`webhost.database` URL with it); `db` holds the engine and the queries."""
