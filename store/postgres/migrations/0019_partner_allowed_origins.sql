-- Version 19: the browser origins whose pages may call the API with a
-- partner's key (account.Partner.AllowedOrigins, exact scheme://host[:port]
-- values as account.CheckAllowedOrigins normalizes them); none, the empty
-- array, means no page may, which is what every partner had before.
ALTER TABLE partners ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}';
