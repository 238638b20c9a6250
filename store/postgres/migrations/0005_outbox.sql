-- Version 5: the webhook outbox and the delivery history.
--
-- outbox holds the deliveries still owed, ordered by the time their next
-- attempt is due (due_ns), each entry the webhook.OutboxEntry's JSON (its
-- due time and attempt count included). A node delivering an entry holds
-- a lease on it: lease_owner names the node (random per opened store),
-- lease_until is when the lease lapses (the database's clock, so that
-- nodes' clocks need not agree). Entries are claimed with FOR UPDATE SKIP
-- LOCKED, never one that another node's live lease holds; a lapsed lease
-- is taken over.
CREATE TABLE outbox (
	delivery_id text COLLATE "C" PRIMARY KEY,
	due_ns      bigint NOT NULL,
	webhook_id  text COLLATE "C" NOT NULL,
	entry       jsonb NOT NULL,
	lease_owner text COLLATE "C",
	lease_until timestamptz
);
CREATE INDEX outbox_due ON outbox (due_ns, delivery_id);

-- deliveries: one history row per delivery, the webhook.DeliveryRecord's
-- JSON with its attempt log, dead letters included; removed with its
-- webhook.
CREATE TABLE deliveries (
	delivery_id text COLLATE "C" PRIMARY KEY,
	webhook_id  text COLLATE "C" NOT NULL,
	created_ns  bigint NOT NULL,
	record      jsonb NOT NULL
);
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, created_ns, delivery_id);
