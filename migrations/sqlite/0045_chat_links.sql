-- Chat accounts linked to people (core::chat): an action pressed or typed in chat acts as the
-- person its account is linked to. An account links to one person; a person may link several.
CREATE TABLE chat_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    account TEXT NOT NULL,
    shown TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    UNIQUE (platform, account)
);
CREATE INDEX chat_links_user ON chat_links(user_id);
-- One live link code per person, kept by its hash until it is used or expires; no two live
-- codes of different people are alike (checked when one is made).
CREATE TABLE chat_link_codes (
    user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX chat_link_codes_hash ON chat_link_codes(code_hash);
